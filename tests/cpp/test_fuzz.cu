// The differential fuzzer's own parts, on the CPU: what it draws, and the
// class its reference gives an element that a special value reaches. A
// fuzzer with a wrong oracle or a narrow draw passes wrong kernels, so both
// are checked here, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <ladder/fuzz.cuh>
#include <vector>

namespace {

using ladder::fuzz::draw;
using ladder::fuzz::Problem;
using ladder::fuzz::special_class;

TEST(Fuzz, AProblemIsAFunctionOfItsSeedAndIndex) {
  const Problem a = draw(7, 3, true), b = draw(7, 3, true), c = draw(7, 4, true);
  EXPECT_EQ(ladder::fuzz::describe(a), ladder::fuzz::describe(b));
  EXPECT_NE(ladder::fuzz::describe(a), ladder::fuzz::describe(c));
}

TEST(Fuzz, EveryDrawStaysWithinItsRanges) {
  int low_payload_nans = 0, infinities = 0, offset = 0, scaled = 0, long_dims = 0, tiny = 0,
      tf32_zeros = 0;
  for (int i = 0; i < 2000; ++i) {
    const Problem p = draw(1, i, /*offsets=*/i % 2 == 0);
    for (int d : {p.M, p.N, p.K}) {
      EXPECT_GE(d, 1);
      EXPECT_LE(d, ladder::fuzz::kLongDim + 127);  // rounded up to whole 128 tiles at most
      long_dims += d > 700;
    }
    EXPECT_LE(double(p.M) * p.N * p.K, ladder::fuzz::kMaxFma);
    for (int m = 0; m < 3; ++m) {
      EXPECT_TRUE(p.offset[m] >= 0 && p.offset[m] <= 3);
      if (i % 2 == 1) EXPECT_EQ(p.offset[m], 0) << "offsets were not asked for";
      offset += p.offset[m] > 0;
    }
    EXPECT_LE(std::abs(p.scale[0]), ladder::fuzz::kMaxScale);
    EXPECT_LE(std::abs(p.scale[1]), ladder::fuzz::kMaxScale);
    EXPECT_LE(std::abs(p.scale[0] + p.scale[1]), ladder::fuzz::kMaxProductScale);
    scaled += p.scale[0] != 0;
    tiny += p.scale[0] < -113 || p.scale[1] < -113;  // where unscaled small parts lose bits
    if (p.alpha == 0.0f) EXPECT_TRUE(p.specials.empty()) << "alpha = 0 leaves the product out";
    for (const ladder::fuzz::Special& s : p.specials) {
      const int rows = s.matrix == 1 ? p.K : p.M, cols = s.matrix == 0 ? p.K : p.N;
      EXPECT_TRUE(s.row >= 0 && s.row < rows && s.col >= 0 && s.col < cols);
      if (s.matrix == 2) EXPECT_NE(p.beta, 0.0f) << "C is not read when beta = 0";
      const uint32_t bits = ladder::fuzz::to_bits(s.value);
      low_payload_nans += std::isnan(s.value) && (bits & 0x007fe000u) == 0;
      infinities += std::isinf(s.value);
      tf32_zeros += s.value != 0.0f && std::fabs(s.value) < 0x1p-137f;
    }
  }
  // The draw reaches what it is for: NaNs that TF32 would turn into
  // infinities, infinities, offsets, scales and long dimensions.
  EXPECT_GT(low_payload_nans, 100);
  EXPECT_GT(infinities, 100);
  EXPECT_GT(tf32_zeros, 20);  // beside an infinity: Inf in FP32, NaN in TF32
  EXPECT_GT(offset, 300);
  EXPECT_GT(scaled, 300);
  EXPECT_GT(tiny, 10);
  EXPECT_GT(long_dims, 100);
}

// A 1 x 1 x K product: alpha * sum_k A[k] B[k] + beta * C.
double class_of(std::vector<float> A, std::vector<float> B, float alpha, float beta, float c) {
  Problem p;
  p.M = 1;
  p.N = 1;
  p.K = static_cast<int>(A.size());
  p.alpha = alpha;
  p.beta = beta;
  std::vector<int> ks;
  for (int k = 0; k < p.K; ++k)
    if (!std::isfinite(A[k]) || !std::isfinite(B[k])) ks.push_back(k);
  return special_class(p, A, B, {c}, 0, 0, ks);
}

TEST(Fuzz, TheOracleClassesAsFp32ArithmeticDoes) {
  const float inf = INFINITY, nan_low = ladder::fuzz::from_bits(0x7f800001u);
  EXPECT_TRUE(std::isnan(class_of({inf, 1.0f}, {0.0f, 1.0f}, 1.0f, 0.0f, 0.0f)));  // 0 * Inf
  EXPECT_TRUE(std::isnan(class_of({inf, -inf}, {1.0f, 1.0f}, 1.0f, 0.0f, 0.0f)));  // Inf - Inf
  EXPECT_TRUE(std::isnan(class_of({nan_low, 1.0f}, {1.0f, 1.0f}, 1.0f, 0.0f, 0.0f)));
  EXPECT_EQ(class_of({inf, 1.0f}, {-2.0f, 1.0f}, 1.0f, 0.0f, 0.0f), -inf);
  EXPECT_EQ(class_of({inf, 1.0f}, {-2.0f, 1.0f}, -0.5f, 0.0f, 0.0f), inf);  // alpha's sign
  EXPECT_EQ(class_of({inf, inf}, {1.0f, 3.0f}, 1.0f, 0.0f, 0.0f), inf);
  EXPECT_EQ(class_of({inf, 1.0f}, {0x1p-140f, 1.0f}, 1.0f, 0.0f, 0.0f), inf) << "TF32 gives NaN";
  // beta * C: read only when beta != 0, and an infinity there meets the sum's.
  EXPECT_TRUE(std::isnan(class_of({1.0f}, {1.0f}, 1.0f, 2.0f, NAN)));
  EXPECT_EQ(class_of({1.0f}, {1.0f}, 1.0f, 0.0f, NAN), 0.0) << "beta = 0: C is not read";
  EXPECT_EQ(class_of({1.0f}, {1.0f}, 1.0f, -1.0f, inf), -inf);
  EXPECT_TRUE(std::isnan(class_of({inf}, {1.0f}, 1.0f, 1.0f, -inf)));
  EXPECT_EQ(class_of({inf}, {1.0f}, 1.0f, 1.0f, inf), inf);
  EXPECT_EQ(class_of({1.0f, 2.0f}, {3.0f, 4.0f}, 1.0f, 1.0f, 5.0f), 0.0) << "finite: no class";
}

}  // namespace

// The fuzzer's command line goes through the book's one parser: what a
// failure prints to repeat a problem (a 64-bit seed among them) reads back.
TEST(Fuzz, TheCommandLineThatRepeatsAProblemReadsBack) {
  const char* argv[] = {"fuzz-17-3xtf32-wgmma",
                        "--variant",
                        "truncated",
                        "--seed",
                        "18446744073709551615",
                        "--problem",
                        "17",
                        "--aligned",
                        "--json",
                        "out.json"};
  ladder::fuzz::Options o;
  bool help = false;
  EXPECT_EQ(ladder::fuzz::parse_options(10, argv, o, help), "");
  EXPECT_FALSE(help);
  EXPECT_EQ(o.variant, "truncated");
  ASSERT_EQ(o.seeds.size(), 1u);
  EXPECT_EQ(o.seeds[0], 18446744073709551615ull);
  EXPECT_EQ(o.only, 17);
  EXPECT_FALSE(o.offsets);
  EXPECT_EQ(o.json_path, "out.json");
}

TEST(Fuzz, ABadCommandLineSaysWhatIsWrong) {
  for (std::vector<const char*> args :
       std::vector<std::vector<const char*>>{{"fuzz", "--seed", "-1"},
                                             {"fuzz", "--seed", "18446744073709551616"},
                                             {"fuzz", "--problems", "0"},
                                             {"fuzz", "--problem"},
                                             {"fuzz", "--offsets"}}) {
    ladder::fuzz::Options o;
    bool help = false;
    EXPECT_NE(ladder::fuzz::parse_options(static_cast<int>(args.size()), args.data(), o, help), "")
        << args[1];
  }
  const char* argv[] = {"fuzz", "--help"};
  ladder::fuzz::Options o;
  bool help = false;
  EXPECT_EQ(ladder::fuzz::parse_options(2, argv, o, help), "");
  EXPECT_TRUE(help);
}
