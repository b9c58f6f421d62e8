// Chapter 04's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch04 {

// [tile]
/// Side of the square tiles: a block computes a BLOCK x BLOCK tile of C, one
/// element per thread, and steps along K by
/// BLOCK, holding a BLOCK x BLOCK tile of A and one of B in shared memory.
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

// [smem-index]
/// Index of element (row, col) of a BLOCK x BLOCK row-major tile held in
/// shared memory: consecutive columns are consecutive 4-byte words.
__host__ __device__ constexpr int tile_index(int row, int col) { return row * BLOCK + col; }

/// Index in As at which thread `tid` stores the float of A it copied: the
/// thread copies element (tile_row(tid), tile_col(tid)) of the A tile.
__host__ __device__ constexpr int a_store_index(int tid) {
  return tile_index(tile_row(tid), tile_col(tid));
}

/// Index in Bs at which thread `tid` stores the float of B it copied: the
/// thread copies element (tile_row(tid), tile_col(tid)) of the B tile.
__host__ __device__ constexpr int b_store_index(int tid) {
  return tile_index(tile_row(tid), tile_col(tid));
}

/// Index in As of the A operand that thread `tid` reads in step `dot_idx` of
/// the dot product: As[tile_row(tid)][dot_idx], the same word for the whole
/// warp (a broadcast).
__host__ __device__ constexpr int a_load_index(int tid, int dot_idx) {
  return tile_index(tile_row(tid), dot_idx);
}

/// Index in Bs of the B operand that thread `tid` reads in step `dot_idx` of
/// the dot product: Bs[dot_idx][tile_col(tid)], 32 consecutive words for the
/// 32 lanes of a warp.
__host__ __device__ constexpr int b_load_index(int tid, int dot_idx) {
  return tile_index(dot_idx, tile_col(tid));
}
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C, staging BLOCK x BLOCK tiles of A and B
/// in shared memory.
///
/// Block (x, y) of the grid computes the BLOCK x BLOCK tile of C whose first
/// row is y * BLOCK and whose first column is x * BLOCK; thread `tid` of the
/// block computes element (tile_row(tid), tile_col(tid)) of that tile. For
/// each step of BLOCK along K, the block copies the matching tiles of A and
/// B into shared memory, synchronizes, accumulates BLOCK products per thread
/// from shared memory, and synchronizes again before the tiles are
/// overwritten.
///
/// @pre M, N and K are multiples of BLOCK (see accepts()).
/// @pre blockDim.x == NUM_THREADS, gridDim.x * BLOCK == N and
///      gridDim.y * BLOCK == M.
__global__ void __launch_bounds__(NUM_THREADS)
    sgemm_smem_tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                     float* C) {
  __shared__ float As[BLOCK * BLOCK];  // the A tile: BLOCK rows of C x BLOCK steps of K
  __shared__ float Bs[BLOCK * BLOCK];  // the B tile: BLOCK steps of K x BLOCK columns of C

  const int tid = threadIdx.x;
  const int row = blockIdx.y * BLOCK + tile_row(tid);
  const int col = blockIdx.x * BLOCK + tile_col(tid);

  float sum = 0.0f;
  for (int tile_k = 0; tile_k < K; tile_k += BLOCK) {
    // [load-tile]
    // Thread (r, c) of the tile copies A[row][tile_k + c] and B[tile_k + r][col]:
    // a warp copies 32 consecutive floats of one row of A and of one row of B.
    As[a_store_index(tid)] = A[row * K + tile_k + tile_col(tid)];
    Bs[b_store_index(tid)] = B[(tile_k + tile_row(tid)) * N + col];
    // The tiles are complete: any thread may now read any element.
    __syncthreads();
    // [end load-tile]

    // [compute-tile]
    for (int dot_idx = 0; dot_idx < BLOCK; ++dot_idx) {
      sum += As[a_load_index(tid, dot_idx)] * Bs[b_load_index(tid, dot_idx)];
    }
    // Every thread is done reading: the next step may overwrite the tiles.
    __syncthreads();
    // [end compute-tile]
  }
  // BLAS semantics: with beta == 0, C is output only and is never read
  // (it may hold anything, NaN included).
  const float c_in = (beta == 0.0f) ? 0.0f : beta * C[row * N + col];
  C[row * N + col] = alpha * sum + c_in;
}
// [end]

// [launch]
/// @brief Launches sgemm_smem_tiled: one block of NUM_THREADS threads per
/// BLOCK x BLOCK tile of C; the grid's x dimension covers the N columns and
/// its y dimension the M rows.
/// @pre accepts(g.M, g.N, g.K) is empty.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(NUM_THREADS);
  const dim3 grid(g.N / BLOCK, g.M / BLOCK);
  sgemm_smem_tiled<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}
// [end]

// [accepts]
/// @brief Says why an M x N x K product cannot be computed, or returns an
/// empty string: the kernel has no bounds checks, so every tile must be full.
std::string accepts(int M, int N, int K) {
  if (M % BLOCK != 0) return "M must be a multiple of " + std::to_string(BLOCK) + " (BLOCK)";
  if (N % BLOCK != 0) return "N must be a multiple of " + std::to_string(BLOCK) + " (BLOCK)";
  if (K % BLOCK != 0) return "K must be a multiple of " + std::to_string(BLOCK) + " (BLOCK)";
  return {};
}
// [end]

// [describe]
/// @brief This chapter as the runner and --describe see it: one variant, its
/// kernel and the constants of its tiling.
inline ladder::Chapter chapter() {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_smem_tiled), NUM_THREADS, 0};
  return {"04-smem-tiling",
          "Shared-memory tiling",
          __FILE__,
          {{ladder::kDefaultVariant,
            "Shared-memory tiling",
            launch,
            accepts,
            kernel,
            {{"BLOCK", BLOCK}, {"NUM_THREADS", NUM_THREADS}}}}};
}
// [end]

}  // namespace ch04
