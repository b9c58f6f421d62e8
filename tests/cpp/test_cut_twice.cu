// A GPU test of chapter 17's cut last round (label "gpu"; without an sm_90
// GPU it exits with 77, which CTest reports as skipped).
//
// The slices of a cut tile add up inside the kernel, through two counters
// per cut tile that the tile's last slice sets back to zero (add_slices()).
// A counter left above zero would let the next launch's slices add up sums
// that are not yet written. So this launches one cut product three times in
// one process and checks, after each launch:
//   * the launch wrote its slices' sums into the workspace (it was cut);
//   * every counter reads zero;
//   * C is the same, bit for bit, as after the first launch (the slices add
//     in the order of K, so the sum does not depend on which slice is last);
//   * sampled elements of C agree with a double-precision product on the
//     host to 3xTF32's accuracy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "chapters/17-3xtf32-wgmma/kernel.cuh"

namespace {

using Tile = ch16::Split;  // the 128-row 3xTF32 tile, truncated split

/// A square size whose last round the tile cuts on `sms` SMs, or 0.
int cut_size(int sms) {
  for (int n = 1024; n <= 4096; n += 256)
    if (ch16::last_round<Tile>(n, n, n, sms).slices > 1) return n;
  return 0;
}

/// How many of the counters are not zero.
int counters_not_zero() {
  std::vector<int> written(ch16::kMaxCutTiles), added(ch16::kMaxCutTiles);
  CUDA_CHECK(
      cudaMemcpyFromSymbol(written.data(), ch16::slices_written, written.size() * sizeof(int)));
  CUDA_CHECK(cudaMemcpyFromSymbol(added.data(), ch16::slices_added, added.size() * sizeof(int)));
  int not_zero = 0;
  for (int i = 0; i < ch16::kMaxCutTiles; ++i) not_zero += (written[i] != 0) + (added[i] != 0);
  return not_zero;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("cut-twice: no GPU, skipped");
    return 77;
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (!ch16::unsupported_gpu(prop).empty()) {
    std::printf("cut-twice: %s; skipped\n", ch16::unsupported_gpu(prop).c_str());
    return 77;
  }
  const int sms = prop.multiProcessorCount;
  const int n = cut_size(sms);
  if (n == 0) {
    std::printf("cut-twice: FAILED, no size from 1024 to 4096 is cut on %d SMs\n", sms);
    return 1;
  }
  const ch16::LastRound cut = ch16::last_round<Tile>(n, n, n, sms);
  std::printf("cut-twice: %d^3 on %d SMs, %d of %d tiles cut into %d slices\n", n, sms,
              cut.tiles - cut.whole_tiles, cut.tiles, cut.slices);

  const size_t elements = static_cast<size_t>(n) * n;
  std::vector<float> a(elements), b(elements);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& x : a) x = uniform(rng);
  for (float& x : b) x = uniform(rng);
  // The chapter's own workspace, which has room for the slices.
  const long long workspace_floats = ch17::workspace_3xtf32(n, n, n);
  float *A, *B, *C, *workspace;
  CUDA_CHECK(cudaMalloc(&A, elements * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&B, elements * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&C, elements * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&workspace, workspace_floats * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(A, a.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(B, b.data(), elements * sizeof(float), cudaMemcpyHostToDevice));

  const ladder::Gemm g{n, n, n, 1.0f, A, B, 0.0f, C, workspace, workspace_floats};
  std::vector<float> first(elements), again(elements);
  std::vector<uint32_t> scratch(workspace_floats);
  int failures = 0;
  for (int launch = 1; launch <= 3; ++launch) {
    // 0xFF bytes: NaN in C, which beta == 0 must not read, and a mark in
    // the workspace that only a cut launch's slices overwrite.
    CUDA_CHECK(cudaMemset(C, 0xFF, elements * sizeof(float)));
    CUDA_CHECK(cudaMemset(workspace, 0xFF, workspace_floats * sizeof(float)));
    ch16::launch<Tile>(g, nullptr);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(launch == 1 ? first.data() : again.data(), C, elements * sizeof(float),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(scratch.data(), workspace, workspace_floats * sizeof(float),
                          cudaMemcpyDeviceToHost));
    // A's parts come first in the workspace (convert_a() writes them on
    // every launch); the slices' sums after them.
    const long long parts = ch16::parts_floats<Tile>(n, n);
    if (std::count(scratch.begin() + parts, scratch.end(), 0xFFFFFFFFu) ==
        workspace_floats - parts) {
      std::printf("cut-twice: FAILED, launch %d wrote no slice's sums: it was not cut\n", launch);
      ++failures;
    }
    const int not_zero = counters_not_zero();
    if (not_zero != 0) {
      std::printf("cut-twice: FAILED, %d counters not zero after launch %d\n", not_zero, launch);
      ++failures;
    }
    if (launch > 1 && std::memcmp(first.data(), again.data(), elements * sizeof(float)) != 0) {
      std::printf("cut-twice: FAILED, launch %d's C differs from launch 1's\n", launch);
      ++failures;
    }
  }

  // Sampled elements against a double-precision product.
  std::uniform_int_distribution<int> index(0, n - 1);
  double worst = 0.0;
  for (int s = 0; s < 256; ++s) {
    const int m = index(rng), j = index(rng);
    double exact = 0.0, size = 0.0;
    for (int k = 0; k < n; ++k) {
      const double p = static_cast<double>(a[static_cast<size_t>(m) * n + k]) *
                       b[static_cast<size_t>(k) * n + j];
      exact += p;
      size += std::fabs(p);
    }
    const double error = std::fabs(first[static_cast<size_t>(m) * n + j] - exact) / size;
    if (!(error <= worst)) worst = error;  // a NaN sticks
  }
  // A sum of n products in FP32 errs by about sqrt(n) * 2^-24 of the sum of
  // their sizes (under 4e-6 for n <= 4096); a slice missed or added twice
  // errs by a good part of the sum. 1e-5 tells the two apart.
  if (!(worst < 1e-5)) {
    std::printf("cut-twice: FAILED, worst sampled error %.3g of the products' sizes\n", worst);
    ++failures;
  }
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
  CUDA_CHECK(cudaFree(workspace));
  if (failures == 0)
    std::printf("cut-twice: passed (3 launches, counters zero, C the same; error %.3g)\n", worst);
  return failures == 0 ? 0 : 1;
}
