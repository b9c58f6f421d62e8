// Chapter 01's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch01 {

// [kernel]
/// Row of C that the thread at (x, y) in the grid computes, where x =
/// blockIdx.x * blockDim.x + threadIdx.x and y = blockIdx.y * blockDim.y +
/// threadIdx.y: the x index.
__host__ __device__ constexpr int c_row(int x, int /*y*/) { return x; }
/// Column of C that the thread at (x, y) in the grid computes: the y index.
__host__ __device__ constexpr int c_col(int /*x*/, int y) { return y; }

/// @brief C = alpha * A * B + beta * C with one thread per element of C.
///
/// Thread (x, y) of the grid computes C[row][col] with row taken from the x
/// index and col from the y index (c_row and c_col). Consecutive lanes of a
/// warp therefore walk down a column of C and read rows of A that are K floats
/// apart: the accesses of one warp are not coalesced (chapter 02 fixes that).
///
/// @pre blockDim.x * gridDim.x >= M and blockDim.y * gridDim.y >= N.
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B,
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

/// @brief Launches sgemm_naive with one thread per element of C.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(ladder::ceil_div(g.M, BLOCK), ladder::ceil_div(g.N, BLOCK));
  sgemm_naive<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}
// [end]

// [describe]
/// @brief This chapter as the runner and --describe see it: one variant, its
/// kernel and the constants of its tiling.
inline ladder::Chapter chapter() {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_naive), BLOCK * BLOCK, 0};
  return {"01-naive",
          "Naive",
          __FILE__,
          {{ladder::kDefaultVariant,
            "Naive",
            launch,
            ladder::accepts_any_size,
            kernel,
            {{"BLOCK", BLOCK}}}}};
}
// [end]

}  // namespace ch01
