// Chapter 12's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include <ladder/runner.cuh>

namespace ch12 {

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
                                   int TN, int NUM_THREADS, int MIN_BLOCKS, int GROUP_M,
                                   ALayout A_LAYOUT = ALayout::kPadded) {
  constexpr int WARP_SIZE = 32;
  if (BM < 1 || BN < 1 || BK < 1 || WM < 1 || WN < 1 || WNITER < 1 || TM < 1 || TN < 1 ||
      NUM_THREADS < 1 || MIN_BLOCKS < 1 || GROUP_M < 1) {
    return broken_rule("every tile size and count must be positive");
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
  if (MIN_BLOCKS * NUM_THREADS > 2048) {
    return broken_rule("MIN_BLOCKS blocks must fit the 2048 threads an SM can hold");
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
/// @tparam MIN_BLOCKS_ blocks per SM that __launch_bounds__ asks the compiler
///         to leave room for: it caps a thread's registers at about
///         65536 / (MIN_BLOCKS * NUM_THREADS)
/// @tparam GROUP_M_ rows of block tiles in one raster group (1: row by row;
///         see block_tile())
/// @tparam A_LAYOUT_ the layout of the transposed A tile in shared memory
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WNITER_, int TM_, int TN_,
          int NUM_THREADS_, int MIN_BLOCKS_, int GROUP_M_, ALayout A_LAYOUT_ = ALayout::kPadded>
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
  static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int GROUP_M = GROUP_M_;
  static constexpr ALayout A_LAYOUT = A_LAYOUT_;

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
  static_assert(tiling_error(BM, BN, BK, WM, WN, WNITER, TM, TN, NUM_THREADS, MIN_BLOCKS, GROUP_M,
                             A_LAYOUT) == nullptr,
                "the tile sizes break a rule of tiling_error()");
};
// [end]

// [chosen]
/// The configuration this chapter runs: the winner of the sweep on the H200
/// (results/h200/sweep-12-final.json), written here by
/// `python3 code/sweep.py 12-final --commit-winner`. Run that on your own
/// GPU and its winner replaces this line.
using Chosen = Tiling<128, 256, 16, 32, 128, 4, 8, 4, 256, 1, 1>;
// [end]

/// Tiling `T` with its A tile laid out as `layout`.
template <class T, ALayout layout>
using WithALayout = Tiling<T::BM, T::BN, T::BK, T::WM, T::WN, T::WNITER, T::TM, T::TN,
                           T::NUM_THREADS, T::MIN_BLOCKS, T::GROUP_M, layout>;

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

/// Starts copying the 16 bytes at `src` (global) to `dst` (shared), both
/// 16-byte aligned, when `valid`; when not, starts writing 16 zero bytes to
/// `dst` instead and reads nothing (a source size of 0 bytes zero-fills the
/// rest), so `src` may then point anywhere. The .cg variant caches in L2
/// only: the block reads each B element once from global memory.
__device__ void cp_async_16(float* dst, const float* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_shared), "l"(src),
               "r"(src_bytes)
               : "memory");
#else
  store_float4(dst, valid ? load_float4(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f));
#endif
}

/// cp_async_16() for one float, 4-byte aligned: the general path's copy.
/// (cp.async's .cg variant copies 16 bytes only; .ca copies 4, 8 or 16.)
__device__ void cp_async_4(float* dst, const float* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_shared), "l"(src),
               "r"(src_bytes)
               : "memory");
#else
  *dst = valid ? *src : 0.0f;
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

// [raster]
/// The block tile of C that one block computes: its row and column among the
/// tiles_m x tiles_n tiles of C.
struct TileCoord {
  int row;
  int col;
};

/// The tile that block number `block` (0 .. tiles_m * tiles_n - 1, in launch
/// order) computes. The tiles are taken in groups of GROUP_M tile rows (the
/// last group may have fewer), and within a group column by column: blocks
/// launched one after another walk down a column of GROUP_M tiles, which all
/// read the same panel of B and, across the group's columns, the same GROUP_M
/// panels of A. The blocks resident at one time then read fewer panels than
/// row by row order (GROUP_M = 1), and more of their reads hit in L2.
template <class T>
__host__ __device__ constexpr TileCoord block_tile(int block, int tiles_m, int tiles_n) {
  const int blocks_per_group = T::GROUP_M * tiles_n;
  const int group = block / blocks_per_group;
  const int first_row = group * T::GROUP_M;
  const int rows_left = tiles_m - first_row;
  const int group_rows = rows_left < T::GROUP_M ? rows_left : T::GROUP_M;
  const int in_group = block % blocks_per_group;
  return {first_row + in_group % group_rows, in_group / group_rows};
}
// [end]

// [tile-steps]
/// Loads thread `tid`'s A_COPIES float4s of the A tile that starts at row
/// `block_row` and column `tile_k` of A into `a`; they are stored into
/// shared memory later, by store_a_tile(). Elements outside A read as zero.
/// ALIGNED (K % 4 == 0, A 16-byte aligned): one 16-byte load per float4,
/// which lies wholly inside or wholly outside A, as its first column is a
/// multiple of 4. Otherwise four guarded 4-byte loads. EDGES false: the
/// caller knows that the tile lies inside A, and nothing is tested.
template <class T, bool ALIGNED, bool EDGES>
__device__ void load_a_tile(float4 (&a)[T::A_COPIES], const float* A, int M, int K, int block_row,
                            int tile_k, int tid) {
  const int col = tile_k + a_copy_col<T>(tid);
#pragma unroll
  for (int c = 0; c < T::A_COPIES; ++c) {
    const int row = block_row + a_copy_row<T>(tid, c);
    const bool row_inside = !EDGES || row < M;
    if constexpr (ALIGNED) {
      a[c] = (row_inside && (!EDGES || col < K)) ? load_float4(&A[row * K + col])
                                                 : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    } else {
      a[c].x = (row_inside && col + 0 < K) ? A[row * K + col + 0] : 0.0f;
      a[c].y = (row_inside && col + 1 < K) ? A[row * K + col + 1] : 0.0f;
      a[c].z = (row_inside && col + 2 < K) ? A[row * K + col + 2] : 0.0f;
      a[c].w = (row_inside && col + 3 < K) ? A[row * K + col + 3] : 0.0f;
    }
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
/// cp.async, and commits them as one group. Elements outside B are written
/// as zero. ALIGNED (N % 4 == 0, B 16-byte aligned): one 16-byte copy per
/// float4, wholly inside or wholly outside B. Otherwise four 4-byte copies.
/// EDGES false: the tile lies inside B, and nothing is tested.
template <class T, bool ALIGNED, bool EDGES>
__device__ void copy_b_tile_async(float* Bs, const float* B, int K, int N, int block_col,
                                  int tile_k, int tid) {
  const int col = block_col + b_copy_col<T>(tid);
#pragma unroll
  for (int c = 0; c < T::B_COPIES; ++c) {
    const int row = tile_k + b_copy_row<T>(tid, c);
    const bool row_inside = !EDGES || row < K;
    float* dst = &Bs[b_store_index<T>(tid, c)];
    // An element outside B copies nothing; B itself stands in as the source.
    if constexpr (ALIGNED) {
      const bool inside = row_inside && (!EDGES || col < N);
      cp_async_16(dst, inside ? &B[row * N + col] : B, inside);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool inside = row_inside && col + e < N;
        cp_async_4(dst + e, inside ? &B[row * N + col + e] : B, inside);
      }
    }
  }
  cp_async_commit();
}

/// Loads thread `tid`'s operands of step `dot_idx` from one stage's As and
/// Bs into registers: WMITER * TM from A, WNITER * TN from B.
template <class T>
__device__ void load_fragments(float (&reg_m)[T::WMITER * T::TM], float (&reg_n)[T::WNITER * T::TN],
                               const float* As, const float* Bs, int tid, int dot_idx) {
  constexpr int TM = T::TM, TN = T::TN;
#pragma unroll
  for (int wm = 0; wm < T::WMITER; ++wm) {
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
  for (int wn = 0; wn < T::WNITER; ++wn) {
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const float4 b = load_float4(&Bs[b_load_index<T>(tid, dot_idx, wn, j)]);
      reg_n[wn * TN + j + 0] = b.x;
      reg_n[wn * TN + j + 1] = b.y;
      reg_n[wn * TN + j + 2] = b.z;
      reg_n[wn * TN + j + 3] = b.w;
    }
  }
}

/// Adds the outer product of one step's operands to a thread's results:
/// (WMITER * TM) + (WNITER * TN) operands feed (WMITER * TM) * (WNITER * TN)
/// multiply-adds, column by column, down even columns and up odd ones: the
/// order chapter 09's sweep chose (SERPENTINE = 1 there), in which every
/// multiply-add shares an operand with the one before it.
template <class T>
__device__ void outer_product(float (&acc)[T::WMITER * T::TM * T::WNITER * T::TN],
                              const float (&reg_m)[T::WMITER * T::TM],
                              const float (&reg_n)[T::WNITER * T::TN]) {
  constexpr int ROWS = T::WMITER * T::TM;  // rows of a thread's results
  constexpr int COLS = T::WNITER * T::TN;  // columns of a thread's results
#pragma unroll
  for (int n = 0; n < COLS; ++n) {
#pragma unroll
    for (int step = 0; step < ROWS; ++step) {
      const int m = (n % 2 == 0) ? step : ROWS - 1 - step;  // down, then up
      acc[m * COLS + n] += reg_m[m] * reg_n[n];
    }
  }
}

/// Adds the product of one stage's tiles, As (BM x BK, transposed) times Bs
/// (BK x BN), to thread `tid`'s results `acc`, as chapter 11 does: the loop
/// over the BK steps is unrolled, so ptxas moves each step's shared loads up
/// among the previous step's multiply-adds.
template <class T>
__device__ void compute_tile(float (&acc)[T::WMITER * T::TM * T::WNITER * T::TN], const float* As,
                             const float* Bs, int tid) {
  float reg_m[T::WMITER * T::TM];  // this step's operands from A
  float reg_n[T::WNITER * T::TN];  // this step's operands from B
#pragma unroll
  for (int dot_idx = 0; dot_idx < T::BK; ++dot_idx) {
    load_fragments<T>(reg_m, reg_n, As, Bs, tid, dot_idx);
    outer_product<T>(acc, reg_m, reg_n);
  }
}
// [end]

// [store-c]
/// Writes thread `tid`'s results to the block's tile of C, which starts at
/// row `block_row` and column `block_col`: C = alpha * acc + beta * C, or,
/// when READ_C is false (beta == 0), C = alpha * acc without reading C, as
/// BLAS requires (C may hold NaN then). Elements outside C are skipped.
/// ALIGNED (N % 4 == 0, C 16-byte aligned): 16-byte accesses, each wholly
/// inside or wholly outside C. Otherwise guarded 4-byte accesses. EDGES
/// false: the tile lies inside C, and nothing is tested.
template <class T, bool ALIGNED, bool EDGES, bool READ_C>
__device__ void store_c_tile(const float (&acc)[T::WMITER * T::TM * T::WNITER * T::TN], float* C,
                             int M, int N, float alpha, float beta, int block_row, int block_col,
                             int tid) {
  constexpr int TM = T::TM, TN = T::TN;
  constexpr int RESULT_COLS = T::WNITER * TN;
#pragma unroll
  for (int wm = 0; wm < T::WMITER; ++wm) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int row = block_row + thread_row<T>(tid, wm) + i;
      if (EDGES && row >= M) continue;
#pragma unroll
      for (int wn = 0; wn < T::WNITER; ++wn) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          const int col = block_col + thread_col<T>(tid, wn) + j;
          const float* result = &acc[(wm * TM + i) * RESULT_COLS + wn * TN + j];
          float* out = &C[row * N + col];
          if constexpr (ALIGNED) {
            if (EDGES && col >= N) continue;
            float4 c;
            if constexpr (READ_C) {
              c = load_float4(out);
              c.x = alpha * result[0] + beta * c.x;
              c.y = alpha * result[1] + beta * c.y;
              c.z = alpha * result[2] + beta * c.z;
              c.w = alpha * result[3] + beta * c.w;
            } else {
              c = make_float4(alpha * result[0], alpha * result[1], alpha * result[2],
                              alpha * result[3]);
            }
            store_float4(out, c);
          } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              if (col + e < N) {
                out[e] = READ_C ? alpha * result[e] + beta * out[e] : alpha * result[e];
              }
            }
          }
        }
      }
    }
  }
}
// [end]

// [kernel]
/// @brief Adds the product of the block's rows of A and columns of B over
/// K-steps `first_step` .. `end_step` - 1 (BK columns of A, BK rows of B
/// each) to thread `tid`'s results `acc`, with a two-stage software
/// pipeline: while the block computes on the tiles of step k in one stage,
/// the B tile of step k + 1 is copied into the other with cp.async and the A
/// tile of step k + 1 waits in registers, as in chapter 11.
///
/// The block's tile of C starts at row `block_row` and column `block_col`;
/// `smem` holds T::SMEM_BYTES. It returns after a barrier, so a caller may
/// call it again at once, for another tile or other steps.
/// @pre first_step < end_step <= ceil(K / BK).
template <class T, bool ALIGNED, bool EDGES>
__device__ void accumulate_steps(float (&acc)[T::WMITER * T::TM * T::WNITER * T::TN],
                                 const float* A, const float* B, int M, int N, int K, int block_row,
                                 int block_col, int first_step, int end_step, float* smem,
                                 int tid) {
  // Stage s is As (see as_index()) at smem + s * STAGE_FLOATS, then Bs.
  const auto stage_as = [&](int s) { return smem + s * T::STAGE_FLOATS; };
  const auto stage_bs = [&](int s) { return smem + s * T::STAGE_FLOATS + T::A_STAGE_FLOATS; };
  float4 a_next[T::A_COPIES];  // the next A tile, on its way through registers

  // [pipeline]
  // Prologue: the first step's tiles into stage 0.
  const int first_k = first_step * T::BK;
  copy_b_tile_async<T, ALIGNED, EDGES>(stage_bs(0), B, K, N, block_col, first_k, tid);
  load_a_tile<T, ALIGNED, EDGES>(a_next, A, M, K, block_row, first_k, tid);
  store_a_tile<T>(stage_as(0), a_next, tid);
  cp_async_wait_all();
  // Barrier 0. Stage 0: ready. Stage 1: never used, free.
  __syncthreads();

  int stage = 0;  // the stage that holds this step's tiles
  for (int step = first_step; step < end_step; ++step) {
    const bool has_next = step + 1 < end_step;
    const int next = stage ^ 1;
    if (has_next) {
      // Load issued: the next tiles start towards stage `next`, which every
      // thread finished reading before the last barrier (or never read).
      copy_b_tile_async<T, ALIGNED, EDGES>(stage_bs(next), B, K, N, block_col, (step + 1) * T::BK,
                                           tid);
      load_a_tile<T, ALIGNED, EDGES>(a_next, A, M, K, block_row, (step + 1) * T::BK, tid);
    }
    // Consume: stage `stage` is read here, and only read, by every thread.
    compute_tile<T>(acc, stage_as(stage), stage_bs(stage), tid);
    if (has_next) {
      store_a_tile<T>(stage_as(next), a_next, tid);
      cp_async_wait_all();
    }
    // The one barrier of the step: after it, stage `next` is ready (every
    // thread's stores and copies into it are done, and the barrier orders
    // them before any thread's reads) and stage `stage` is consumed, so
    // reusable: no thread reads it before the next step's loads go into it.
    __syncthreads();
    stage = next;
  }
  // [end pipeline]
}

/// @brief C = alpha * A * B + beta * C for any M, N, K >= 1, with warp
/// tiling and a two-stage software pipeline over K.
///
/// Block b of the (one-dimensional) grid computes the BM x BN tile of C that
/// block_tile() assigns it, over all of K (accumulate_steps()), then writes it.
///
/// @tparam T a Tiling: the tile sizes, checked when it is instantiated.
/// @tparam ALIGNED K % 4 == 0, N % 4 == 0 and A, B, C 16-byte aligned: the
///         16-byte global accesses are then aligned (see launch()).
/// @tparam EDGES false only when BM divides M, BN divides N and BK divides K
///         (and ALIGNED): every tile then lies inside the matrices, and no
///         load or store tests an edge. The defaults, true and false, are
///         this exact path, the one the standard sizes take.
/// @pre M, N, K >= 1; M * K, K * N and M * N below 2^31 (int offsets).
/// @pre blockDim.x == T::NUM_THREADS, gridDim.x == ceil(M / BM) * ceil(N / BN),
///      and T::SMEM_BYTES of dynamic shared memory (see launch()).
template <class T, bool ALIGNED = true, bool EDGES = false>
__global__ void __launch_bounds__(T::NUM_THREADS, T::MIN_BLOCKS)
    sgemm_warptiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                    float* C) {
  extern __shared__ __align__(16) float smem[];
  const int tid = threadIdx.x;
  const TileCoord tile =
      block_tile<T>(blockIdx.x, (M + T::BM - 1) / T::BM, (N + T::BN - 1) / T::BN);
  const int block_row = tile.row * T::BM;  // first row of the block's tile of C
  const int block_col = tile.col * T::BN;  // first column of the block's tile of C

  // acc[(wm * TM + i) * WNITER * TN + wn * TN + j]: element (i, j) of the
  // thread's block in sub-tile (wm, wn).
  float acc[T::WMITER * T::TM * T::WNITER * T::TN] = {};
  const int num_steps = (K + T::BK - 1) / T::BK;  // the last one may be partial
  accumulate_steps<T, ALIGNED, EDGES>(acc, A, B, M, N, K, block_row, block_col, 0, num_steps, smem,
                                      tid);

  // [epilogue]
  // beta == 0 is decided once per block, not once per element: the block
  // then neither reads C nor spends a multiply on it.
  if (beta == 0.0f) {
    store_c_tile<T, ALIGNED, EDGES, false>(acc, C, M, N, alpha, beta, block_row, block_col, tid);
  } else {
    store_c_tile<T, ALIGNED, EDGES, true>(acc, C, M, N, alpha, beta, block_row, block_col, tid);
  }
  // [end epilogue]
}
// [end]

// [launch]
/// True when `p` is 16-byte aligned.
inline bool aligned_16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/// Launches sgemm_warptiled<T, ALIGNED, EDGES> for `g`, asking once for the
/// dynamic shared memory that T needs.
template <class T, bool ALIGNED, bool EDGES>
void launch_path(const ladder::Gemm& g, cudaStream_t stream) {
  // Two stages can exceed the 48 KiB that a block gets without asking.
  static const bool smem_granted =
      ladder::allow_dynamic_smem(sgemm_warptiled<T, ALIGNED, EDGES>, T::SMEM_BYTES);
  (void)smem_granted;
  const int blocks = ladder::ceil_div(g.M, T::BM) * ladder::ceil_div(g.N, T::BN);
  sgemm_warptiled<T, ALIGNED, EDGES><<<blocks, T::NUM_THREADS, T::SMEM_BYTES, stream>>>(
      g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}

/// @brief Launches sgemm_warptiled for `g` on one of its three paths: one
/// block of T::NUM_THREADS threads and T::SMEM_BYTES of dynamic shared memory
/// per BM x BN tile of C (partial tiles included), in a one-dimensional grid
/// that block_tile() maps to tiles.
///
/// The aligned paths need every row of A, B and C to start 16-byte aligned:
/// K % 4 == 0 (rows of A), N % 4 == 0 (rows of B and C), and the pointers
/// themselves aligned. When, besides, the tiles divide M, N and K exactly,
/// the exact path tests no edge at all; otherwise the aligned path tests
/// them. Any other product takes the general path, whose 4-byte global
/// accesses make it slower.
/// @tparam T a Tiling.
/// @pre accepts<T>(g.M, g.N, g.K) is empty.
template <class T>
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const bool aligned =
      g.K % 4 == 0 && g.N % 4 == 0 && aligned_16(g.A) && aligned_16(g.B) && aligned_16(g.C);
  const bool exact = g.M % T::BM == 0 && g.N % T::BN == 0 && g.K % T::BK == 0;
  if (aligned && exact) {
    launch_path<T, true, false>(g, stream);
  } else if (aligned) {
    launch_path<T, true, true>(g, stream);
  } else {
    launch_path<T, false, true>(g, stream);
  }
}
// [end]

// [accepts]
/// @brief Says why an M x N x K product cannot be computed, or returns an
/// empty string: every size is computed, up to the 2^31 elements per matrix
/// that the kernel's int offsets can address.
/// @tparam T a Tiling.
template <class T>
std::string accepts(int M, int N, int K) {
  constexpr long long kMaxElements = (1ll << 31) - 1;
  if (M < 1 || N < 1 || K < 1) return "M, N and K must be at least 1";
  if (1ll * M * K > kMaxElements || 1ll * K * N > kMaxElements || 1ll * M * N > kMaxElements) {
    return "each matrix must have fewer than 2^31 elements (the kernel uses int offsets)";
  }
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
          {"MIN_BLOCKS", T::MIN_BLOCKS},
          {"GROUP_M", T::GROUP_M},
          {"A_LAYOUT", static_cast<int>(T::A_LAYOUT)},
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

/// @brief This chapter as the runner and --describe see it, with tiling `T`:
/// the program runs Chosen, the sweep every configuration it times.
///
/// Its two other variants lay As out otherwise, for the padding table:
/// "swizzled" (chapter 10's swizzle) and "unpadded" (rows of BM floats, the
/// stores' conflict kept). The measure command measures them beside the
/// chapter.
template <class T>
ladder::Chapter chapter() {
  using Swizzled = WithALayout<T, ALayout::kSwizzled>;
  using Unpadded = WithALayout<T, ALayout::kUnpadded>;
  // The resource report shows the exact path, the one the standard sizes take.
  const auto kernel = [](auto* function, int smem_bytes) {
    return ladder::KernelInfo{reinterpret_cast<const void*>(function), T::NUM_THREADS, smem_bytes};
  };
  return {"12-final",
          "The final kernel",
          __FILE__,
          {{ladder::kDefaultVariant, "The final kernel", launch<T>, accepts<T>,
            kernel(sgemm_warptiled<T>, T::SMEM_BYTES), constants<T>()},
           {"swizzled", "The final kernel (swizzled As)", launch<Swizzled>, accepts<Swizzled>,
            kernel(sgemm_warptiled<Swizzled>, Swizzled::SMEM_BYTES), constants<Swizzled>()},
           {"unpadded", "The final kernel (unpadded As)", launch<Unpadded>, accepts<Unpadded>,
            kernel(sgemm_warptiled<Unpadded>, Unpadded::SMEM_BYTES), constants<Unpadded>()}}};
}
// [end]

}  // namespace ch12
