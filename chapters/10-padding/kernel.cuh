// Chapter 10's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch10 {

// [layout]
/// How the transposed A tile is laid out in shared memory (see Tiling::A_STRIDE
/// and as_index()).
enum class ALayout {
  kPadded,    ///< rows of BM + 32 / BK floats: conflict-free stores
  kSwizzled,  ///< rows of BM floats, float4s XOR-permuted per row: conflict-free, 16-byte aligned
};
// [end]

// [rules]
/// Returns `sentence`, the rule that a tiling breaks. Deliberately not
/// constexpr: when Tiling's static_assert evaluates tiling_error() at compile
/// time, reaching this call is what stops the compiler, and the error it gives
/// quotes the line of the broken rule, sentence and all.
inline const char* broken_rule(const char* sentence) { return sentence; }

/// @brief Every rule that tile sizes must meet for the warp-tiled kernel to
/// compute the right result, over plain ints: Tiling checks its own sizes
/// with it at compile time, and the sweep's enumerator calls it on the host
/// for every point of its grid. The parameters are Tiling's (see there).
/// @return nullptr when the sizes meet every rule, otherwise the sentence of
///         the first rule they break.
constexpr const char* tiling_error(int BM, int BN, int BK, int WM, int WN, int WNITER, int TM,
                                   int TN, int NUM_THREADS, ALayout A_LAYOUT = ALayout::kPadded) {
  constexpr int WARP_SIZE = 32;
  if (BM < 1 || BN < 1 || BK < 1 || WM < 1 || WN < 1 || WNITER < 1 || TM < 1 || TN < 1 ||
      NUM_THREADS < 1) {
    return broken_rule("every tile size and the thread count must be positive");
  }
  if (NUM_THREADS % WARP_SIZE != 0 || NUM_THREADS > 1024) {
    return broken_rule("a block must be whole warps, at most 1024 threads");
  }
  if (BM % WM != 0 || BN % WN != 0) return broken_rule("warp tiles must tile the block tile");
  if ((BM / WM) * (BN / WN) != NUM_THREADS / WARP_SIZE) {
    return broken_rule("there must be one warp per warp tile");
  }
  if (WN % WNITER != 0) return broken_rule("WNITER sub-tiles must split WN evenly");
  if ((WM * WN) % (WARP_SIZE * TM * TN * WNITER) != 0) {
    return broken_rule("a warp tile must split into whole sub-tiles of 32 lanes x TM x TN");
  }
  // The derived sizes, as Tiling defines them; WMITER >= 1 after the rule above.
  const int WMITER = (WM * WN) / (WARP_SIZE * TM * TN * WNITER);
  const int WSUBM = WM / WMITER;
  const int WSUBN = WN / WNITER;
  if (WM % WMITER != 0) return broken_rule("WMITER sub-tiles must split WM evenly");
  if (WSUBM % TM != 0 || WSUBN % TN != 0) {
    return broken_rule("the lanes' TM x TN blocks must tile a sub-tile");
  }
  if ((WSUBM / TM) * (WSUBN / TN) != WARP_SIZE) {
    return broken_rule("the 32 lanes must cover a sub-tile exactly");
  }
  if (TM % 4 != 0 || TN % 4 != 0) {
    return broken_rule("a thread's operands must split into whole float4s");
  }
  if (BK % 4 != 0 || BN % 4 != 0) return broken_rule("tile rows must split into whole float4s");
  if ((4 * NUM_THREADS) % BK != 0 || BM % (4 * NUM_THREADS / BK) != 0) {
    return broken_rule("the threads' float4 copies must cover the BM x BK A tile exactly");
  }
  if ((4 * NUM_THREADS) % BN != 0 || BK % (4 * NUM_THREADS / BN) != 0) {
    return broken_rule("the threads' float4 copies must cover the BK x BN B tile exactly");
  }
  if (32 % BK != 0) return broken_rule("the layouts of As are derived for BK = 4, 8, 16 or 32");
  if (A_LAYOUT == ALayout::kSwizzled && BM % 32 != 0) {
    return broken_rule("the swizzle permutes float4s within 32-float rows of As: BM % 32 == 0");
  }
  const int A_STRIDE = BM + (A_LAYOUT == ALayout::kPadded ? 32 / BK : 0);
  if ((BK * A_STRIDE + BK * BN) * int(sizeof(float)) > 48 * 1024) {
    return broken_rule("static shared memory is limited to 48 KiB per block");
  }
  return nullptr;
}
// [end]

// [tiling]
/// @brief One configuration of the warp-tiled kernel: its tile sizes, the
/// quantities derived from them, and every rule they must meet for the
/// kernel to compute the right result (a configuration that compiles runs).
///
/// @tparam BM_ rows of the block tile of C (and of the A tile in shared memory)
/// @tparam BN_ columns of the block tile of C (and of the B tile)
/// @tparam BK_ the step along K: the A tile is BM x BK, the B tile BK x BN
/// @tparam WM_ rows of the tile of C that one warp computes
/// @tparam WN_ columns of the tile of C that one warp computes
/// @tparam WNITER_ sub-tiles across WN that a warp computes one after another
///         (WMITER, the count down WM, follows from the other sizes)
/// @tparam TM_ rows of the block of C that one thread computes per sub-tile
/// @tparam TN_ columns of the block of C that one thread computes per sub-tile
/// @tparam NUM_THREADS_ threads per block
/// @tparam A_LAYOUT_ the layout of the transposed A tile in shared memory
/// @tparam SERPENTINE_ the order of a thread's multiply-adds, as in chapter
///         09 (see outer_product()): 1, chapter 09's choice, by default; 0,
///         chapter 08's row by row order, for the measurement beside it
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WNITER_, int TM_, int TN_,
          int NUM_THREADS_, ALayout A_LAYOUT_ = ALayout::kPadded, int SERPENTINE_ = 1>
struct Tiling {
  static constexpr int BM = BM_;
  static constexpr int BN = BN_;
  static constexpr int BK = BK_;
  static constexpr int WM = WM_;
  static constexpr int WN = WN_;
  static constexpr int WNITER = WNITER_;
  static constexpr int TM = TM_;
  static constexpr int TN = TN_;
  static constexpr int NUM_THREADS = NUM_THREADS_;
  static constexpr ALayout A_LAYOUT = A_LAYOUT_;
  static constexpr int SERPENTINE = SERPENTINE_;
  static_assert(SERPENTINE == 0 || SERPENTINE == 1, "SERPENTINE is 0 (row by row) or 1");

  static constexpr int WARP_SIZE = 32;
  /// Warp tiles side by side across the BN columns of the block tile.
  static constexpr int WARPS_N = BN / WN;
  /// Sub-tiles down the WM rows of a warp tile: a warp covers WM x WN with
  /// WMITER * WNITER sub-tiles of 32 lanes x TM x TN elements each.
  static constexpr int WMITER = (WM * WN) / (WARP_SIZE * TM * TN * WNITER);
  /// Rows of one warp sub-tile.
  static constexpr int WSUBM = WM / WMITER;
  /// Columns of one warp sub-tile.
  static constexpr int WSUBN = WN / WNITER;
  /// Lanes side by side across the WSUBN columns of a sub-tile, TN columns each.
  static constexpr int LANES_N = WSUBN / TN;
  /// Rows of the A tile that all threads copy together, one float4 each.
  static constexpr int A_ROW_STRIDE = 4 * NUM_THREADS / BK;
  /// Rows of the B tile that all threads copy together, one float4 each.
  static constexpr int B_ROW_STRIDE = 4 * NUM_THREADS / BN;
  /// float4s of the A tile that each thread copies per step.
  static constexpr int A_COPIES = BM / A_ROW_STRIDE;
  /// float4s of the B tile that each thread copies per step.
  static constexpr int B_COPIES = BK / B_ROW_STRIDE;

  // [a-stride]
  // Why As needs padding. Thread tid stores element e of its float4 of A at
  // As[(a_copy_col + e) * stride + a_copy_row], in bank
  //   ((a_copy_col + e) * stride + a_copy_row) % 32.
  // Across the 32 lanes of one store, e is fixed and a_copy_col is a multiple
  // of 4. With a stride of BM floats, a multiple of 32 (BM % 8 == 0 is
  // enough), a_copy_col * stride is a multiple of 32 and drops out: the bank
  // is a_copy_row (plus a constant) alone. A row of the A tile is BK / 4
  // float4s, copied by BK / 4 consecutive threads, so a warp's 32 lanes copy
  // only A_WARP_ROWS = 32 / (BK / 4) consecutive rows, each by BK / 4 lanes
  // (its column groups, g = a_copy_col / 4 = 0 .. BK/4 - 1): each of its four
  // stores is (BK / 4)-way conflicted (BK = 16: 8 banks, 4 lanes on each).
  //
  // A stride of BM + p floats adds a_copy_col * p = g * 4p to the bank.
  // Column group g then covers the A_WARP_ROWS banks from 4pg on; the groups
  // are disjoint, and cover all 32 banks together, when 4p = A_WARP_ROWS,
  // that is p = A_WARP_ROWS / 4 = 32 / BK floats: BK = 8: p = 4,
  // BK = 16: p = 2, BK = 32: p = 1.
  //
  // The cost: the float4 reads of the compute loop need every row of As to
  // start 16-byte aligned, so A_STRIDE % 4 == 0. p = 4 keeps that; p = 2
  // leaves rows 8-byte aligned (each read becomes two 8-byte loads) and p = 1
  // 4-byte aligned (four 4-byte loads). No multiple of 4 works for BK = 16:
  // 4p would have to be 8 or 24 (mod 32) for the groups to be disjoint.
  /// Rows of the A tile that the 32 lanes of one warp copy.
  static constexpr int A_WARP_ROWS = 32 / (BK / 4);
  /// Floats of padding at the end of each row of As (kPadded only).
  static constexpr int A_PAD = (A_LAYOUT == ALayout::kPadded) ? 32 / BK : 0;
  /// Floats from one row of As (one k) to the next.
  static constexpr int A_STRIDE = BM + A_PAD;
  // [end]
  /// Bytes of shared memory for one A tile and one B tile.
  static constexpr int SMEM_BYTES = (BK * A_STRIDE + BK * BN) * int(sizeof(float));

  // Every rule is in tiling_error(). When one is broken, evaluating it here
  // fails at that rule's line, and the compiler's error quotes it.
  static_assert(tiling_error(BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS, A_LAYOUT) == nullptr,
                "the tile sizes break a rule of tiling_error()");
};
// [end]

// [chosen]
/// The configuration this chapter runs: chapter 09's, whose As is now padded
/// (ALayout::kPadded is Tiling's default).
using Chosen = Tiling<64, 128, 16, 32, 64, 2, 8, 4, 128>;
// [end]

/// Tiling `T` with its A tile laid out as `layout`.
template <class T, ALayout layout>
using WithALayout = Tiling<T::BM, T::BN, T::BK, T::WM, T::WN, T::WNITER, T::TM, T::TN,
                           T::NUM_THREADS, layout, T::SERPENTINE>;

/// Tiling `T` with its multiply-adds in chapter 08's row by row order.
template <class T>
using InRowOrder = Tiling<T::BM, T::BN, T::BK, T::WM, T::WN, T::WNITER, T::TM, T::TN,
                          T::NUM_THREADS, T::A_LAYOUT, 0>;

// [thread-map]
/// Row of thread `tid`'s warp tile among the block's BM / WM warp-tile rows.
template <class T>
__host__ __device__ constexpr int warp_row(int tid) {
  return (tid / T::WARP_SIZE) / T::WARPS_N;
}
/// Column of thread `tid`'s warp tile among the block's WARPS_N warp-tile columns.
template <class T>
__host__ __device__ constexpr int warp_col(int tid) {
  return (tid / T::WARP_SIZE) % T::WARPS_N;
}
/// Row of thread `tid`'s TM x TN block among the WSUBM / TM block rows of a sub-tile.
template <class T>
__host__ __device__ constexpr int lane_row(int tid) {
  return (tid % T::WARP_SIZE) / T::LANES_N;
}
/// Column of thread `tid`'s TM x TN block among the LANES_N block columns of a sub-tile.
template <class T>
__host__ __device__ constexpr int lane_col(int tid) {
  return (tid % T::WARP_SIZE) % T::LANES_N;
}

/// First row, inside the block's tile of C, of the TM rows that thread `tid`
/// computes in sub-tile row `wm` (0 .. WMITER-1) of its warp tile.
template <class T>
__host__ __device__ constexpr int thread_row(int tid, int wm) {
  return warp_row<T>(tid) * T::WM + wm * T::WSUBM + lane_row<T>(tid) * T::TM;
}
/// First column, inside the block's tile of C, of the TN columns that thread
/// `tid` computes in sub-tile column `wn` (0 .. WNITER-1) of its warp tile.
template <class T>
__host__ __device__ constexpr int thread_col(int tid, int wn) {
  return warp_col<T>(tid) * T::WN + wn * T::WSUBN + lane_col<T>(tid) * T::TN;
}
// [end]

// [smem-index]
/// Row of the BM x BK A tile that thread `tid` copies in its copy number `c`
/// (0 .. A_COPIES-1): the block copies A_ROW_STRIDE rows at a time.
template <class T>
__host__ __device__ constexpr int a_copy_row(int tid, int c) {
  return tid / (T::BK / 4) + c * T::A_ROW_STRIDE;
}
/// First of the four columns of the BM x BK A tile that thread `tid` copies
/// (in every copy).
template <class T>
__host__ __device__ constexpr int a_copy_col(int tid) {
  return (tid % (T::BK / 4)) * 4;
}
/// Row of the BK x BN B tile that thread `tid` copies in its copy number `c`
/// (0 .. B_COPIES-1): the block copies B_ROW_STRIDE rows at a time.
template <class T>
__host__ __device__ constexpr int b_copy_row(int tid, int c) {
  return tid / (T::BN / 4) + c * T::B_ROW_STRIDE;
}
/// First of the four columns of the BK x BN B tile that thread `tid` copies
/// (in every copy).
template <class T>
__host__ __device__ constexpr int b_copy_col(int tid) {
  return (tid % (T::BN / 4)) * 4;
}

/// Index in As (BK rows of A_STRIDE floats: the A tile transposed) of A tile
/// element (m, k), row m and column k.
///
/// kPadded: As[k][m], in rows of BM + A_PAD floats.
///
/// kSwizzled: rows of BM floats, with m's float4 moved by an XOR with
/// A_WARP_ROWS * (k / 4): As[k][m ^ (A_WARP_ROWS * (k / 4))]. A warp's store
/// of element e has k = a_copy_col + e, so k / 4 is the lane's column group
/// g, and m runs over A_WARP_ROWS consecutive rows starting at a multiple of
/// A_WARP_ROWS. The XOR changes only the bits of m from A_WARP_ROWS up to 16
/// (g * A_WARP_ROWS < 32), so it moves group g's rows to a block of
/// A_WARP_ROWS banks of its own, as the padding does. A_WARP_ROWS is a
/// multiple of 4, so the floats m .. m + 3 (m % 4 == 0) stay together and
/// 16-byte aligned; and as BM % 32 == 0, m ^ ... stays inside the row.
template <class T>
__host__ __device__ constexpr int as_index(int m, int k) {
  if (T::A_LAYOUT == ALayout::kSwizzled) {
    return k * T::A_STRIDE + (m ^ (T::A_WARP_ROWS * (k / 4)));
  }
  return k * T::A_STRIDE + m;
}

/// Index in As at which thread `tid` stores element `e` (0 .. 3) of the
/// float4 of its copy `c`: that float is A tile element
/// (a_copy_row(tid, c), a_copy_col(tid) + e). A 4-byte store.
template <class T>
__host__ __device__ constexpr int a_store_index(int tid, int c, int e) {
  return as_index<T>(a_copy_row<T>(tid, c), a_copy_col<T>(tid) + e);
}

/// Index in Bs (BK x BN, row-major) at which thread `tid` stores the float4
/// of its copy `c`: Bs[b_copy_row(tid, c)][b_copy_col(tid) .. + 3]. A
/// 16-byte store; the index is a multiple of 4.
template <class T>
__host__ __device__ constexpr int b_store_index(int tid, int c) {
  return b_copy_row<T>(tid, c) * T::BN + b_copy_col<T>(tid);
}

/// Index in As of the A operands of rows `i` .. `i` + 3 of thread `tid`'s
/// block in sub-tile row `wm`, step `dot_idx`: A tile elements
/// (thread_row(tid, wm) + i .. + 3, dot_idx), four consecutive floats in
/// either layout. `i` is a multiple of 4; the access is 16 bytes wide when
/// A_STRIDE % 4 == 0 and narrower otherwise (see load_a_operands()).
template <class T>
__host__ __device__ constexpr int a_load_index(int tid, int dot_idx, int wm, int i) {
  return as_index<T>(thread_row<T>(tid, wm) + i, dot_idx);
}

/// Index in Bs of the B operands of columns `j` .. `j` + 3 of thread `tid`'s
/// block in sub-tile column `wn`, step `dot_idx`:
/// Bs[dot_idx][thread_col(tid, wn) + j .. + 3]. A 16-byte load; `j` is a
/// multiple of 4.
template <class T>
__host__ __device__ constexpr int b_load_index(int tid, int dot_idx, int wn, int j) {
  return dot_idx * T::BN + thread_col<T>(tid, wn) + j;
}
// [end]

// [float4]
/// Reads the four floats at `p` with one 16-byte access; `p` must be 16-byte aligned.
__device__ float4 load_float4(const float* p) { return *reinterpret_cast<const float4*>(p); }

/// Writes four floats to `p` with one 16-byte access; `p` must be 16-byte aligned.
__device__ void store_float4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }

/// Reads the four A operands at As[index .. index + 3] with the widest
/// accesses the alignment of As's rows allows: one 16-byte load when
/// A_STRIDE % 4 == 0, two 8-byte loads when A_STRIDE % 2 == 0 (every row
/// starts 8-byte aligned), four 4-byte loads otherwise.
template <class T>
__device__ float4 load_a_operands(const float* As, int index) {
  if constexpr (T::A_STRIDE % 4 == 0) {
    return load_float4(&As[index]);
  } else if constexpr (T::A_STRIDE % 2 == 0) {
    const float2 low = *reinterpret_cast<const float2*>(&As[index]);
    const float2 high = *reinterpret_cast<const float2*>(&As[index + 2]);
    return make_float4(low.x, low.y, high.x, high.y);
  } else {
    return make_float4(As[index], As[index + 1], As[index + 2], As[index + 3]);
  }
}
// [end]

// [outer-product]
/// Adds the outer product of one step's operands to a thread's results, as
/// chapter 09 does:
/// acc[m][n] += reg_m[m] * reg_n[n] for every m and n, in the order that
/// T::SERPENTINE picks. Every result gets the same additions in the same
/// order either way, so the results are bit for bit the same; only the order
/// of the FFMA instructions that ptxas is handed changes.
///
/// SERPENTINE = 0: row by row, as in chapters 06 to 08. Consecutive
/// multiply-adds share their A operand reg_m[m], except where a row ends and
/// the next begins: there the next one shares nothing with the last.
///
/// SERPENTINE = 1: column by column, down even columns and up odd ones.
/// Consecutive multiply-adds share their B operand reg_n[n] within a column,
/// and at the turn from one column to the next they share the A operand
/// reg_m[m] of the row where the turn happens: every multiply-add but the
/// first shares an operand with the one before it.
template <class T>
__device__ void outer_product(float (&acc)[T::WMITER * T::TM * T::WNITER * T::TN],
                              const float (&reg_m)[T::WMITER * T::TM],
                              const float (&reg_n)[T::WNITER * T::TN]) {
  constexpr int ROWS = T::WMITER * T::TM;  // rows of a thread's results
  constexpr int COLS = T::WNITER * T::TN;  // columns of a thread's results
  if constexpr (T::SERPENTINE == 0) {
#pragma unroll
    for (int m = 0; m < ROWS; ++m) {
#pragma unroll
      for (int n = 0; n < COLS; ++n) {
        acc[m * COLS + n] += reg_m[m] * reg_n[n];
      }
    }
  } else {
#pragma unroll
    for (int n = 0; n < COLS; ++n) {
#pragma unroll
      for (int step = 0; step < ROWS; ++step) {
        const int m = (n % 2 == 0) ? step : ROWS - 1 - step;  // down, then up
        acc[m * COLS + n] += reg_m[m] * reg_n[n];
      }
    }
  }
}
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C with block, warp and thread tiling:
/// each warp computes a WM x WN tile of C in WMITER x WNITER sub-tiles, each
/// thread a TM x TN block of every sub-tile, as sums of outer products.
///
/// Block (x, y) of the grid computes the BM x BN tile of C whose first row is
/// y * BM and whose first column is x * BN. For each step of BK along K, its
/// threads copy A_COPIES float4s of A (scattered transposed into As) and
/// B_COPIES float4s of B each, synchronize, and for every one of the BK
/// steps load the WMITER * TM operands of A and WNITER * TN operands of B
/// that they need, four at a time, and add their outer product to the
/// WMITER * TM x WNITER * TN results.
///
/// @tparam T a Tiling: the tile sizes, checked when it is instantiated.
/// @pre M % BM == 0, N % BN == 0 and K % BK == 0 (see accepts()); A, B and
///      C 16-byte aligned, as cudaMalloc's pointers are.
/// @pre blockDim.x == T::NUM_THREADS, gridDim.x * BN == N and gridDim.y * BM == M.
template <class T>
__global__ void __launch_bounds__(T::NUM_THREADS)
    sgemm_warptiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                    float* C) {
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, TM = T::TM, TN = T::TN;
  constexpr int WMITER = T::WMITER, WNITER = T::WNITER;
  constexpr int RESULT_COLS = WNITER * TN;  // columns of a thread's results

  __shared__ __align__(16) float As[BK * T::A_STRIDE];  // the A tile transposed: see as_index()
  __shared__ __align__(16) float Bs[BK * BN];  // the B tile: BK steps of K x BN columns of C

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM;  // first row of the block's tile of C
  const int block_col = blockIdx.x * BN;  // first column of the block's tile of C

  // acc[(wm * TM + i) * RESULT_COLS + wn * TN + j]: element (i, j) of the
  // thread's block in sub-tile (wm, wn).
  float acc[WMITER * TM * RESULT_COLS] = {};
  float reg_m[WMITER * TM];  // this step's operands from A, TM per sub-tile row
  float reg_n[WNITER * TN];  // this step's operands from B, TN per sub-tile column
  for (int tile_k = 0; tile_k < K; tile_k += BK) {
    // [load-tile]
#pragma unroll
    for (int c = 0; c < T::A_COPIES; ++c) {
      // Four consecutive k of one row of A land in four rows of As.
      const float4 a =
          load_float4(&A[(block_row + a_copy_row<T>(tid, c)) * K + tile_k + a_copy_col<T>(tid)]);
      As[a_store_index<T>(tid, c, 0)] = a.x;
      As[a_store_index<T>(tid, c, 1)] = a.y;
      As[a_store_index<T>(tid, c, 2)] = a.z;
      As[a_store_index<T>(tid, c, 3)] = a.w;
    }
#pragma unroll
    for (int c = 0; c < T::B_COPIES; ++c) {
      store_float4(
          &Bs[b_store_index<T>(tid, c)],
          load_float4(&B[(tile_k + b_copy_row<T>(tid, c)) * N + block_col + b_copy_col<T>(tid)]));
    }
    // The tiles are complete: any thread may now read any element.
    __syncthreads();
    // [end load-tile]

    // [compute-tile]
    // No #pragma unroll here, unlike chapter 07: unrolling all BK = 16 steps
    // of this larger body raises the register count, which can cost a
    // resident block per SM. Unlike chapter 09's, this loop is not unrolled
    // by ptxas at all (the SASS shows one step per trip), a side effect of
    // the padded layout that the chapter measures.
    for (int dot_idx = 0; dot_idx < BK; ++dot_idx) {
#pragma unroll
      for (int wm = 0; wm < WMITER; ++wm) {
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
          const float4 a = load_a_operands<T>(As, a_load_index<T>(tid, dot_idx, wm, i));
          reg_m[wm * TM + i + 0] = a.x;
          reg_m[wm * TM + i + 1] = a.y;
          reg_m[wm * TM + i + 2] = a.z;
          reg_m[wm * TM + i + 3] = a.w;
        }
      }
#pragma unroll
      for (int wn = 0; wn < WNITER; ++wn) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          const float4 b = load_float4(&Bs[b_load_index<T>(tid, dot_idx, wn, j)]);
          reg_n[wn * TN + j + 0] = b.x;
          reg_n[wn * TN + j + 1] = b.y;
          reg_n[wn * TN + j + 2] = b.z;
          reg_n[wn * TN + j + 3] = b.w;
        }
      }
      // The outer product over all sub-tiles: (WMITER * TM) + (WNITER * TN)
      // loads above feed (WMITER * TM) * (WNITER * TN) multiply-adds here.
      outer_product<T>(acc, reg_m, reg_n);
    }
    // Every thread is done reading: the next step may overwrite the tiles.
    __syncthreads();
    // [end compute-tile]
  }

  // [store-c]
#pragma unroll
  for (int wm = 0; wm < WMITER; ++wm) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
      for (int wn = 0; wn < WNITER; ++wn) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          const int row = block_row + thread_row<T>(tid, wm) + i;
          const int col = block_col + thread_col<T>(tid, wn) + j;
          const float* result = &acc[(wm * TM + i) * RESULT_COLS + wn * TN + j];
          // BLAS semantics: with beta == 0, C is output only and is never read.
          const float4 c_in =
              (beta == 0.0f) ? make_float4(0.0f, 0.0f, 0.0f, 0.0f) : load_float4(&C[row * N + col]);
          float4 c;
          c.x = alpha * result[0] + beta * c_in.x;
          c.y = alpha * result[1] + beta * c_in.y;
          c.z = alpha * result[2] + beta * c_in.z;
          c.w = alpha * result[3] + beta * c_in.w;
          store_float4(&C[row * N + col], c);
        }
      }
    }
  }
  // [end store-c]
}
// [end]

// [launch]
/// @brief Launches sgemm_warptiled<T>: one block of T::NUM_THREADS threads
/// per BM x BN tile of C; the grid's x dimension covers the N columns and
/// its y dimension the M rows.
/// @tparam T a Tiling.
/// @pre accepts<T>(g.M, g.N, g.K) is empty.
template <class T>
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(T::NUM_THREADS);
  const dim3 grid(g.N / T::BN, g.M / T::BM);
  sgemm_warptiled<T><<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}
// [end]

// [accepts]
/// @brief Says why an M x N x K product cannot be computed with tiling T, or
/// returns an empty string: the kernel has no bounds checks, so every tile
/// must be full.
/// @tparam T a Tiling.
template <class T>
std::string accepts(int M, int N, int K) {
  if (M % T::BM != 0) return "M must be a multiple of " + std::to_string(T::BM) + " (BM)";
  if (N % T::BN != 0) return "N must be a multiple of " + std::to_string(T::BN) + " (BN)";
  if (K % T::BK != 0) return "K must be a multiple of " + std::to_string(T::BK) + " (BK)";
  return {};
}
// [end]

// [describe]
/// The parameters of tiling `T` and every constant derived from them, by
/// the names the kernel uses, for --describe.
template <class T>
std::vector<ladder::Constant> constants() {
  return {{"BM", T::BM},
          {"BN", T::BN},
          {"BK", T::BK},
          {"WM", T::WM},
          {"WN", T::WN},
          {"WNITER", T::WNITER},
          {"TM", T::TM},
          {"TN", T::TN},
          {"NUM_THREADS", T::NUM_THREADS},
          {"A_LAYOUT", static_cast<int>(T::A_LAYOUT)},
          {"SERPENTINE", T::SERPENTINE},
          {"WARP_SIZE", T::WARP_SIZE},
          {"WARPS_N", T::WARPS_N},
          {"WMITER", T::WMITER},
          {"WSUBM", T::WSUBM},
          {"WSUBN", T::WSUBN},
          {"LANES_N", T::LANES_N},
          {"A_ROW_STRIDE", T::A_ROW_STRIDE},
          {"B_ROW_STRIDE", T::B_ROW_STRIDE},
          {"A_COPIES", T::A_COPIES},
          {"B_COPIES", T::B_COPIES},
          {"A_WARP_ROWS", T::A_WARP_ROWS},
          {"A_PAD", T::A_PAD},
          {"A_STRIDE", T::A_STRIDE},
          {"SMEM_BYTES", T::SMEM_BYTES}};
}

/// Variant `name` of this chapter: sgemm_warptiled<T> and its launcher.
template <class T>
ladder::Variant variant(const char* name, const char* title) {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_warptiled<T>), T::NUM_THREADS,
                                  0};
  return {name, title, launch<T>, accepts<T>, kernel, constants<T>()};
}

/// @brief This chapter as the runner and --describe see it: Chosen, then two
/// variants that the measure command measures beside it.
///
/// "swizzled": the same kernel with As swizzled instead of padded
/// (ALayout::kSwizzled). The swizzle removes the same store conflicts as the
/// padding and keeps every row of As 16-byte aligned, so the compute loop
/// keeps its 16-byte reads.
///
/// "rows": the same kernel and tiling, with each step's multiply-adds row by
/// row (SERPENTINE = 0) instead of in the snaking column order that chapter
/// 09's sweep chose, so that the chapter can measure what the order does to
/// this kernel.
inline ladder::Chapter chapter() {
  return {"10-padding",
          "Padded shared memory",
          __FILE__,
          {variant<Chosen>(ladder::kDefaultVariant, "Padded shared memory"),
           variant<WithALayout<Chosen, ALayout::kSwizzled>>(
               "swizzled", "Padded shared memory (swizzled layout)"),
           variant<InRowOrder<Chosen>>("rows", "Padded shared memory (row order)")}};
}
// [end]

}  // namespace ch10
