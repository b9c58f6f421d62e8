// Chapter 07's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch07 {

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
/// Rows of the A tile that all threads copy together, one float4 each.
constexpr int A_ROW_STRIDE = 4 * NUM_THREADS / BK;
/// Rows of the B tile that all threads copy together, one float4 each.
constexpr int B_ROW_STRIDE = 4 * NUM_THREADS / BN;
/// float4s of the A tile that each thread copies per step.
constexpr int A_COPIES = BM / A_ROW_STRIDE;
/// float4s of the B tile that each thread copies per step.
constexpr int B_COPIES = BK / B_ROW_STRIDE;

static_assert(BM % TM == 0 && BN % TN == 0, "the threads' TM x TN blocks must tile BM x BN");
static_assert(BK % 4 == 0 && BN % 4 == 0, "tile rows must split into whole float4s");
static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's operands must split into whole float4s");
static_assert((4 * NUM_THREADS) % BK == 0 && BM % A_ROW_STRIDE == 0,
              "the threads' float4 copies must cover the BM x BK A tile exactly");
static_assert((4 * NUM_THREADS) % BN == 0 && BK % B_ROW_STRIDE == 0,
              "the threads' float4 copies must cover the BK x BN B tile exactly");

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
__host__ __device__ constexpr int a_copy_row(int tid, int c) {
  return tid / (BK / 4) + c * A_ROW_STRIDE;
}
/// First of the four columns of the BM x BK A tile that thread `tid` copies
/// (in every copy).
__host__ __device__ constexpr int a_copy_col(int tid) { return (tid % (BK / 4)) * 4; }
/// Row of the BK x BN B tile that thread `tid` copies in its copy number `c`
/// (0 .. B_COPIES-1): the block copies B_ROW_STRIDE rows at a time.
__host__ __device__ constexpr int b_copy_row(int tid, int c) {
  return tid / (BN / 4) + c * B_ROW_STRIDE;
}
/// First of the four columns of the BK x BN B tile that thread `tid` copies
/// (in every copy).
__host__ __device__ constexpr int b_copy_col(int tid) { return (tid % (BN / 4)) * 4; }

/// Index in As (BK x BM: the A tile transposed, row-major) at which thread
/// `tid` stores element `e` (0 .. 3) of the float4 of its copy `c`: that
/// float is A tile element (a_copy_row(tid, c), a_copy_col(tid) + e), so it
/// goes to As[a_copy_col(tid) + e][a_copy_row(tid, c)]. A 4-byte store.
__host__ __device__ constexpr int a_store_index(int tid, int c, int e) {
  return (a_copy_col(tid) + e) * BM + a_copy_row(tid, c);
}

/// Index in Bs (BK x BN, row-major) at which thread `tid` stores the float4
/// of its copy `c`: Bs[b_copy_row(tid, c)][b_copy_col(tid) .. + 3]. A
/// 16-byte store; the index is a multiple of 4.
__host__ __device__ constexpr int b_store_index(int tid, int c) {
  return b_copy_row(tid, c) * BN + b_copy_col(tid);
}

/// Index in As of the A operands of rows `i` .. `i` + 3 of thread `tid`'s
/// block in step `dot_idx`: As[dot_idx][thread_row(tid) * TM + i .. + 3].
/// A 16-byte load; `i` is a multiple of 4.
__host__ __device__ constexpr int a_load_index(int tid, int dot_idx, int i) {
  return dot_idx * BM + thread_row(tid) * TM + i;
}

/// Index in Bs of the B operands of columns `j` .. `j` + 3 of thread `tid`'s
/// block in step `dot_idx`: Bs[dot_idx][thread_col(tid) * TN + j .. + 3].
/// A 16-byte load; `j` is a multiple of 4.
__host__ __device__ constexpr int b_load_index(int tid, int dot_idx, int j) {
  return dot_idx * BN + thread_col(tid) * TN + j;
}
// [end]

// [float4]
/// Reads the four floats at `p` with one 16-byte access; `p` must be 16-byte aligned.
__device__ float4 load_float4(const float* p) { return *reinterpret_cast<const float4*>(p); }

/// Writes four floats to `p` with one 16-byte access; `p` must be 16-byte aligned.
__device__ void store_float4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C, each thread computing a TM x TN block
/// of C as a sum of outer products, with 16-byte global and shared-memory
/// accesses and the A tile stored transposed.
///
/// Block (x, y) of the grid computes the BM x BN tile of C whose first row is
/// y * BM and whose first column is x * BN. For each step of BK along K, its
/// NUM_THREADS threads copy A_COPIES float4s of A (scattered transposed
/// into As) and B_COPIES float4s of B each, synchronize, and for every one
/// of the BK steps load TM floats of A and TN floats of B into registers,
/// four at a time, and add their outer product to the TM x TN results.
///
/// @pre M % BM == 0, N % BN == 0 and K % BK == 0 (see accepts()); with BK
///      and BN multiples of 4, every float4 access is then 16-byte aligned
///      (A, B and C themselves must be, as cudaMalloc's pointers are).
/// @pre blockDim.x == NUM_THREADS, gridDim.x * BN == N and gridDim.y * BM == M.
__global__ void __launch_bounds__(NUM_THREADS)
    sgemm_vectorized(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                     float* C) {
  __shared__ __align__(16) float As[BK * BM];  // the A tile transposed: BK steps of K x BM rows
  __shared__ __align__(16) float Bs[BK * BN];  // the B tile: BK steps of K x BN columns of C

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
      // Four consecutive k of one row of A land in four rows of As.
      const float4 a =
          load_float4(&A[(block_row + a_copy_row(tid, c)) * K + tile_k + a_copy_col(tid)]);
      As[a_store_index(tid, c, 0)] = a.x;
      As[a_store_index(tid, c, 1)] = a.y;
      As[a_store_index(tid, c, 2)] = a.z;
      As[a_store_index(tid, c, 3)] = a.w;
    }
#pragma unroll
    for (int c = 0; c < B_COPIES; ++c) {
      store_float4(
          &Bs[b_store_index(tid, c)],
          load_float4(&B[(tile_k + b_copy_row(tid, c)) * N + block_col + b_copy_col(tid)]));
    }
    // The tiles are complete: any thread may now read any element.
    __syncthreads();
    // [end load-tile]

    // [compute-tile]
    // Unrolled as in chapter 06, though the 16-byte loads below no longer
    // depend on it: they are written out.
#pragma unroll
    for (int dot_idx = 0; dot_idx < BK; ++dot_idx) {
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 a = load_float4(&As[a_load_index(tid, dot_idx, i)]);
        reg_m[i + 0] = a.x;
        reg_m[i + 1] = a.y;
        reg_m[i + 2] = a.z;
        reg_m[i + 3] = a.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 b = load_float4(&Bs[b_load_index(tid, dot_idx, j)]);
        reg_n[j + 0] = b.x;
        reg_n[j + 1] = b.y;
        reg_n[j + 2] = b.z;
        reg_n[j + 3] = b.w;
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
    for (int j = 0; j < TN; j += 4) {
      const int row = block_row + thread_row(tid) * TM + i;
      const int col = block_col + thread_col(tid) * TN + j;
      // BLAS semantics: with beta == 0, C is output only and is never read.
      const float4 c_in =
          (beta == 0.0f) ? make_float4(0.0f, 0.0f, 0.0f, 0.0f) : load_float4(&C[row * N + col]);
      float4 c;
      c.x = alpha * acc[i * TN + j + 0] + beta * c_in.x;
      c.y = alpha * acc[i * TN + j + 1] + beta * c_in.y;
      c.z = alpha * acc[i * TN + j + 2] + beta * c_in.z;
      c.w = alpha * acc[i * TN + j + 3] + beta * c_in.w;
      store_float4(&C[row * N + col], c);
    }
  }
  // [end store-c]
}
// [end]

// [launch]
/// @brief Launches sgemm_vectorized: one block of NUM_THREADS threads per
/// BM x BN tile of C; the grid's x dimension covers the N columns and its y
/// dimension the M rows.
/// @pre accepts(g.M, g.N, g.K) is empty.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(NUM_THREADS);
  const dim3 grid(g.N / BN, g.M / BM);
  sgemm_vectorized<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
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
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_vectorized), NUM_THREADS, 0};
  return {"07-vectorized",
          "Vectorized 128-bit access",
          __FILE__,
          {{ladder::kDefaultVariant,
            "Vectorized 128-bit access",
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

}  // namespace ch07
