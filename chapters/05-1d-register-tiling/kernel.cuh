// Chapter 05's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch05 {

// [tile]
/// Rows of the tile of C that one block computes (and rows of its A tile).
constexpr int BM = 64;
/// Columns of the tile of C that one block computes (and columns of its B tile).
constexpr int BN = 64;
/// The step along K: the A tile is BM x BK and the B tile is BK x BN.
constexpr int BK = 8;
/// Elements of C that one thread computes, consecutive rows of one column.
constexpr int TM = 8;
/// Threads per block: one per TM x 1 strip of the BM x BN tile of C.
constexpr int NUM_THREADS = (BM / TM) * BN;

static_assert(BM % TM == 0, "the threads' TM-row strips must tile the BM rows exactly");
static_assert(NUM_THREADS == BM * BK, "each thread copies exactly one float of the A tile");
static_assert(NUM_THREADS == BK * BN, "each thread copies exactly one float of the B tile");

/// Strip row of thread `tid`: it computes rows thread_row(tid) * TM + i,
/// i = 0 .. TM-1, of the block's tile of C. A warp (32 < BN) shares one.
__host__ __device__ constexpr int thread_row(int tid) { return tid / BN; }

/// Column of the block's tile of C in which thread `tid` computes its strip.
/// Consecutive lanes get consecutive columns.
__host__ __device__ constexpr int thread_col(int tid) { return tid % BN; }
// [end]

// [smem-index]
/// Row of the BM x BK A tile that thread `tid` copies from global memory.
__host__ __device__ constexpr int a_copy_row(int tid) { return tid / BK; }
/// Column of the BM x BK A tile that thread `tid` copies.
__host__ __device__ constexpr int a_copy_col(int tid) { return tid % BK; }
/// Row of the BK x BN B tile that thread `tid` copies from global memory.
__host__ __device__ constexpr int b_copy_row(int tid) { return tid / BN; }
/// Column of the BK x BN B tile that thread `tid` copies.
__host__ __device__ constexpr int b_copy_col(int tid) { return tid % BN; }

/// Index in As (BM x BK, row-major) at which thread `tid` stores the float
/// of A it copied: As[a_copy_row(tid)][a_copy_col(tid)].
__host__ __device__ constexpr int a_store_index(int tid) {
  return a_copy_row(tid) * BK + a_copy_col(tid);
}

/// Index in Bs (BK x BN, row-major) at which thread `tid` stores the float
/// of B it copied: Bs[b_copy_row(tid)][b_copy_col(tid)].
__host__ __device__ constexpr int b_store_index(int tid) {
  return b_copy_row(tid) * BN + b_copy_col(tid);
}

/// Index in As of the A operand of product `i` of thread `tid` in step
/// `dot_idx`: As[thread_row(tid) * TM + i][dot_idx], one word for the whole
/// warp (a broadcast).
__host__ __device__ constexpr int a_load_index(int tid, int dot_idx, int i) {
  return (thread_row(tid) * TM + i) * BK + dot_idx;
}

/// Index in Bs of the B operand that thread `tid` reads in step `dot_idx`:
/// Bs[dot_idx][thread_col(tid)], consecutive words for consecutive lanes.
__host__ __device__ constexpr int b_load_index(int tid, int dot_idx) {
  return dot_idx * BN + thread_col(tid);
}
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C, each thread computing a TM x 1 strip
/// of C from BM x BK and BK x BN tiles staged in shared memory.
///
/// Block (x, y) of the grid computes the BM x BN tile of C whose first row is
/// y * BM and whose first column is x * BN. For each step of BK along K, its
/// NUM_THREADS threads each copy one float of A and one of B into shared
/// memory, synchronize, and accumulate BK products into each of their TM
/// results, reading the shared B operand once per step into a register.
///
/// @pre M % BM == 0, N % BN == 0 and K % BK == 0 (see accepts()).
/// @pre blockDim.x == NUM_THREADS, gridDim.x * BN == N and gridDim.y * BM == M.
__global__ void __launch_bounds__(NUM_THREADS)
    sgemm_1d_tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                   float* C) {
  __shared__ float As[BM * BK];  // the A tile: BM rows of C x BK steps of K
  __shared__ float Bs[BK * BN];  // the B tile: BK steps of K x BN columns of C

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM;  // first row of the block's tile of C
  const int block_col = blockIdx.x * BN;  // first column of the block's tile of C

  float acc[TM] = {};  // acc[i]: C[thread_row * TM + i][thread_col] of the tile, so far
  for (int tile_k = 0; tile_k < K; tile_k += BK) {
    // [load-tile]
    // A warp copies 32 consecutive floats of B, and four 8-float row pieces of A.
    As[a_store_index(tid)] = A[(block_row + a_copy_row(tid)) * K + tile_k + a_copy_col(tid)];
    Bs[b_store_index(tid)] = B[(tile_k + b_copy_row(tid)) * N + block_col + b_copy_col(tid)];
    // The tiles are complete: any thread may now read any element.
    __syncthreads();
    // [end load-tile]

    // [compute-tile]
    // Unrolled: with dot_idx a constant in every copy, the compiler can merge a
    // thread's BK reads of one row of As into 16-byte loads.
#pragma unroll
    for (int dot_idx = 0; dot_idx < BK; ++dot_idx) {
      // One B operand serves all TM products of this step: read it once.
      const float b = Bs[b_load_index(tid, dot_idx)];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        acc[i] += As[a_load_index(tid, dot_idx, i)] * b;
      }
    }
    // Every thread is done reading: the next step may overwrite the tiles.
    __syncthreads();
    // [end compute-tile]
  }

  // [store-c]
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + thread_row(tid) * TM + i;
    const int col = block_col + thread_col(tid);
    // BLAS semantics: with beta == 0, C is output only and is never read.
    const float c_in = (beta == 0.0f) ? 0.0f : beta * C[row * N + col];
    C[row * N + col] = alpha * acc[i] + c_in;
  }
  // [end store-c]
}
// [end]

// [launch]
/// @brief Launches sgemm_1d_tiled: one block of NUM_THREADS threads per
/// BM x BN tile of C; the grid's x dimension covers the N columns and its y
/// dimension the M rows.
/// @pre accepts(g.M, g.N, g.K) is empty.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(NUM_THREADS);
  const dim3 grid(g.N / BN, g.M / BM);
  sgemm_1d_tiled<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}
// [end]

// [accepts]
/// @brief Says why an M x N x K product cannot be computed, or returns an
/// empty string: the kernel has no bounds checks, so every tile must be full.
std::string accepts(int M, int N, int K) {
  if (M % BM != 0) return "M must be a multiple of " + std::to_string(BM) + " (BM)";
  if (N % BN != 0) return "N must be a multiple of " + std::to_string(BN) + " (BN)";
  if (K % BK != 0) return "K must be a multiple of " + std::to_string(BK) + " (BK)";
  return {};
}
// [end]

// [describe]
/// @brief This chapter as the runner and --describe see it: one variant, its
/// kernel and the constants of its tiling.
inline ladder::Chapter chapter() {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_1d_tiled), NUM_THREADS, 0};
  return {"05-1d-register-tiling",
          "1D register tiling",
          __FILE__,
          {{ladder::kDefaultVariant,
            "1D register tiling",
            launch,
            accepts,
            kernel,
            {{"BM", BM}, {"BN", BN}, {"BK", BK}, {"TM", TM}, {"NUM_THREADS", NUM_THREADS}}}}};
}
// [end]

}  // namespace ch05
