// Chapter 06's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch06 {

// [tile]
/// Rows of the tile of C that one block computes (and rows of its A tile).
constexpr int BM = 128;
/// Columns of the tile of C that one block computes (and columns of its B tile).
constexpr int BN = 128;
/// The step along K: the A tile is BM x BK and the B tile is BK x BN.
constexpr int BK = 8;
/// Rows of the block of C that one thread computes.
constexpr int TM = 8;
/// Columns of the block of C that one thread computes.
constexpr int TN = 8;
/// Threads per block: one per TM x TN block of the BM x BN tile of C.
constexpr int NUM_THREADS = (BM / TM) * (BN / TN);
/// Rows of the A tile that all threads copy together, one float each.
constexpr int A_ROW_STRIDE = NUM_THREADS / BK;
/// Rows of the B tile that all threads copy together, one float each.
constexpr int B_ROW_STRIDE = NUM_THREADS / BN;
/// Floats of the A tile that each thread copies per step.
constexpr int A_COPIES = BM / A_ROW_STRIDE;
/// Floats of the B tile that each thread copies per step.
constexpr int B_COPIES = BK / B_ROW_STRIDE;

static_assert(BM % TM == 0 && BN % TN == 0, "the threads' TM x TN blocks must tile BM x BN");
static_assert(NUM_THREADS % BK == 0 && BM % A_ROW_STRIDE == 0,
              "the threads' copies must cover the BM x BK A tile exactly");
static_assert(NUM_THREADS % BN == 0 && BK % B_ROW_STRIDE == 0,
              "the threads' copies must cover the BK x BN B tile exactly");

/// Block row of thread `tid`: it computes rows thread_row(tid) * TM + i,
/// i = 0 .. TM-1, of the block's tile of C.
__host__ __device__ constexpr int thread_row(int tid) { return tid / (BN / TN); }

/// Block column of thread `tid`: it computes columns thread_col(tid) * TN + j,
/// j = 0 .. TN-1, of the block's tile of C.
__host__ __device__ constexpr int thread_col(int tid) { return tid % (BN / TN); }
// [end]

// [smem-index]
/// Row of the BM x BK A tile that thread `tid` copies in its copy number `c`
/// (0 .. A_COPIES-1): the block copies A_ROW_STRIDE rows at a time.
__host__ __device__ constexpr int a_copy_row(int tid, int c) { return tid / BK + c * A_ROW_STRIDE; }
/// Column of the BM x BK A tile that thread `tid` copies (in every copy).
__host__ __device__ constexpr int a_copy_col(int tid) { return tid % BK; }
/// Row of the BK x BN B tile that thread `tid` copies in its copy number `c`
/// (0 .. B_COPIES-1): the block copies B_ROW_STRIDE rows at a time.
__host__ __device__ constexpr int b_copy_row(int tid, int c) { return tid / BN + c * B_ROW_STRIDE; }
/// Column of the BK x BN B tile that thread `tid` copies (in every copy).
__host__ __device__ constexpr int b_copy_col(int tid) { return tid % BN; }

/// Index in As (BM x BK, row-major) at which thread `tid` stores the float
/// of A of its copy `c`: As[a_copy_row(tid, c)][a_copy_col(tid)].
__host__ __device__ constexpr int a_store_index(int tid, int c) {
  return a_copy_row(tid, c) * BK + a_copy_col(tid);
}

/// Index in Bs (BK x BN, row-major) at which thread `tid` stores the float
/// of B of its copy `c`: Bs[b_copy_row(tid, c)][b_copy_col(tid)].
__host__ __device__ constexpr int b_store_index(int tid, int c) {
  return b_copy_row(tid, c) * BN + b_copy_col(tid);
}

/// Index in As of the A operand of row `i` of thread `tid`'s block in step
/// `dot_idx`: As[thread_row(tid) * TM + i][dot_idx].
__host__ __device__ constexpr int a_load_index(int tid, int dot_idx, int i) {
  return (thread_row(tid) * TM + i) * BK + dot_idx;
}

/// Index in Bs of the B operand of column `j` of thread `tid`'s block in
/// step `dot_idx`: Bs[dot_idx][thread_col(tid) * TN + j].
__host__ __device__ constexpr int b_load_index(int tid, int dot_idx, int j) {
  return dot_idx * BN + thread_col(tid) * TN + j;
}
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C, each thread computing a TM x TN block
/// of C as a sum of outer products of register-held columns of A and rows
/// of B.
///
/// Block (x, y) of the grid computes the BM x BN tile of C whose first row is
/// y * BM and whose first column is x * BN. For each step of BK along K, its
/// NUM_THREADS threads copy A_COPIES floats of A and B_COPIES floats of B
/// each into shared memory, synchronize, and for every one of the BK steps
/// load TM floats of A and TN floats of B into registers and add their
/// outer product to the TM x TN results.
///
/// @pre M % BM == 0, N % BN == 0 and K % BK == 0 (see accepts()).
/// @pre blockDim.x == NUM_THREADS, gridDim.x * BN == N and gridDim.y * BM == M.
__global__ void __launch_bounds__(NUM_THREADS)
    sgemm_2d_tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                   float* C) {
  __shared__ float As[BM * BK];  // the A tile: BM rows of C x BK steps of K
  __shared__ float Bs[BK * BN];  // the B tile: BK steps of K x BN columns of C

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM;  // first row of the block's tile of C
  const int block_col = blockIdx.x * BN;  // first column of the block's tile of C

  float acc[TM * TN] = {};  // acc[i * TN + j]: element (i, j) of the thread's block of C
  float reg_m[TM];          // this step's TM operands from A, one per row of the block
  float reg_n[TN];          // this step's TN operands from B, one per column of the block
  for (int tile_k = 0; tile_k < K; tile_k += BK) {
    // [load-tile]
#pragma unroll
    for (int c = 0; c < A_COPIES; ++c) {
      As[a_store_index(tid, c)] =
          A[(block_row + a_copy_row(tid, c)) * K + tile_k + a_copy_col(tid)];
    }
#pragma unroll
    for (int c = 0; c < B_COPIES; ++c) {
      Bs[b_store_index(tid, c)] =
          B[(tile_k + b_copy_row(tid, c)) * N + block_col + b_copy_col(tid)];
    }
    // The tiles are complete: any thread may now read any element.
    __syncthreads();
    // [end load-tile]

    // [compute-tile]
    // Unrolled: with dot_idx a constant in every copy, the compiler can merge a
    // thread's BK reads of one row of As into 16-byte loads.
#pragma unroll
    for (int dot_idx = 0; dot_idx < BK; ++dot_idx) {
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        reg_m[i] = As[a_load_index(tid, dot_idx, i)];
      }
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        reg_n[j] = Bs[b_load_index(tid, dot_idx, j)];
      }
      // The outer product: TM + TN loads above feed TM * TN multiply-adds here.
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          acc[i * TN + j] += reg_m[i] * reg_n[j];
        }
      }
    }
    // Every thread is done reading: the next step may overwrite the tiles.
    __syncthreads();
    // [end compute-tile]
  }

  // [store-c]
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int row = block_row + thread_row(tid) * TM + i;
      const int col = block_col + thread_col(tid) * TN + j;
      // BLAS semantics: with beta == 0, C is output only and is never read.
      const float c_in = (beta == 0.0f) ? 0.0f : beta * C[row * N + col];
      C[row * N + col] = alpha * acc[i * TN + j] + c_in;
    }
  }
  // [end store-c]
}
// [end]

// [launch]
/// @brief Launches sgemm_2d_tiled: one block of NUM_THREADS threads per
/// BM x BN tile of C; the grid's x dimension covers the N columns and its y
/// dimension the M rows.
/// @pre accepts(g.M, g.N, g.K) is empty.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(NUM_THREADS);
  const dim3 grid(g.N / BN, g.M / BM);
  sgemm_2d_tiled<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
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
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_2d_tiled), NUM_THREADS, 0};
  return {"06-2d-register-tiling",
          "2D register tiling",
          __FILE__,
          {{ladder::kDefaultVariant,
            "2D register tiling",
            launch,
            accepts,
            kernel,
            {{"BM", BM},
             {"BN", BN},
             {"BK", BK},
             {"TM", TM},
             {"TN", TN},
             {"NUM_THREADS", NUM_THREADS},
             {"A_ROW_STRIDE", A_ROW_STRIDE},
             {"B_ROW_STRIDE", B_ROW_STRIDE},
             {"A_COPIES", A_COPIES},
             {"B_COPIES", B_COPIES}}}}};
}
// [end]

}  // namespace ch06
