// A differential fuzzer for a chapter's variants: random problems, each
// checked element by element against an FP64 product.
//
// Each problem draws its shape (M, N and K from 1 to about 700, now and then
// up to about 5000), alpha and beta (0, 1, -1 or random), where A, B and C
// start (0 to 3 floats past a 16-byte boundary), a power-of-two scale for
// each matrix, and special values at random places: NaNs of any sign and
// payload (some with the payload only in the 13 low bits that TF32 drops),
// infinities, and beside an infinity a zero (0 * Inf) or a float that TF32
// makes 0 (2^-140: FP32 gives Inf where TF32 gives NaN). The
// reference classes every element the way FP32 arithmetic does (NaN, +Inf,
// -Inf or finite) and gives the finite ones in FP64; the kernel must agree
// on every class and stay within its arithmetic's tolerance on the values.
//
// A problem is a function of (seed, index) alone, so a failure prints the
// one command that runs it again. The fuzz program of a chapter is
// tests/gpu/fuzz.cu built around its kernel header.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "accuracy.hpp"
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "device.cuh"
#include "json.hpp"
#include "options.hpp"

namespace ladder::fuzz {

/// One special value put into a matrix (0 A, 1 B, 2 C) at (row, col).
struct Special {
  int matrix;
  int row;
  int col;
  float value;
};

/// One random problem: everything a run needs to repeat it.
struct Problem {
  int M = 1, N = 1, K = 1;
  float alpha = 1.0f, beta = 0.0f;
  int offset[3] = {0, 0, 0};  ///< floats past a 16-byte boundary: A, B, C
  int scale[3] = {0, 0, 0};   ///< each matrix is uniform in [-1, 1) times 2^scale
  std::vector<Special> specials;
};

inline float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// The most a dimension may grow to ("some up to about 5000").
constexpr int kLongDim = 5000;
/// At most this many multiply-adds a problem, so that the naive chapters
/// keep a run short.
constexpr double kMaxFma = 4e9;
/// Each matrix's scale stays within 2^-120 .. 2^120, and A's and B's
/// together within 2^-110 .. 2^110: products and sums stay in FP32's range.
constexpr int kMaxScale = 120;
constexpr int kMaxProductScale = 110;

/// One dimension: mostly 1 to 700, a few tiny, a few long.
inline int draw_dim(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double r = u(rng);
  if (r < 0.15) return std::uniform_int_distribution<int>(1, 16)(rng);
  if (r < 0.93) return std::uniform_int_distribution<int>(1, 700)(rng);
  return std::uniform_int_distribution<int>(701, kLongDim)(rng);
}

/// A NaN of random sign and payload; half of them keep their payload in the
/// low 13 bits only, which TF32 drops.
inline float draw_nan(std::mt19937_64& rng) {
  const uint32_t sign = std::uniform_int_distribution<uint32_t>(0, 1)(rng) << 31;
  const bool low_only = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  const uint32_t payload = low_only ? std::uniform_int_distribution<uint32_t>(1, 0x1fffu)(rng)
                                    : std::uniform_int_distribution<uint32_t>(1, 0x7fffffu)(rng);
  return from_bits(sign | 0x7f800000u | payload);
}

/// Problem `index` of `seed`. With `offsets` false every matrix starts on a
/// 16-byte boundary (for chapters whose kernels ask for cudaMalloc's).
inline Problem draw(uint64_t seed, int index, bool offsets) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(index)};
  std::mt19937_64 rng(seq);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Problem p;
  p.M = draw_dim(rng);
  p.N = draw_dim(rng);
  p.K = draw_dim(rng);
  // Half the problems have rows on 16-byte boundaries (N and K multiples
  // of 4), the fast paths' condition; some have whole 128 x 128 tiles.
  const auto up = [](int x, int multiple) { return (x + multiple - 1) / multiple * multiple; };
  const double shape = u(rng);
  if (shape < 0.15) {
    p.M = up(p.M, 128);
    p.N = up(p.N, 128);
    p.K = up(p.K, 128);
  } else if (shape < 0.5) {
    p.N = up(p.N, 4);
    p.K = up(p.K, 4);
  }
  while (double(p.M) * p.N * p.K > kMaxFma) {  // halve the largest
    int& largest = p.M >= p.N && p.M >= p.K ? p.M : (p.N >= p.K ? p.N : p.K);
    largest = (largest + 1) / 2;
  }
  const auto pick = [&](std::initializer_list<float> choices) {
    const size_t i = std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng);
    return *(choices.begin() + i);
  };
  const float random_alpha = static_cast<float>(u(rng) * 4.0 - 2.0);
  const float random_beta = static_cast<float>(u(rng) * 4.0 - 2.0);
  p.alpha = u(rng) < 0.05 ? 0.0f : pick({1.0f, -1.0f, 0.5f, random_alpha, random_alpha});
  p.beta = u(rng) < 0.3 ? 0.0f : pick({1.0f, -1.0f, 0.25f, random_beta, random_beta});
  // Offsets: none, one matrix's alone (so that a launcher that checks only
  // the others shows), or each at random.
  std::uniform_int_distribution<int> floats(1, 3);
  const double where = u(rng);
  if (offsets && where < 0.4) {
    p.offset[std::uniform_int_distribution<int>(0, 2)(rng)] = floats(rng);
  } else if (offsets && where < 0.6) {
    for (int& o : p.offset) o = u(rng) < 0.5 ? floats(rng) : 0;
  }
  if (u(rng) < 0.4) {
    // A and B scaled apart, their products kept within 2^-110 .. 2^110.
    std::uniform_int_distribution<int> s(-kMaxScale, kMaxScale);
    p.scale[0] = s(rng);
    do {
      p.scale[1] = s(rng);
    } while (std::abs(p.scale[0] + p.scale[1]) > kMaxProductScale);
    p.scale[2] = p.scale[0] + p.scale[1] + std::uniform_int_distribution<int>(-8, 8)(rng);
  }
  // Special values only where alpha != 0 lets them reach C through the
  // product (with alpha == 0, BLAS leaves the product out).
  if (p.alpha != 0.0f && u(rng) < 0.5) {
    const int count = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int i = 0; i < count; ++i) {
      const double where = u(rng);
      const int matrix = where < 0.45 ? 0 : (where < 0.9 || p.beta == 0.0f ? 1 : 2);
      const int rows = matrix == 0 ? p.M : (matrix == 1 ? p.K : p.M);
      const int cols = matrix == 0 ? p.K : p.N;
      const int row = std::uniform_int_distribution<int>(0, rows - 1)(rng);
      const int col = std::uniform_int_distribution<int>(0, cols - 1)(rng);
      const bool nan = u(rng) < 0.6;
      const float value = nan ? draw_nan(rng) : (u(rng) < 0.5 ? INFINITY : -INFINITY);
      p.specials.push_back({matrix, row, col, value});
      // An infinity of A or B meets, in one of its products, a zero (0 * Inf
      // is NaN) or a float too small for TF32 (below 2^-137, which TF32
      // makes 0; FP32 gives an infinity).
      if (!nan && matrix < 2 && u(rng) < 0.5) {
        const float partner = pick({0.0f, 0x1p-140f, -0x1p-140f});
        if (matrix == 0) {  // in B's row `col`
          p.specials.push_back(
              {1, col, std::uniform_int_distribution<int>(0, p.N - 1)(rng), partner});
        } else {  // in A's column `row`
          p.specials.push_back(
              {0, std::uniform_int_distribution<int>(0, p.M - 1)(rng), row, partner});
        }
      }
    }
  }
  return p;
}

/// The problem `p`, rounded up so that `variant` accepts it: as drawn, else
/// with each dimension rounded up to a multiple of 32, 64, 128 or 256 (for
/// chapters that compute whole tiles only). False when none is accepted.
inline bool fit(const Variant& variant, Problem& p) {
  if (variant.accepts(p.M, p.N, p.K).empty()) return true;
  for (int multiple : {32, 64, 128, 256}) {
    const auto up = [&](int x) { return (x + multiple - 1) / multiple * multiple; };
    if (variant.accepts(up(p.M), up(p.N), up(p.K)).empty()) {
      p.M = up(p.M);
      p.N = up(p.N);
      p.K = up(p.K);
      // The specials' places stay inside: the matrices only grew.
      return true;
    }
  }
  return false;
}

/// A matrix as the problem has it on the device: 64 guard floats of NaN
/// before and after, and `offset` floats past a 16-byte boundary.
class Placed {
 public:
  static constexpr size_t kGuard = 64;
  Placed(size_t n, int offset) : n_(n), offset_(offset), buffer_(kGuard + 3 + n + kGuard) {
    CUDA_CHECK(cudaMemset(buffer_.get(), 0xff, buffer_.size() * sizeof(float)));  // NaN
  }
  float* get() const { return buffer_.get() + kGuard + offset_; }
  size_t size() const { return n_; }
  std::vector<float> to_host() const {
    std::vector<float> h(n_);
    CUDA_CHECK(cudaMemcpy(h.data(), get(), n_ * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
  }
  /// Whether every float outside the matrix is still the 0xffffffff NaN.
  bool guards_intact() const {
    const std::vector<float> all = buffer_.to_host();
    for (size_t i = 0; i < all.size(); ++i) {
      const bool inside = i >= kGuard + offset_ && i < kGuard + offset_ + n_;
      if (!inside && to_bits(all[i]) != 0xffffffffu) return false;
    }
    return true;
  }

 private:
  size_t n_;
  int offset_;
  DeviceBuffer buffer_;
};

/// x[i] *= 2^scale.
__global__ void scale_by(float* x, size_t n, int scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    x[i] = ldexpf(x[i], scale);
  }
}

/// y[i] = x[i] in FP64, or 0 where x[i] is not finite: the FP64 product of
/// the finite values, for the elements of C that no special value reaches.
__global__ void widen_finite(const float* x, double* y, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    y[i] = isfinite(x[i]) ? double(x[i]) : 0.0;
  }
}

/// The class FP32 arithmetic gives alpha * sum_k A[i][k] B[k][j] + beta * C0
/// where some term or C0 is not finite: NaN, +Inf or -Inf; 0 when the
/// element is finite. `ks` are the k whose A[i][k] or B[k][j] is not finite.
inline double special_class(const Problem& p, const std::vector<float>& A,
                            const std::vector<float>& B, const std::vector<float>& C0, int i, int j,
                            const std::vector<int>& ks) {
  bool nan = false, plus = false, minus = false;
  for (int k : ks) {
    const double t = double(A[size_t(i) * p.K + k]) * double(B[size_t(k) * p.N + j]);
    nan = nan || std::isnan(t);
    plus = plus || t == INFINITY;
    minus = minus || t == -INFINITY;
  }
  // alpha != 0 wherever A or B holds a special value (draw()).
  const double sign = p.alpha < 0 ? -1.0 : 1.0;
  double product =
      nan || (plus && minus) ? NAN : (plus ? sign * INFINITY : (minus ? -sign * INFINITY : 0.0));
  if (p.beta != 0.0f) {
    const double c = double(p.beta) * double(C0[size_t(i) * p.N + j]);
    if (!std::isfinite(c))
      product = std::isnan(product) ? product : (std::isinf(product) && product != c ? NAN : c);
  }
  return product;
}

/// Whether two matrices hold the same bits (NaN != NaN, so not operator==).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// What one problem gave.
struct Outcome {
  bool passed = true;
  std::string why;  ///< what failed, for the report
};

/// Runs `variant` on problem `p` and checks it.
inline Outcome run_problem(const Variant& variant, const Problem& p, uint32_t fill_seed,
                           cublasHandle_t handle) {
  const size_t a_n = size_t(p.M) * p.K, b_n = size_t(p.K) * p.N, c_n = size_t(p.M) * p.N;
  Placed A(a_n, p.offset[0]), B(b_n, p.offset[1]), C(c_n, p.offset[2]);
  fill_uniform<<<1024, 256>>>(A.get(), a_n, fill_seed);
  fill_uniform<<<1024, 256>>>(B.get(), b_n, fill_seed + 1);
  scale_by<<<256, 256>>>(A.get(), a_n, p.scale[0]);
  scale_by<<<256, 256>>>(B.get(), b_n, p.scale[1]);
  if (p.beta != 0.0f) {  // with beta == 0, C stays NaN: BLAS must not read it
    fill_uniform<<<1024, 256>>>(C.get(), c_n, fill_seed + 2);
    scale_by<<<256, 256>>>(C.get(), c_n, p.scale[2]);
  }
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  for (const Special& s : p.specials) {
    float* base = s.matrix == 0 ? A.get() : (s.matrix == 1 ? B.get() : C.get());
    const int cols = s.matrix == 0 ? p.K : p.N;
    CUDA_CHECK(cudaMemcpy(base + size_t(s.row) * cols + s.col, &s.value, sizeof(float),
                          cudaMemcpyHostToDevice));
  }
  const std::vector<float> A0 = A.to_host(), B0 = B.to_host(), C0 = C.to_host();

  // The FP64 product of the finite values, on the GPU.
  DeviceArray<double> A64(a_n), B64(b_n), C64(c_n);
  widen_finite<<<1024, 256>>>(A.get(), A64.get(), a_n);
  widen_finite<<<1024, 256>>>(B.get(), B64.get(), b_n);
  widen_finite<<<1024, 256>>>(C.get(), C64.get(), c_n);
  CUDA_CHECK_LAUNCH();
  const double alpha = p.alpha, beta = p.beta;
  CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &alpha, B64.get(), p.N,
                           A64.get(), p.K, &beta, C64.get(), p.N));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ref = C64.to_host();

  // Where a special value reaches, FP32's class in place of the FP64 value.
  std::vector<std::vector<int>> row_ks(p.M), col_ks(p.N);
  for (int i = 0; i < p.M; ++i)
    for (int k = 0; k < p.K; ++k)
      if (!std::isfinite(A0[size_t(i) * p.K + k])) row_ks[i].push_back(k);
  for (int k = 0; k < p.K; ++k)
    for (int j = 0; j < p.N; ++j)
      if (!std::isfinite(B0[size_t(k) * p.N + j])) col_ks[j].push_back(k);
  std::vector<int> ks;
  for (int i = 0; i < p.M; ++i)
    for (int j = 0; j < p.N; ++j) {
      const bool c_special = p.beta != 0.0f && !std::isfinite(C0[size_t(i) * p.N + j]);
      if (row_ks[i].empty() && col_ks[j].empty() && !c_special) continue;
      ks = row_ks[i];
      ks.insert(ks.end(), col_ks[j].begin(), col_ks[j].end());
      const double cls = special_class(p, A0, B0, C0, i, j, ks);
      if (cls != 0.0) ref[size_t(i) * p.N + j] = cls;
    }

  // The kernel, with the workspace it asks for (NaN, so that reading what
  // it did not write shows).
  const long long workspace = workspace_floats(variant, p.M, p.N, p.K);
  Placed W(size_t(workspace > 0 ? workspace : 1), 0);
  const Gemm g{p.M,      p.N,     p.K,
               p.alpha,  A.get(), B.get(),
               p.beta,   C.get(), workspace > 0 ? W.get() : nullptr,
               workspace};
  variant.launch(g, nullptr);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> out = C.to_host();

  Outcome o;
  const Accuracy a = compare_within(out.data(), ref.data(), out.size(), tolerance_of(variant, p.K),
                                    NonFinite::MatchReference);
  char why[512] = "";
  if (a.bad_values > 0) {
    for (size_t e = 0; e < out.size(); ++e) {
      const double r = ref[e], v = out[e];
      if ((std::isfinite(r) && std::isfinite(v)) || same_special(v, r)) continue;
      std::snprintf(why, sizeof why,
                    "%zu elements of the wrong class; the first, C[%zu][%zu], is %g (bits "
                    "0x%08x) where FP32 gives %g",
                    a.bad_values, e / p.N, e % p.N, v, to_bits(out[e]), r);
      break;
    }
  } else if (!a.correct) {
    std::snprintf(why, sizeof why, "max relative error %.3g, norm error %.3g, tolerance %.3g",
                  a.max_rel_err, a.rel_norm_err, a.tolerance);
  } else if (!C.guards_intact()) {
    std::snprintf(why, sizeof why, "the kernel wrote outside C");
  } else if (!same_bits(A.to_host(), A0) || !same_bits(B.to_host(), B0)) {
    std::snprintf(why, sizeof why, "the kernel changed A or B");
  } else if (workspace > 0 && !W.guards_intact()) {
    std::snprintf(why, sizeof why, "the launcher wrote outside its workspace");
  }
  o.passed = why[0] == '\0';
  o.why = why;
  return o;
}

/// The scale check of one variant: C(2^s A, 2^-s B) against C(A, B), and,
/// for a tensor-core variant that promises FP32's accuracy (3xTF32), its
/// error against SGEMM's with A or B scaled by 2^s.
struct ScaleReport {
  bool checked = false;       ///< false: the variant accepts no size near the check's
  bool deterministic = true;  ///< two runs on the same inputs gave the same bits
  int differing = 0;          ///< scales s whose C(2^s A, 2^-s B) differs from C(A, B)
  double worst_ratio = 0;     ///< largest error / SGEMM's error (0: not checked)
  int worst_scale = 0;        ///< where it was, as 2^s
  char worst_operand = 'A';   ///< which operand was scaled there
  std::string why;            ///< what failed, for the report
};

/// The scales the check tries: every 10th power of two from 2^-120 to
/// 2^120 and, for the bits, 2^-123 and 2^123: scaled by them, values from
/// 1 to 2 keep exponents of -123 or more, where 3xTF32's small parts keep
/// their bits (ch14::kSmallScale). The error ratio stays within 2^-120 ..
/// 2^120, where A B's sums stay far from overflowing.
inline std::vector<int> checked_scales() {
  std::vector<int> scales = {-123};
  for (int s = -120; s <= 120; s += 10) scales.push_back(s);
  scales.push_back(123);
  return scales;
}
constexpr int kRatioScale = 120;

/// The worst error ratio 3xTF32 may have against SGEMM at any scale.
constexpr double kMaxScaleRatio = 1.5;

inline ScaleReport check_scales(const Chapter& chapter, const Variant& variant,
                                cublasHandle_t handle) {
  ScaleReport r;
  Problem p;
  p.M = 384;
  p.N = 320;
  p.K = 1024;
  if (!fit(variant, p)) return r;
  r.checked = true;
  const size_t a_n = size_t(p.M) * p.K, b_n = size_t(p.K) * p.N, c_n = size_t(p.M) * p.N;
  const long long workspace = workspace_floats(variant, p.M, p.N, p.K);
  DeviceArray<float> A(a_n), B(b_n), C(c_n), W(size_t(workspace > 0 ? workspace : 1));
  // C = A B (alpha 1, beta 0) for host matrices a and b.
  const auto product = [&](const std::vector<float>& a, const std::vector<float>& b) {
    CUDA_CHECK(cudaMemcpy(A.get(), a.data(), a_n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(B.get(), b.data(), b_n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(C.get(), 0xff, c_n * sizeof(float)));
    const Gemm g{p.M,      p.N,     p.K,
                 1.0f,     A.get(), B.get(),
                 0.0f,     C.get(), workspace > 0 ? W.get() : nullptr,
                 workspace};
    variant.launch(g, nullptr);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return C.to_host();
  };
  const auto scaled = [](const std::vector<float>& x, int s) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = std::ldexp(x[i], s);
    return y;
  };

  // 1. The same bits at every scale: values from 1 to 2 in size, so that
  // 2^s x keeps every bit of x, and every product of 2^s A and 2^-s B is a
  // product of A and B.
  std::mt19937 rng(36);
  std::uniform_real_distribution<float> magnitude(1.0f, 2.0f);
  std::bernoulli_distribution negative(0.5);
  const auto draw_ones = [&](size_t n) {
    std::vector<float> x(n);
    for (float& v : x) v = negative(rng) ? -magnitude(rng) : magnitude(rng);
    return x;
  };
  const std::vector<float> a1 = draw_ones(a_n), b1 = draw_ones(b_n);
  const std::vector<float> plain = product(a1, b1);
  r.deterministic = same_bits(plain, product(a1, b1));
  if (r.deterministic) {
    for (int s : checked_scales())
      if (!same_bits(product(scaled(a1, s), scaled(b1, -s)), plain)) {
        if (r.differing++ == 0)
          r.why = "C(2^" + std::to_string(s) + " A, 2^" + std::to_string(-s) +
                  " B) differs from C(A, B)";
      }
  }

  // 2. 3xTF32 against SGEMM, A or B scaled by 2^s, the other in [-1, 1).
  if (chapter.tensor_cores && variant.arithmetic == Arithmetic::kFp32) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(a_n), b(b_n);
    for (float& v : a) v = uniform(rng);
    for (float& v : b) v = uniform(rng);
    DeviceArray<double> A64(a_n), B64(b_n), C64(c_n);
    for (int s : checked_scales()) {
      if (std::abs(s) > kRatioScale) continue;
      for (char operand : {'A', 'B'}) {
        const std::vector<float> as = operand == 'A' ? scaled(a, s) : a;
        const std::vector<float> bs = operand == 'B' ? scaled(b, s) : b;
        const std::vector<float> out = product(as, bs);
        // SGEMM on the same inputs (still in A and B), and FP64.
        const float one = 1.0f, zero = 0.0f;
        CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &one, B.get(),
                                 p.N, A.get(), p.K, &zero, C.get(), p.N));
        widen_finite<<<1024, 256>>>(A.get(), A64.get(), a_n);
        widen_finite<<<1024, 256>>>(B.get(), B64.get(), b_n);
        CUDA_CHECK_LAUNCH();
        const double one64 = 1.0, zero64 = 0.0;
        CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &one64, B64.get(),
                                 p.N, A64.get(), p.K, &zero64, C64.get(), p.N));
        CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<double> ref = C64.to_host();
        // Norm-wise errors (accuracy.hpp); a NaN or Inf in either makes the ratio NaN.
        const auto error = [&](const std::vector<float>& c) {
          const Accuracy acc = compare_within(c.data(), ref.data(), c.size(), 0.0);
          return acc.bad_values > 0 ? NAN : acc.rel_norm_err;
        };
        const double ratio = error(out) / error(C.to_host());
        if (!(ratio <= r.worst_ratio)) {  // a NaN ratio is the worst
          r.worst_ratio = ratio;
          r.worst_scale = s;
          r.worst_operand = operand;
        }
      }
    }
    if (!(r.worst_ratio <= kMaxScaleRatio)) {
      char line[160];
      std::snprintf(line, sizeof line, "%serror %.3g times SGEMM's with %c scaled by 2^%d",
                    r.why.empty() ? "" : "; ", r.worst_ratio, r.worst_operand, r.worst_scale);
      r.why += line;
    }
  }
  return r;
}

/// One line that says what problem `p` is.
inline std::string describe(const Problem& p) {
  char line[256];
  std::snprintf(line, sizeof line,
                "%dx%dx%d, alpha %g, beta %g, offsets A %d B %d C %d, scales 2^%d 2^%d 2^%d, %zu "
                "special values",
                p.M, p.N, p.K, p.alpha, p.beta, p.offset[0], p.offset[1], p.offset[2], p.scale[0],
                p.scale[1], p.scale[2], p.specials.size());
  std::string s = line;
  for (const Special& sp : p.specials) {
    std::snprintf(line, sizeof line, "; %c[%d][%d] = 0x%08x", "ABC"[sp.matrix], sp.row, sp.col,
                  to_bits(sp.value));
    s += line;
  }
  return s;
}

/// The command that runs one problem again, printed if the program stops
/// inside it (a fault ends the process through CUDA_CHECK's exit).
inline std::string& in_flight() {
  static std::string command;
  return command;
}

/// The fuzzer's command line.
struct Options {
  std::vector<uint64_t> seeds;
  bool fresh_seed = false;
  int problems = 200;
  std::string variant;  ///< empty: every variant
  int only = -1;        ///< one problem's index, or -1 for all
  bool offsets = true;
  int device = 0;
  std::string json_path;
};

inline const char* kUsage =
    "usage: %s [--seed S]... [--fresh-seed] [--problems N] [--variant NAME] [--problem I]\n"
    "          [--aligned] [--device D] [--json FILE]\n"
    "Runs random problems through every variant of the chapter (or NAME) and checks each\n"
    "element against an FP64 product. Without --seed: seeds 1 and 2 and a fresh one.\n"
    "--problem I runs problem I of each seed alone; --aligned keeps the matrices on\n"
    "16-byte boundaries (chapters that ask for cudaMalloc's alignment).\n";

/// Reads the fuzzer's command line into `o` (the book's one parser,
/// options.hpp): "" when it is good, else one line that says what is wrong.
/// `help` is set by --help.
inline std::string parse_options(int argc, const char* const* argv, Options& o, bool& help) {
  bool aligned = false;
  ArgParser parser;
  parser
      .value("--seed",
             [&o](const std::string& text) {
               // Any 64-bit seed: the fresh ones the fuzzer prints are.
               errno = 0;
               char* end = nullptr;
               const unsigned long long seed = std::strtoull(text.c_str(), &end, 10);
               if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE)
                 return "bad value '" + text +
                        "' for --seed: expected an integer from 0 to 2^64 - 1";
               o.seeds.push_back(seed);
               return std::string();
             })
      .flag("--fresh-seed", &o.fresh_seed)
      .value("--problems", integer_into("--problems", 1, &o.problems))
      .value("--variant", text_into(&o.variant))
      .value("--problem", integer_into("--problem", 0, &o.only))
      .flag("--aligned", &aligned)
      .value("--device", integer_into("--device", 0, &o.device))
      .value("--json", text_into(&o.json_path))
      .flag("--help", &help);
  const std::string why = parser.parse(argc, argv);
  o.offsets = !aligned;
  return why;
}

/// Fuzzes `chapter`: returns 0 when every problem passed, 1 when one failed,
/// 2 for a bad command line, kExitNoGpu (77) without a GPU.
inline int run(const Chapter& chapter, int argc, char** argv) {
  Options o;
  bool help = false;
  const std::string why = parse_options(argc, argv, o, help);
  if (help || !why.empty()) {
    if (!why.empty()) std::fprintf(stderr, "%s: %s\n", program_name(argv[0]).c_str(), why.c_str());
    std::fprintf(stderr, kUsage, argv[0]);
    return why.empty() ? 0 : 2;
  }
  if (o.seeds.empty()) {
    o.seeds = {1, 2};
    o.fresh_seed = true;
  }
  if (o.fresh_seed)
    o.seeds.push_back(std::random_device{}() | (uint64_t(std::random_device{}()) << 32));
  if (count_gpus(chapter.slug.c_str()) == 0) return kExitNoGpu;
  CUDA_CHECK(cudaSetDevice(o.device));
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  std::atexit([] {
    if (!in_flight().empty())
      std::fprintf(stderr, "fuzz: stopped inside: %s\n", in_flight().c_str());
  });

  int tried = 0, refused = 0, failed = 0, scale_failed = 0;
  double worst_ratio = 0;
  Json per_variant = Json::object();
  for (const Variant& variant : chapter.variants) {
    if (!o.variant.empty() && variant.name != o.variant) continue;
    int v_tried = 0, v_failed = 0;
    for (uint64_t seed : o.seeds) {
      std::printf("%s %s: seed %llu\n", chapter.slug.c_str(), variant.name.c_str(),
                  static_cast<unsigned long long>(seed));
      std::fflush(stdout);
      for (int index = 0; index < o.problems; ++index) {
        if (o.only >= 0 && index != o.only) continue;
        Problem p = draw(seed, index, o.offsets);
        if (!fit(variant, p)) {
          ++refused;
          continue;
        }
        const std::string command = std::string(argv[0]) + " --variant " + variant.name +
                                    " --seed " + std::to_string(seed) + " --problem " +
                                    std::to_string(index) + (o.offsets ? "" : " --aligned");
        in_flight() = command + "  (" + describe(p) + ")";
        const Outcome r =
            run_problem(variant, p, static_cast<uint32_t>(seed * 7919 + index), handle);
        in_flight().clear();
        ++tried;
        ++v_tried;
        if (!r.passed) {
          ++failed;
          ++v_failed;
          std::printf("FAIL %s %s, problem %d of seed %llu: %s\n  %s\n  reproduce: %s\n",
                      chapter.slug.c_str(), variant.name.c_str(), index,
                      static_cast<unsigned long long>(seed), describe(p).c_str(), r.why.c_str(),
                      command.c_str());
          std::fflush(stdout);
        }
      }
    }
    Json entry = Json::object().set("problems", v_tried).set("failed", v_failed);
    const ScaleReport sr = o.only < 0 ? check_scales(chapter, variant, handle) : ScaleReport{};
    if (sr.checked) {
      std::printf("%s %s: scales 2^%d to 2^%d: %s", chapter.slug.c_str(), variant.name.c_str(),
                  checked_scales().front(), checked_scales().back(),
                  !sr.deterministic   ? "not bit-reproducible, bits not compared"
                  : sr.differing == 0 ? "the same bits at every scale"
                                      : "bits differ");
      if (sr.worst_ratio > 0)
        std::printf("; error at most %.3g times SGEMM's (%c scaled by 2^%d)", sr.worst_ratio,
                    sr.worst_operand, sr.worst_scale);
      std::printf("\n");
      if (!sr.why.empty()) {
        ++scale_failed;
        std::printf("FAIL %s %s, scale check: %s\n", chapter.slug.c_str(), variant.name.c_str(),
                    sr.why.c_str());
      }
      entry.set("same_bits_at_every_scale", sr.deterministic && sr.differing == 0);
      if (sr.worst_ratio > 0) entry.set("scale_error_ratio", sr.worst_ratio);
      worst_ratio = std::max(worst_ratio, sr.worst_ratio);
    }
    std::fflush(stdout);
    per_variant.set(variant.name, entry);
  }
  CUBLAS_CHECK(cublasDestroy(handle));
  std::printf("%s: %d problems, %d failed, %d not accepted by the chapter; seeds",
              chapter.slug.c_str(), tried, failed, refused);
  Json seeds = Json::array();
  for (uint64_t s : o.seeds) {
    std::printf(" %llu", static_cast<unsigned long long>(s));
    seeds.push(Json::string(std::to_string(s)));
  }
  std::printf("\n");
  if (!o.json_path.empty()) {
    Json report = Json::object();
    report.set("chapter", chapter.slug)
        .set("seeds", seeds)
        .set("problems", tried)
        .set("failed", failed)
        .set("not_accepted", refused)
        .set("offsets", o.offsets)
        .set("scales_from", checked_scales().front())
        .set("scales_to", checked_scales().back())
        .set("scale_failed", scale_failed)
        .set("variants", per_variant);
    if (worst_ratio > 0) report.set("scale_error_ratio", worst_ratio);
    std::ofstream(o.json_path) << report.dump() << "\n";
  }
  return failed == 0 && scale_failed == 0 ? 0 : 1;
}

}  // namespace ladder::fuzz
