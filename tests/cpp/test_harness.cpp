// Tests of the harness's host-side logic: the command line, the error
// metric, the timing summary, the SHA-256 and the JSON writer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ladder/accuracy.hpp>
#include <ladder/json.hpp>
#include <ladder/options.hpp>
#include <ladder/stats.hpp>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

ladder::ParseResult parse(std::vector<const char*> args) {
  args.insert(args.begin(), "chapter");
  return ladder::parse_options(static_cast<int>(args.size()), args.data());
}

TEST(Options, DefaultsAreTheBooksMethod) {
  const auto r = parse({});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.options.trials, 7);
  EXPECT_EQ(r.options.reps, 5);
  EXPECT_GE(r.options.warmup_ms, 300.0);
  ASSERT_EQ(r.options.sizes.size(), 1u);
  EXPECT_EQ(r.options.sizes[0].M, 4096);
}

TEST(Options, SquareAndRectangularSizes) {
  const auto r = parse({"--sizes", "256", "127x255x63", "--beta", "0.5", "--check-only"});
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.options.sizes.size(), 2u);
  EXPECT_EQ(r.options.sizes[0].N, 256);
  EXPECT_EQ(r.options.sizes[1].M, 127);
  EXPECT_EQ(r.options.sizes[1].N, 255);
  EXPECT_EQ(r.options.sizes[1].K, 63);
  EXPECT_FLOAT_EQ(r.options.beta, 0.5f);
  EXPECT_TRUE(r.options.check_only);
}

TEST(Options, BadInputGetsOneSentence) {
  const std::vector<std::vector<const char*>> bad = {{"--sizes", "0"},
                                                     {"--sizes", "-4"},
                                                     {"--sizes", "abc"},
                                                     {"--sizes", "10x10"},
                                                     {"--sizes", "1x2x3x4"},
                                                     {"--sizes", "12abc"},
                                                     {"--sizes"},
                                                     {"--trials", "0"},
                                                     {"--reps", "x"},
                                                     {"--alpha", "nan"},
                                                     {"--beta", "1e999"},
                                                     {"--alpha"},
                                                     {"--device", "-1"},
                                                     {"--warmup-ms", "-5"},
                                                     {"--frobnicate"},
                                                     {"--sizes", "99999999999"}};
  for (const auto& args : bad) {
    const auto r = parse(args);
    std::string joined;
    for (const char* a : args) joined += std::string(a) + " ";
    EXPECT_FALSE(r.error.empty()) << "accepted: " << joined;
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << "more than one line: " << r.error;
  }
}

TEST(Options, IndexRangeRefusesMatricesPast32BitIndexing) {
  EXPECT_EQ(ladder::check_index_range({8192, 8192, 8192}), "");
  EXPECT_EQ(ladder::check_index_range({46340, 46340, 1}), "");  // 46340^2 < 2^31
  EXPECT_NE(ladder::check_index_range({46341, 46341, 1}), "");
  EXPECT_NE(ladder::check_index_range({1, 70000, 70000}), "");  // B is K x N
}

TEST(Accuracy, ToleranceGrowsWithK) {
  EXPECT_LT(ladder::tolerance_for_k(64), ladder::tolerance_for_k(4096));
  // FP32 rounding at K = 4096 is far below the tolerance ...
  EXPECT_GT(ladder::tolerance_for_k(4096), 64 * ladder::kFp32UnitRoundoff);
  // ... and TF32's unit roundoff (2^-11) is far above it, even at K = 8192.
  EXPECT_LT(ladder::tolerance_for_k(8192), std::ldexp(1.0, -11) / 2);
}

TEST(Accuracy, IdenticalOutputIsCorrect) {
  const std::vector<float> ref = {1.0f, -2.0f, 3.0f, 0.5f};
  const auto a = ladder::compare(ref.data(), ref.data(), ref.size(), 128);
  EXPECT_TRUE(a.correct);
  EXPECT_EQ(a.max_rel_err, 0.0);
  EXPECT_EQ(a.rel_norm_err, 0.0);
}

TEST(Accuracy, NanAndInfAlwaysFail) {
  const std::vector<float> ref = {1.0f, 2.0f, 3.0f};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    std::vector<float> out = ref;
    out[1] = bad;
    const auto a = ladder::compare(out.data(), ref.data(), out.size(), 4096);
    EXPECT_FALSE(a.correct);
    EXPECT_EQ(a.bad_values, 1u);
  }
  // An output that is all NaN (a kernel that wrote nothing) fails too.
  const std::vector<float> nan(3, std::numeric_limits<float>::quiet_NaN());
  EXPECT_FALSE(ladder::compare(nan.data(), ref.data(), nan.size(), 1).correct);
}

TEST(Accuracy, ToleranceEdge) {
  // A relative error just under the tolerance passes, just over it fails.
  const int K = 1024;
  const double tol = ladder::tolerance_for_k(K);
  const std::vector<double> ref = {1.0, 1.0, 1.0, 1.0};
  std::vector<double> under = ref, over = ref;
  under[0] = 1.0 + 0.9 * tol;
  over[0] = 1.0 + 1.1 * tol;
  EXPECT_TRUE(ladder::compare(under.data(), ref.data(), ref.size(), K).correct);
  EXPECT_FALSE(ladder::compare(over.data(), ref.data(), ref.size(), K).correct);
}

TEST(Accuracy, TheNormErrorIsJudgedToo) {
  // Every element within the tolerance, the whole output not: reference
  // {0, 1} (rms sqrt(1/2)), each element off by e times its scale
  // max(|ref|, rms): e * sqrt(1/2) and e. The largest element error is e;
  // the norm error is sqrt(e^2 / 2 + e^2) / 1 = e * sqrt(1.5), about 1.22 e.
  // With e = tol / 1.1 the first passes and the second fails.
  const int K = 1024;
  const double tol = ladder::tolerance_for_k(K);
  const double e = tol / 1.1;
  const std::vector<double> ref = {0.0, 1.0};
  const std::vector<double> out = {e * std::sqrt(0.5), 1.0 + e};
  const auto a = ladder::compare(out.data(), ref.data(), ref.size(), K);
  EXPECT_NEAR(a.max_rel_err, e, 1e-12);
  EXPECT_NEAR(a.rel_norm_err, e * std::sqrt(1.5), 1e-12);
  EXPECT_LE(a.max_rel_err, a.tolerance);
  EXPECT_GT(a.rel_norm_err, a.tolerance);
  EXPECT_FALSE(a.correct);
}

TEST(Accuracy, NearZeroReferenceIsMeasuredAgainstTheRms) {
  // One reference element cancelled to almost zero: an absolute error that
  // is tiny next to the matrix's size must not read as a huge relative error.
  const std::vector<double> ref = {1.0, -1.0, 1e-12, 1.0};
  std::vector<double> out = ref;
  out[2] = 1e-9;
  const auto a = ladder::compare(out.data(), ref.data(), ref.size(), 4096);
  EXPECT_TRUE(a.correct);
  EXPECT_LT(a.max_rel_err, 1e-8);
}

TEST(Accuracy, Tf32RoundedInputsFail) {
  // Products of inputs rounded to TF32 (10 explicit mantissa bits) must fail
  // against the FP32 product: the check would catch a reference or kernel
  // that quietly used tensor-core TF32.
  const int K = 4096, n = 64;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto tf32 = [](float x) {
    const int shift = 13;  // 23 - 10 mantissa bits dropped
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    bits = (bits + (1u << (shift - 1))) & ~((1u << shift) - 1);
    std::memcpy(&x, &bits, 4);
    return x;
  };
  std::vector<double> exact(n), rounded(n);
  for (int i = 0; i < n; ++i) {
    double e = 0, r = 0;
    for (int k = 0; k < K; ++k) {
      const float a = u(rng), b = u(rng);
      e += double(a) * b;
      r += double(tf32(a)) * tf32(b);
    }
    exact[i] = e;
    rounded[i] = r;
  }
  EXPECT_FALSE(ladder::compare(rounded.data(), exact.data(), n, K).correct);
}

TEST(Stats, MedianMinMax) {
  const auto odd = ladder::summarize({5, 1, 3, 2, 4, 7, 6});
  EXPECT_EQ(odd.median, 4);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 7);
  EXPECT_EQ(ladder::summarize({1, 2, 3, 10}).median, 2.5);
  EXPECT_EQ(ladder::summarize({}).median, 0);
}

TEST(Stats, Gflops) {
  // 1000^3 multiply-adds are 2e9 operations; in 1 ms that is 2e12 per second,
  // 2000 GFLOP/s; in 4 ms, 500.
  EXPECT_DOUBLE_EQ(ladder::gflops(1000, 1000, 1000, 1.0), 2000.0);
  EXPECT_DOUBLE_EQ(ladder::gflops(1000, 1000, 1000, 4.0), 500.0);
  // Not square: 10 x 20 x 30 is 6000 multiply-adds, 12000 operations; in a
  // microsecond, 1.2e10 per second: 12 GFLOP/s. M, N and K each count once.
  EXPECT_DOUBLE_EQ(ladder::gflops(10, 20, 30, 0.001), 12.0);
  EXPECT_DOUBLE_EQ(ladder::gflops(30, 10, 20, 0.001), 12.0);
  // 4096^3 = 2^36 multiply-adds, past the range of int: 2^37 operations in
  // 2 ms are 2^37 / 2e6 GFLOP/s = 68719.476736.
  EXPECT_DOUBLE_EQ(ladder::gflops(4096, 4096, 4096, 2.0), 68719.476736);
  // No time measured, no rate.
  EXPECT_EQ(ladder::gflops(1, 1, 1, 0), 0);
}

TEST(Json, EscapesAndNonFiniteNumbers) {
  ladder::Json j = ladder::Json::object();
  j.set("name", "a \"quoted\"\nline").set("nan", std::nan("")).set("n", 3);
  const std::string s = j.dump();
  EXPECT_NE(s.find("\"a \\\"quoted\\\"\\u000aline\""), std::string::npos) << s;
  EXPECT_NE(s.find("\"nan\": null"), std::string::npos) << s;
  EXPECT_NE(s.find("\"n\": 3"), std::string::npos) << s;
}

}  // namespace
