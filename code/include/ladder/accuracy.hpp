// How a kernel's output is compared with a reference, on the host.
#pragma once

#include <cmath>
#include <cstddef>

namespace ladder {

/// The unit roundoff of FP32: half the distance from 1 to the next float.
constexpr double kFp32UnitRoundoff = 5.9604644775390625e-8;  // 2^-24

/// The largest error accepted for an FP32 product with inner dimension K.
///
/// Each output is a sum of K rounded products; with random inputs the
/// rounding errors behave like a random walk, so they grow like sqrt(K)
/// times the unit roundoff. Two correct FP32 implementations that sum in
/// different orders differ by about that much. The factor 32 leaves room for
/// the tails of 67 million outputs, and stays well below what TF32 inputs
/// (unit roundoff 2^-11, 8192 times coarser) would produce, so a reference or
/// kernel that quietly used TF32 fails.
inline double tolerance_for_k(int K) {
  return 32.0 * kFp32UnitRoundoff * std::sqrt(static_cast<double>(K) + 2.0);
}

/// The unit roundoff of TF32, the tensor cores' input format: 10 mantissa
/// bits, so half the distance from 1 to the next value is 2^-11.
constexpr double kTf32UnitRoundoff = 4.8828125e-4;  // 2^-11

/// The largest error accepted for a product whose inputs are rounded to TF32.
///
/// Rounding each input moves each product by up to about 2 * 2^-11 of itself.
/// With random signs those errors add up like the products themselves do,
/// so relative to the result they do not grow with K: they stay near the
/// unit roundoff of TF32. The factor 16 leaves room for the tails, as
/// tolerance_for_k()'s 32 does, and the FP32 accumulation adds its own.
inline double tf32_tolerance_for_k(int K) { return 16.0 * kTf32UnitRoundoff + tolerance_for_k(K); }

/// The verdict of one comparison.
struct Accuracy {
  double max_rel_err = 0;            ///< max over elements of |out - ref| / max(|ref|, rms(ref))
  double rel_norm_err = 0;           ///< ||out - ref||_2 / ||ref||_2
  double tolerance = 0;              ///< tolerance_for_k(K)
  std::size_t bad_values = 0;        ///< NaN or Inf elements in out (unwritten outputs are NaN)
  std::size_t matched_specials = 0;  ///< NaN or Inf in both, of the same kind (with specials)
  bool correct = false;
};

/// How non-finite values are judged. `Forbidden`: any NaN or Inf in the
/// output fails (the inputs were finite, so one means an unwritten or wrongly
/// read element). `MatchReference`: the inputs held NaN and Inf on purpose;
/// each output must be NaN where the reference is NaN, the same infinity where
/// the reference has one, and finite where the reference is finite.
enum class NonFinite { Forbidden, MatchReference };

/// True when a and b are both NaN, or the same infinity.
inline bool same_special(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (std::isinf(a) && a == b);
}

/// Compares `out` against `ref` (both n elements). NaN or Inf in the output
/// fails unless `non_finite` says the reference has them too, in the same
/// places; NaN cannot slip through a comparison: every test below is written
/// so that a NaN makes it fail.
///
/// The element-wise error is measured against max(|ref|, rms(ref)): an
/// output that happens to be near zero (a sum of K terms can cancel) would
/// otherwise turn a tiny absolute error into a huge relative one.
template <typename Out, typename Ref>
Accuracy compare_within(const Out* out, const Ref* ref, std::size_t n, double tolerance,
                        NonFinite non_finite = NonFinite::Forbidden) {
  Accuracy a;
  a.tolerance = tolerance;
  double ref_sq = 0;
  std::size_t finite_refs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(double(ref[i]))) continue;
    ref_sq += double(ref[i]) * double(ref[i]);
    ++finite_refs;
  }
  const double rms = finite_refs > 0 ? std::sqrt(ref_sq / double(finite_refs)) : 0.0;
  double diff_sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double o = out[i], r = ref[i];
    if (!std::isfinite(o) || !std::isfinite(r)) {
      if (non_finite == NonFinite::MatchReference && same_special(o, r)) {
        ++a.matched_specials;
      } else {
        ++a.bad_values;
      }
      continue;
    }
    const double d = std::fabs(o - r);
    diff_sq += d * d;
    const double scale = std::fmax(std::fabs(r), rms);
    const double rel = scale > 0 ? d / scale : (d > 0 ? INFINITY : 0.0);
    if (!(rel <= a.max_rel_err)) a.max_rel_err = rel;
  }
  a.rel_norm_err = ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : (diff_sq > 0 ? INFINITY : 0.0);
  a.correct = a.bad_values == 0 && a.max_rel_err <= a.tolerance && a.rel_norm_err <= a.tolerance;
  return a;
}

/// compare_within() with the tolerance of an FP32 product with inner dimension K.
template <typename Out, typename Ref>
Accuracy compare(const Out* out, const Ref* ref, std::size_t n, int K,
                 NonFinite non_finite = NonFinite::Forbidden) {
  return compare_within(out, ref, n, tolerance_for_k(K), non_finite);
}

}  // namespace ladder
