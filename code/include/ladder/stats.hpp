// Summaries of repeated timings.
#pragma once

#include <algorithm>
#include <vector>

namespace ladder {

/// Median, minimum and maximum of a set of timings, in milliseconds.
struct Summary {
  double median = 0;
  double min = 0;
  double max = 0;
};

/// Summarises `samples`; the median of an even count is the mean of the two
/// middle values. An empty set summarises to zeros.
inline Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

/// GFLOP/s of an M x N x K product (2*M*N*K floating-point operations).
inline double gflops(int M, int N, int K, double ms) {
  return ms > 0 ? 2.0 * M * N * K / (ms * 1e-3) / 1e9 : 0.0;
}

}  // namespace ladder
