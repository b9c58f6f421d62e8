// The check that every chapter's emulation test makes: each variant that the
// chapter's own chapter() lists, launched through its own launcher on the
// CPU emulation (cuda_emulation.hpp), computes C = alpha * A * B + beta * C
// as an FP64 product on the CPU does, element by element, within the
// tolerance of the arithmetic the variant promises (FP32's or TF32's).
//
// Include after the chapter's kernel header.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ladder/accuracy.hpp>
#include <ladder/chapter.hpp>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace emulated {

/// One product to run: M x N x K.
struct Size {
  int M, N, K;
};

/// One way to call it: alpha, beta, and whether the matrices start one float
/// past a 16-byte boundary (the unaligned path of chapter 12).
struct Call {
  float alpha;
  float beta;  ///< 0: C holds NaN before the launch, and must not be read
  bool misaligned = false;
};

/// alpha and beta non-trivial; then beta = 0 with C full of NaN.
inline const std::vector<Call> kCalls = {{1.25f, -0.75f}, {-0.5f, 0.0f}};

/// The guards' value: a NaN with a payload of its own. A kernel that reads
/// past a matrix reads NaN, which reaches C; one that writes past C changes it.
inline float guard_value() {
  const uint32_t bits = 0x7fc0beefu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A matrix of n floats between two guards, each as long as the matrix
/// (64 floats at least): a wrong index that stays within a matrix's size of
/// it (rows and columns swapped, say) lands in a guard, where it shows,
/// instead of in other memory, where it might crash the test or pass unseen.
class Guarded {
 public:
  Guarded(size_t n, bool misaligned)
      // A multiple of 4 floats, so that data() stays 16-byte aligned.
      : guard_((std::max<size_t>(n, 64) + 3) / 4 * 4),
        offset_(misaligned ? 1 : 0),
        storage_(n + 2 * guard_ + offset_, guard_value()),
        n_(n) {}
  float* data() { return storage_.data() + guard_ + offset_; }
  size_t size() const { return n_; }
  /// True when every float outside the matrix still holds guard_value().
  bool guards_intact() const {
    const float g = guard_value();
    for (size_t i = 0; i < storage_.size(); ++i) {
      if (i >= guard_ + offset_ && i < guard_ + offset_ + n_) continue;
      if (std::memcmp(&storage_[i], &g, sizeof g) != 0) return false;
    }
    return true;
  }

 private:
  size_t guard_;
  size_t offset_;
  std::vector<float> storage_;
  size_t n_;
};

/// The first element (row, col) of out that is NaN or differs from ref by
/// more than `tolerance` relatively, for the failure message.
inline std::string first_wrong(const float* out, const std::vector<double>& ref, int N,
                               double tolerance) {
  double sq = 0;
  for (double r : ref) sq += r * r;
  const double rms = std::sqrt(sq / double(ref.size()));
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(out[i]) - ref[i]);
    if (!(d <= tolerance * std::fmax(std::fabs(ref[i]), rms))) {
      std::ostringstream s;
      s << "C(" << i / N << ", " << i % N << ") = " << out[i] << ", expected " << ref[i];
      return s.str();
    }
  }
  return "none";
}

/// Runs `variant` on the CPU emulation: C = alpha * A * B + beta * C for an
/// M x N x K product, with the workspace it asks for as the runner gives it
/// (16-byte aligned, between guards, full of NaN).
inline void launch(const ladder::Variant& variant, int M, int N, int K, float alpha, Guarded& A,
                   Guarded& B, float beta, Guarded& C) {
  const long long workspace = ladder::workspace_floats(variant, M, N, K);
  Guarded W(size_t(workspace), false);
  const ladder::Gemm g{M, N, K, alpha, A.data(), B.data(), beta, C.data(), W.data(), workspace};
  EXPECT_NO_THROW(variant.launch(g, nullptr));
}

/// Expects every element of C (M x N) to be right: `wrong(m, n, c)` says
/// what is wrong with c = C(m, n), or returns "" where it is right. The
/// failure counts the wrong elements and describes the first.
template <class Wrong>
void expect_every_element(Guarded& C, int M, int N, Wrong wrong) {
  int count = 0;
  std::string first;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      const float c = C.data()[size_t(m) * N + n];
      const std::string why = wrong(m, n, c);
      if (why.empty() || count++ > 0) continue;
      std::ostringstream s;
      s << "C(" << m << ", " << n << ") = " << c << ", " << why;
      first = s.str();
    }
  EXPECT_EQ(count, 0) << "first: " << first;
}

/// Runs `variant` on the CPU emulation for `size` and `call`, with inputs
/// drawn from `seed`, and checks every element of C against an FP64 product.
inline void check(const ladder::Variant& variant, Size size, Call call, uint32_t seed) {
  const int M = size.M, N = size.N, K = size.K;
  SCOPED_TRACE("variant " + variant.name + ", " + std::to_string(M) + " x " + std::to_string(N) +
               " x " + std::to_string(K) + ", alpha " + std::to_string(call.alpha) + ", beta " +
               std::to_string(call.beta) + (call.misaligned ? ", misaligned" : ""));
  ASSERT_EQ(variant.accepts(M, N, K), "") << "the test must use a size the variant accepts";

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Guarded A(size_t(M) * K, call.misaligned), B(size_t(K) * N, call.misaligned),
      C(size_t(M) * N, call.misaligned);
  for (size_t i = 0; i < A.size(); ++i) A.data()[i] = uniform(rng);
  for (size_t i = 0; i < B.size(); ++i) B.data()[i] = uniform(rng);
  for (size_t i = 0; i < C.size(); ++i) {
    C.data()[i] = call.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : uniform(rng);
  }
  const std::vector<float> A0(A.data(), A.data() + A.size()), B0(B.data(), B.data() + B.size());

  // The reference: FP64, plain loops, beta * C only where beta is not 0 (BLAS).
  std::vector<double> ref(size_t(M) * N);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double sum = 0;
      for (int k = 0; k < K; ++k) {
        sum += double(A0[size_t(m) * K + k]) * double(B0[size_t(k) * N + n]);
      }
      const size_t i = size_t(m) * N + n;
      ref[i] =
          double(call.alpha) * sum + (call.beta == 0.0f ? 0.0 : double(call.beta) * C.data()[i]);
    }
  }

  // The scratch memory the variant asks for, as the runner gives it: 16-byte
  // aligned, between guards, and full of NaN, so that a launcher that reads
  // what it did not write shows it.
  const long long workspace = ladder::workspace_floats(variant, M, N, K);
  Guarded W(size_t(workspace), false);
  const ladder::Gemm g{M,        N,         K,        call.alpha, A.data(),
                       B.data(), call.beta, C.data(), W.data(),   workspace};
  ASSERT_NO_THROW(variant.launch(g, nullptr));

  // FP32's tolerance, or TF32's for a variant that promises only that.
  const ladder::Accuracy a =
      ladder::compare_within(C.data(), ref.data(), ref.size(), ladder::tolerance_of(variant, K));
  EXPECT_TRUE(a.correct) << "max relative error " << a.max_rel_err << ", norm error "
                         << a.rel_norm_err << " (tolerance " << a.tolerance << "), " << a.bad_values
                         << " NaN or Inf; first wrong element: "
                         << first_wrong(C.data(), ref, N, a.tolerance);
  EXPECT_TRUE(C.guards_intact()) << "the kernel wrote outside C";
  EXPECT_TRUE(A.guards_intact() && B.guards_intact()) << "the kernel wrote outside A or B";
  EXPECT_TRUE(W.guards_intact()) << "the launcher wrote outside its workspace";
  EXPECT_TRUE(std::equal(A0.begin(), A0.end(), A.data()) &&
              std::equal(B0.begin(), B0.end(), B.data()))
      << "the kernel changed A or B";
}

/// Runs `variant` on `size` with two NaNs whose payloads lie only in the low
/// 13 bits, which TF32 drops: 0x7f800001 in A's row `row` and 0xff801fff in
/// B's column `col`. Every element of C's row `row` and column `col` must
/// be NaN, as FP32 arithmetic makes it, and every other element finite. A
/// kernel that lets the tensor cores read such a NaN as it is reads an
/// infinity, and gives Inf where NaN belongs.
inline void check_nan_payloads(const ladder::Variant& variant, Size size) {
  const int M = size.M, N = size.N, K = size.K, row = M / 3, col = N / 2;
  SCOPED_TRACE("variant " + variant.name + ", NaNs with low payloads");
  ASSERT_EQ(variant.accepts(M, N, K), "");
  std::mt19937 rng(34);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Guarded A(size_t(M) * K, false), B(size_t(K) * N, false), C(size_t(M) * N, false);
  for (size_t i = 0; i < A.size(); ++i) A.data()[i] = uniform(rng);
  for (size_t i = 0; i < B.size(); ++i) B.data()[i] = uniform(rng);
  for (size_t i = 0; i < C.size(); ++i) C.data()[i] = uniform(rng);
  const auto nan_of = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  A.data()[size_t(row) * K + K / 2] = nan_of(0x7f800001u);
  B.data()[size_t(K / 3) * N + col] = nan_of(0xff801fffu);
  launch(variant, M, N, K, 0.75f, A, B, 0.5f, C);
  expect_every_element(C, M, N, [&](int m, int n, float c) -> std::string {
    const bool want_nan = m == row || n == col;
    if (want_nan ? std::isnan(c) : std::isfinite(c)) return "";
    return want_nan ? "expected NaN" : "expected finite";
  });
}

/// Values whose class rounding to TF32 changes, each where FP32 gives one
/// answer for certain: in row `m`, A holds an infinity at k = 0 and B's
/// column `n` a value of 2^-140 there (below TF32's 2^-137, so TF32 rounds it
/// to 0 and infinity times it to NaN; FP32 gives an infinity); in row `m + 1`,
/// A holds FLT_MAX (TF32 rounds it to infinity) and the rest of B's row 0
/// holds 0.5, so FP32's sums stay finite. Every other input is 0, alpha 1
/// and beta 0. An infinity or a 0 must come out as FP32 gives it; a finite
/// sum within 2^-finite_bits of FP32's.
inline void check_class_kept(const ladder::Variant& variant, Size size, int finite_bits = 20) {
  const int M = size.M, N = size.N, K = size.K, m = M / 3, n = N / 2;
  SCOPED_TRACE("variant " + variant.name + ", values whose class TF32 changes");
  ASSERT_EQ(variant.accepts(M, N, K), "");
  Guarded A(size_t(M) * K, false), B(size_t(K) * N, false), C(size_t(M) * N, false);
  for (size_t i = 0; i < A.size(); ++i) A.data()[i] = 0.0f;
  for (size_t i = 0; i < B.size(); ++i) B.data()[i] = 0.0f;
  A.data()[size_t(m) * K] = INFINITY;
  A.data()[size_t(m + 1) * K] = FLT_MAX;
  for (int j = 0; j < N; ++j) B.data()[j] = j == n ? std::ldexp(1.0f, -140) : 0.5f;
  launch(variant, M, N, K, 1.0f, A, B, 0.0f, C);
  expect_every_element(C, M, N, [&](int i, int j, float c) -> std::string {
    const float want = i == m       ? INFINITY
                       : i == m + 1 ? FLT_MAX * (j == n ? std::ldexp(1.0f, -140) : 0.5f)
                                    : 0.0f;
    const bool near = std::isfinite(want) && want != 0.0f && std::isfinite(c) &&
                      std::fabs(c - want) <= std::ldexp(std::fabs(want), -finite_bits);
    return c == want || near ? "" : "FP32 gives " + std::to_string(want);
  });
}

/// Runs `variant` on `size` twice: on A and B, and on A * 2^s and B * 2^-s.
/// Every element of A and B is 1 to 2 in size, so the scaled ones keep every
/// bit for |s| <= 124, and every product is the same as unscaled. A kernel
/// whose arithmetic is the same at every scale gives the same C, bit for
/// bit. One whose split lets a small part fall below FP32's normal range
/// (where the tensor cores' TF32 keeps no bits below 2^-136) does not.
inline void check_scale_invariance(const ladder::Variant& variant, Size size, int s) {
  const int M = size.M, N = size.N, K = size.K;
  SCOPED_TRACE("variant " + variant.name + ", A times 2^" + std::to_string(s) + ", B times 2^" +
               std::to_string(-s));
  ASSERT_EQ(variant.accepts(M, N, K), "");
  std::mt19937 rng(36);
  std::uniform_real_distribution<float> magnitude(1.0f, 2.0f);
  std::bernoulli_distribution negative(0.5);
  const auto draw = [&](Guarded& x) {
    for (size_t i = 0; i < x.size(); ++i)
      x.data()[i] = negative(rng) ? -magnitude(rng) : magnitude(rng);
  };
  Guarded A(size_t(M) * K, false), B(size_t(K) * N, false);
  draw(A);
  draw(B);
  const auto product = [&](int scale) {
    Guarded As(A.size(), false), Bs(B.size(), false), C(size_t(M) * N, false);
    for (size_t i = 0; i < A.size(); ++i) As.data()[i] = std::ldexp(A.data()[i], scale);
    for (size_t i = 0; i < B.size(); ++i) Bs.data()[i] = std::ldexp(B.data()[i], -scale);
    launch(variant, M, N, K, 1.0f, As, Bs, 0.0f, C);
    return std::vector<float>(C.data(), C.data() + C.size());
  };
  const std::vector<float> plain = product(0), scaled = product(s);
  int differ = 0;
  size_t first = 0;
  for (size_t i = 0; i < plain.size(); ++i)
    if (std::memcmp(&plain[i], &scaled[i], sizeof(float)) != 0 && differ++ == 0) first = i;
  EXPECT_EQ(differ, 0) << "of " << plain.size() << " elements; first C(" << first / N << ", "
                       << first % N << ") = " << scaled[first] << " against " << plain[first];
}

/// Every variant of `chapter`, at every size, with every call of `calls`.
/// Returns the number of products run (the caller checks it is what it expects).
inline int check_chapter(const ladder::Chapter& chapter, const std::vector<Size>& sizes,
                         const std::vector<Call>& calls = kCalls) {
  SCOPED_TRACE("chapter " + chapter.slug);
  int runs = 0;
  uint32_t seed = 16;  // issue 16
  for (const ladder::Variant& variant : chapter.variants) {
    for (const Size& size : sizes) {
      for (const Call& call : calls) {
        check(variant, size, call, seed++);
        ++runs;
      }
    }
  }
  return runs;
}

}  // namespace emulated
