// Chapter 02's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch02 {

// [kernel]
/// Row of C that the thread at (x, y) in the grid computes, where x =
/// blockIdx.x * blockDim.x + threadIdx.x and y = blockIdx.y * blockDim.y +
/// threadIdx.y: the y index.
__host__ __device__ constexpr int c_row(int /*x*/, int y) { return y; }
/// Column of C that the thread at (x, y) in the grid computes: the x index.
__host__ __device__ constexpr int c_col(int x, int /*y*/) { return x; }

/// @brief C = alpha * A * B + beta * C with one thread per element of C,
/// consecutive lanes on consecutive columns.
///
/// Thread (x, y) of the grid computes C[row][col] with col taken from the x
/// index and row from the y index (c_row and c_col). The lanes of a warp
/// differ in x only, so in every step of the k loop they read one float of A
/// (a broadcast) and 32 neighbouring floats of a row of B, and at the end they
/// write 32 neighbouring floats of C: each warp-wide access is one contiguous
/// 128-byte segment instead of 32 segments K or N floats apart.
///
/// @pre blockDim.x * gridDim.x >= N and blockDim.y * gridDim.y >= M.
__global__ void sgemm_coalesced(int M, int N, int K, float alpha, const float* A, const float* B,
                                float beta, float* C) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;  // the thread's place in the grid
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int row = c_row(x, y);
  const int col = c_col(x, y);
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += A[row * K + k] * B[k * N + col];
    }
    // BLAS semantics: with beta == 0, C is output only and is never read
    // (it may hold anything, NaN included).
    const float c_in = (beta == 0.0f) ? 0.0f : beta * C[row * N + col];
    C[row * N + col] = alpha * sum + c_in;
  }
}
// [end]

// [launch]
/// Side of the square thread block: 32 x 32 = 1024 threads.
constexpr int BLOCK = 32;

/// @brief Launches sgemm_coalesced with one thread per element of C; the
/// grid's x dimension covers the N columns and its y dimension the M rows.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(ladder::ceil_div(g.N, BLOCK), ladder::ceil_div(g.M, BLOCK));
  sgemm_coalesced<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}
// [end]

// [describe]
/// @brief This chapter as the runner and --describe see it: one variant, its
/// kernel and the constants of its tiling.
inline ladder::Chapter chapter() {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_coalesced), BLOCK * BLOCK, 0};
  return {"02-coalescing",
          "Global-memory coalescing",
          __FILE__,
          {{ladder::kDefaultVariant,
            "Global-memory coalescing",
            launch,
            ladder::accepts_any_size,
            kernel,
            {{"BLOCK", BLOCK}}}}};
}
// [end]

}  // namespace ch02
