// Chapter 03's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch03 {

// [tile]
/// Side of the square tile of C that one block computes: 32 x 32 elements.
constexpr int BLOCK = 32;
/// Threads per block, one per element of the tile of C: 1024.
constexpr int NUM_THREADS = BLOCK * BLOCK;

/// Row, inside the block's tile of C, of the element that thread `tid`
/// computes. The 32 lanes of a warp share one row.
__host__ __device__ constexpr int tile_row(int tid) { return tid / BLOCK; }

/// Column, inside the block's tile of C, of the element that thread `tid`
/// computes. The 32 lanes of a warp cover the 32 columns of their row.
__host__ __device__ constexpr int tile_col(int tid) { return tid % BLOCK; }
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C with one thread per element of C, in
/// one-dimensional blocks of NUM_THREADS threads.
///
/// Block (x, y) of the grid computes the BLOCK x BLOCK tile of C whose first
/// row is y * BLOCK and whose first column is x * BLOCK; thread `tid` of the
/// block computes element (tile_row(tid), tile_col(tid)) of that tile.
/// Consecutive lanes get consecutive columns, so the accesses stay coalesced
/// as in chapter 02.
///
/// @pre blockDim.x == NUM_THREADS, gridDim.x * BLOCK >= N and
///      gridDim.y * BLOCK >= M.
__global__ void __launch_bounds__(NUM_THREADS)
    sgemm_flat_block(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                     float* C) {
  const int row = blockIdx.y * BLOCK + tile_row(threadIdx.x);
  const int col = blockIdx.x * BLOCK + tile_col(threadIdx.x);
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
/// @brief Launches sgemm_flat_block: one block of NUM_THREADS threads per
/// BLOCK x BLOCK tile of C; the grid's x dimension covers the N columns and
/// its y dimension the M rows.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(NUM_THREADS);
  const dim3 grid(ladder::ceil_div(g.N, BLOCK), ladder::ceil_div(g.M, BLOCK));
  sgemm_flat_block<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}
// [end]

// [describe]
/// @brief This chapter as the runner and --describe see it: one variant, its
/// kernel and the constants of its tiling.
inline ladder::Chapter chapter() {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_flat_block), NUM_THREADS, 0};
  return {"03-flat-block",
          "Flattening the block",
          __FILE__,
          {{ladder::kDefaultVariant,
            "Flattening the block",
            launch,
            ladder::accepts_any_size,
            kernel,
            {{"BLOCK", BLOCK}, {"NUM_THREADS", NUM_THREADS}}}}};
}
// [end]

}  // namespace ch03
