// Chapter 11's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch11 {

// [layout]
/// How the transposed A tile is laid out in shared memory (see Tiling::A_STRIDE
/// and as_index()).
enum class ALayout {
  kPadded,    ///< rows of BM + 32 / BK floats: conflict-free stores
  kSwizzled,  ///< rows of BM floats, float4s XOR-permuted per row: conflict-free, 16-byte aligned
  kUnpadded,  ///< rows of BM floats: 16-byte aligned, the stores (BK / 4)-way conflicted
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
  if (2 * (BK * A_STRIDE + BK * BN) * int(sizeof(float)) > 227 * 1024) {
    return broken_rule("two stages must fit the 227 KiB of shared memory a block can have");
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
  // Chapter 10 derives the padding: a warp's four stores into As are
  // (BK / 4)-way conflicted with rows of BM floats, and a pad of
  // p = A_WARP_ROWS / 4 = 32 / BK floats per row moves each column group of
  // lanes to banks of its own. Its cost is alignment: rows of BM + 2 floats
  // (BK = 16) start only 8-byte aligned. kUnpadded keeps the conflict, to
  // measure what the padding buys.
  /// Rows of the A tile that the 32 lanes of one warp copy.
  static constexpr int A_WARP_ROWS = 32 / (BK / 4);
  /// Floats of padding at the end of each row of As (kPadded only).
  static constexpr int A_PAD = (A_LAYOUT == ALayout::kPadded) ? 32 / BK : 0;
  /// Floats from one row of As (one k) to the next.
  static constexpr int A_STRIDE = BM + A_PAD;
  // [end]
  /// Stages of shared memory: the block computes on one while the next tiles
  /// arrive in the other.
  static constexpr int STAGES = 2;
  /// Floats of one stage's As, and of one stage: As, then Bs. Both are
  /// multiples of 4 (BK % 4 == 0), so every As and Bs starts 16-byte aligned.
  static constexpr int A_STAGE_FLOATS = BK * A_STRIDE;
  static constexpr int STAGE_FLOATS = A_STAGE_FLOATS + BK * BN;
  /// Bytes of (dynamic) shared memory for all stages.
  static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * int(sizeof(float));

  // Every rule is in tiling_error(). When one is broken, evaluating it here
  // fails at that rule's line, and the compiler's error quotes it.
  static_assert(tiling_error(BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS, A_LAYOUT) == nullptr,
                "the tile sizes break a rule of tiling_error()");
};
// [end]

// [chosen]
/// The configuration this chapter runs: chapter 10's; this chapter changes
/// the K loop only.
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
/// element (m, k), row m and column k. kPadded and kUnpadded: As[k][m].
/// kSwizzled: As[k][m ^ (A_WARP_ROWS * (k / 4))], chapter 10's swizzle,
/// which moves column group k / 4's rows to banks of their own and keeps
/// every float4 whole and 16-byte aligned.
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

// [cp-async]
// cp.async (sm_80 and later) copies global memory to shared memory without
// passing through registers, and without making the thread wait: it returns
// at once, and the copy lands later. A thread closes the copies it has started
// into a group (commit) and waits for its groups to land (wait); only then
// are the copied bytes visible to it, and only after a barrier to the others.
// Before sm_80 these fall back to an ordinary, synchronous copy.

/// Starts copying the 16 bytes at `src` (global) to `dst` (shared); both
/// must be 16-byte aligned. The .cg variant caches in L2 only: the block
/// reads each B element once from global memory, so L1 has nothing to gain.
__device__ void cp_async_16(float* dst, const float* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst_shared), "l"(src)
               : "memory");
#else
  store_float4(dst, load_float4(src));
#endif
}

/// Closes the group of the copies this thread has started since its last commit.
__device__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/// Waits until every group of copies this thread has committed has landed.
__device__ void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}
// [end]

// [tile-steps]
/// Loads thread `tid`'s A_COPIES float4s of the A tile that starts at row
/// `block_row` and column `tile_k` of A into `a`; they are stored into
/// shared memory later, by store_a_tile().
template <class T>
__device__ void load_a_tile(float4 (&a)[T::A_COPIES], const float* A, int K, int block_row,
                            int tile_k, int tid) {
#pragma unroll
  for (int c = 0; c < T::A_COPIES; ++c) {
    a[c] = load_float4(&A[(block_row + a_copy_row<T>(tid, c)) * K + tile_k + a_copy_col<T>(tid)]);
  }
}

/// Stores the float4s that load_a_tile() loaded into one stage's As,
/// transposed: four consecutive k of one row of A land in four rows of As.
template <class T>
__device__ void store_a_tile(float* As, const float4 (&a)[T::A_COPIES], int tid) {
#pragma unroll
  for (int c = 0; c < T::A_COPIES; ++c) {
    As[a_store_index<T>(tid, c, 0)] = a[c].x;
    As[a_store_index<T>(tid, c, 1)] = a[c].y;
    As[a_store_index<T>(tid, c, 2)] = a[c].z;
    As[a_store_index<T>(tid, c, 3)] = a[c].w;
  }
}

/// Starts copying thread `tid`'s B_COPIES float4s of the B tile that starts at
/// row `tile_k` and column `block_col` of B into one stage's Bs, with
/// cp.async, and commits them as one group.
template <class T>
__device__ void copy_b_tile_async(float* Bs, const float* B, int N, int block_col, int tile_k,
                                  int tid) {
#pragma unroll
  for (int c = 0; c < T::B_COPIES; ++c) {
    cp_async_16(&Bs[b_store_index<T>(tid, c)],
                &B[(tile_k + b_copy_row<T>(tid, c)) * N + block_col + b_copy_col<T>(tid)]);
  }
  cp_async_commit();
}

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

/// Adds the product of one stage's tiles, As (BM x BK, transposed) times Bs
/// (BK x BN), to thread `tid`'s results `acc`: chapter 10's compute loop.
template <class T>
__device__ void compute_tile(float (&acc)[T::WMITER * T::TM * T::WNITER * T::TN], const float* As,
                             const float* Bs, int tid) {
  constexpr int TM = T::TM, TN = T::TN, WMITER = T::WMITER, WNITER = T::WNITER;
  float reg_m[WMITER * TM];  // this step's operands from A, TM per sub-tile row
  float reg_n[WNITER * TN];  // this step's operands from B, TN per sub-tile column
  // Unrolled, unlike chapter 10's: with every step's addresses known at
  // compile time, ptxas folds them into the loads' offsets, drops the loop's
  // counter and branch, and moves each step's shared loads up among the
  // previous step's multiply-adds (a prefetch into registers that the code
  // does not spell out). It costs registers: 127 instead of 107, still under
  // the 128 that keep four blocks of 128 threads per SM.
#pragma unroll
  for (int dot_idx = 0; dot_idx < T::BK; ++dot_idx) {
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
    // The outer product over all sub-tiles.
    outer_product<T>(acc, reg_m, reg_n);
  }
}
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C with warp tiling and a two-stage
/// software pipeline over K.
///
/// Block (x, y) of the grid computes the BM x BN tile of C whose first row is
/// y * BM and whose first column is x * BN, as in chapter 10. Shared memory
/// holds two stages, each an As and a Bs. While the block computes on the
/// tiles of step k in one stage, the B tile of step k + 1 is copied into the
/// other stage with cp.async and the A tile of step k + 1 waits in
/// registers, to be stored transposed into the other stage once the
/// computing is done.
///
/// @tparam T a Tiling: the tile sizes, checked when it is instantiated.
/// @pre M % BM == 0, N % BN == 0 and K % BK == 0 (see accepts()); A, B and
///      C 16-byte aligned, as cudaMalloc's pointers are.
/// @pre blockDim.x == T::NUM_THREADS, gridDim.x * BN == N, gridDim.y * BM == M,
///      and T::SMEM_BYTES of dynamic shared memory (see launch()).
template <class T>
__global__ void __launch_bounds__(T::NUM_THREADS)
    sgemm_warptiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                    float* C) {
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, TM = T::TM, TN = T::TN;
  constexpr int WMITER = T::WMITER, WNITER = T::WNITER;
  constexpr int RESULT_COLS = WNITER * TN;  // columns of a thread's results

  // Stage s is As (see as_index()) at smem + s * STAGE_FLOATS, then Bs.
  extern __shared__ __align__(16) float smem[];
  const auto stage_as = [&](int s) { return smem + s * T::STAGE_FLOATS; };
  const auto stage_bs = [&](int s) { return smem + s * T::STAGE_FLOATS + T::A_STAGE_FLOATS; };

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM;  // first row of the block's tile of C
  const int block_col = blockIdx.x * BN;  // first column of the block's tile of C

  // acc[(wm * TM + i) * RESULT_COLS + wn * TN + j]: element (i, j) of the
  // thread's block in sub-tile (wm, wn).
  float acc[WMITER * TM * RESULT_COLS] = {};
  float4 a_next[T::A_COPIES];  // the next A tile, on its way through registers

  // [pipeline]
  // Prologue: step 0's tiles into stage 0.
  copy_b_tile_async<T>(stage_bs(0), B, N, block_col, 0, tid);
  load_a_tile<T>(a_next, A, K, block_row, 0, tid);
  store_a_tile<T>(stage_as(0), a_next, tid);
  cp_async_wait_all();
  // Barrier 0. Stage 0: ready (every thread's share of it is written and
  // has landed). Stage 1: never used, free.
  __syncthreads();

  int stage = 0;  // the stage that holds step tile_k's tiles
  for (int tile_k = 0; tile_k < K; tile_k += BK) {
    const bool has_next = tile_k + BK < K;
    const int next = stage ^ 1;
    if (has_next) {
      // Load issued: the next tiles start towards stage `next`, which every
      // thread finished reading before the last barrier (or never read).
      copy_b_tile_async<T>(stage_bs(next), B, N, block_col, tile_k + BK, tid);
      load_a_tile<T>(a_next, A, K, block_row, tile_k + BK, tid);
    }
    // Consume: stage `stage` is read here, and only read, by every thread.
    compute_tile<T>(acc, stage_as(stage), stage_bs(stage), tid);
    if (has_next) {
      // The A tile's registers are stored now that their loads have had the
      // whole computation to arrive; the B tile's copies are waited for.
      store_a_tile<T>(stage_as(next), a_next, tid);
      cp_async_wait_all();
    }
    // The one barrier of the step. After it, stage `next` is ready (every
    // thread's stores and copies into it are done, and a barrier orders them
    // before any thread's reads) and stage `stage` is consumed, so reusable:
    // no thread reads it again before the next step's loads are issued into it.
    __syncthreads();
    stage = next;
  }
  // [end pipeline]

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
/// and T::SMEM_BYTES of dynamic shared memory per BM x BN tile of C; the
/// grid's x dimension covers the N columns and its y dimension the M rows.
/// @tparam T a Tiling.
/// @pre accepts<T>(g.M, g.N, g.K) is empty.
template <class T>
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(T::NUM_THREADS);
  const dim3 grid(g.N / T::BN, g.M / T::BM);
  // Two stages can exceed the 48 KiB that a block gets without asking; ask
  // once for what this tiling needs.
  static const bool smem_granted = ladder::allow_dynamic_smem(sgemm_warptiled<T>, T::SMEM_BYTES);
  (void)smem_granted;
  sgemm_warptiled<T>
      <<<grid, block, T::SMEM_BYTES, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
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
          {"STAGES", T::STAGES},
          {"A_STAGE_FLOATS", T::A_STAGE_FLOATS},
          {"STAGE_FLOATS", T::STAGE_FLOATS},
          {"SMEM_BYTES", T::SMEM_BYTES}};
}

/// Variant `name` of this chapter: sgemm_warptiled<T> and its launcher.
template <class T>
ladder::Variant variant(const char* name, const char* title) {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_warptiled<T>), T::NUM_THREADS,
                                  T::SMEM_BYTES};
  return {name, title, launch<T>, accepts<T>, kernel, constants<T>()};
}

/// @brief This chapter as the runner and --describe see it: Chosen, then
/// three variants that the measure command measures beside it.
///
/// "swizzled" and "unpadded": the same kernel with As swizzled
/// (ALayout::kSwizzled, as in chapter 10's variant) or in rows of BM floats
/// with the stores' conflict kept (ALayout::kUnpadded), so that the padding
/// is measured against both in the pipelined kernel.
///
/// "rows": the same kernel and tiling, with each step's multiply-adds row by
/// row (SERPENTINE = 0) instead of in the snaking column order that chapter
/// 09's sweep chose, so that the chapter can measure what the order does to
/// this kernel.
inline ladder::Chapter chapter() {
  return {"11-double-buffering",
          "Double buffering",
          __FILE__,
          {variant<Chosen>(ladder::kDefaultVariant, "Double buffering"),
           variant<WithALayout<Chosen, ALayout::kSwizzled>>("swizzled",
                                                            "Double buffering (swizzled layout)"),
           variant<WithALayout<Chosen, ALayout::kUnpadded>>("unpadded",
                                                            "Double buffering (unpadded layout)"),
           variant<InRowOrder<Chosen>>("rows", "Double buffering (row order)")}};
}
// [end]

}  // namespace ch11
