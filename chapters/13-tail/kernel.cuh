// Chapter 13's kernel, its launcher and its description: everything
// but main(), which is in kernel.cu.
#pragma once

#include "../12-final/kernel.cuh"

namespace ch13 {

// This chapter adds no new inner loop. It reuses chapter 12's: its tilings,
// its K-loop (ch12::accumulate_steps()) and its store (ch12::store_c_tile()).
// What it changes is which block computes what: a block's work is a list of
// segments, each a run of K-steps of one tile of C.

// [tilings]
/// The two tilings the launcher picks from: chapter 12's, one 128 x 256
/// block per SM, and chapter 11's 64 x 128 tile, which chapter 12's kernel
/// runs at three blocks per SM.
///
/// Big has the sizes of chapter 12's sweep winner (ch12::Chosen) but its own
/// block order: groups of 8 block-rows (GROUP_M = 8, see ch12::block_tile())
/// instead of row by row. Blocks that run at the same time then walk down
/// columns of 8 tiles, which read the same panel of B, so the B panels of
/// neighbouring blocks stay in L2. The sweep timed plain tiles about as fast
/// either way; stream-K, whose shares follow the data-parallel tiles in this
/// order, ran faster grouped.
using Big = ch12::Tiling<128, 256, 16, 32, 128, 4, 8, 4, 256, 1, 8>;
using Small = ch12::Tiling<64, 128, 16, 32, 64, 2, 8, 4, 128, 1, 1>;
// [end]

// [turns]
/// Most tiles that stream-K's blocks may share in one launch: one turn
/// counter each. Stream-K shares at most two rounds' worth.
constexpr int kMaxSharedTiles = 16384;

/// Per tile of C: how many of its segments have been added into C so far in
/// this launch. Zero between launches: the last segment of a tile sets it
/// back. (One launch at a time: two streams must not share it.)
__device__ int tile_turns[kMaxSharedTiles];

/// Reads `*p` with acquire order at GPU scope: the writes another block made
/// before it released the value (store_release()) are visible after it.
__device__ int load_acquire(const int* p) {
#if defined(__CUDA_ARCH__)
  int value;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(value) : "l"(p) : "memory");
  return value;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/// Writes `value` to `*p` with release order at GPU scope.
__device__ void store_release(int* p, int value) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(value) : "memory");
#else
  __atomic_store_n(p, value, __ATOMIC_RELEASE);
#endif
}
// [end]

// [pack]
/// Copies the rows x cols matrix `src` (leading dimension src_ld) into the
/// dst_rows x dst_cols matrix `dst` (leading dimension dst_cols), with zeros
/// wherever src has no element. A thread per column of dst (blockIdx.x picks
/// kCopyThreads of them), each walking down rows blockIdx.y, blockIdx.y +
/// gridDim.y, ...: consecutive threads touch consecutive floats of a row.
constexpr int kCopyThreads = 256;
__global__ void copy_padded(const float* src, int src_ld, int rows, int cols, float* dst,
                            int dst_rows, int dst_cols) {
  const int col = blockIdx.x * kCopyThreads + threadIdx.x;
  if (col >= dst_cols) return;
  for (int row = blockIdx.y; row < dst_rows; row += gridDim.y) {
    const float x = row < rows && col < cols ? src[1ll * row * src_ld + col] : 0.0f;
    dst[1ll * row * dst_cols + col] = x;
  }
}

/// True when rows of K floats (A's) and of N floats (B's and C's) are whole
/// numbers of 16-byte groups: matrices the harness allocated then start
/// every row on a 16-byte boundary.
__host__ __device__ constexpr bool rows_on_16_bytes(int N, int K) {
  return K % 4 == 0 && N % 4 == 0;
}

/// The floats of a packed copy's row: n rounded up to a multiple of 32, so
/// that every row is whole 128-byte lines and starts on one. (A multiple of
/// 4 would give 16-byte rows; then a row of 4100 floats starts 16 bytes
/// further into a line than the last, and a tile's 64-byte piece of a row
/// touches three 32-byte sectors where two would do.)
constexpr int kPackedRowFloats = 32;
__host__ __device__ constexpr int packed_row(int n) {
  return (n + kPackedRowFloats - 1) / kPackedRowFloats * kPackedRowFloats;
}

/// The floats of the packed copies of an M x N x K product: A as M x Kp,
/// B as Kp x Np and C as M x Np, where Kp and Np are packed_row(K) and
/// packed_row(N).
inline long long packed_floats(int M, int N, int K) {
  const long long Kp = packed_row(K), Np = packed_row(N);
  return M * Kp + Kp * Np + M * Np;
}

/// The floats the copies move, read and written: A and B in; C in (the
/// count assumes beta != 0) and out.
inline long long packing_moves(int M, int N, int K) {
  const long long Kp = packed_row(K), Np = packed_row(N);
  return M * (K + Kp) + (1ll * K * N + Kp * Np) + 2 * M * (N + Np);
}
// [end]

// [segment]
/// One run of K-steps of one tile of C, and its place among the tile's
/// segments in the order of K: `turn` of `turns` (turn 0 holds step 0).
/// Split-K's turn is its slice, whose matrix of the workspace it writes;
/// a stream-K block adds its segment into C in its turn.
struct Segment {
  int tile;        ///< the tile, in block_tile()'s order (0 .. tiles - 1)
  int first_step;  ///< its first K-step
  int end_step;    ///< one past its last K-step
  int turn;        ///< 0 .. turns - 1
  int turns;       ///< how many segments the tile has
  int counter;     ///< stream-K: its tile's turn counter in tile_turns
};

/// How a launch divides the work. Every tile has `steps` K-steps of BK, so
/// the product is tiles * steps iterations of one tile and one step.
/// `blocks` blocks divide them:
///   * split-K (stream_k false): `slices` blocks per tile, block (x, y)
///     computes slice y of tile x: steps y * steps_per_slice onwards, into
///     the workspace; a second kernel adds the slices into C. One slice per
///     tile is chapter 12's launch, straight into C.
///   * stream-K (stream_k true): the first `dp_tiles` tiles take a block
///     each, as in chapter 12 (the "data-parallel" part); the `blocks` blocks
///     after them share the other tiles' iterations: block b of them
///     computes iterations [b * total / blocks, (b + 1) * total / blocks) of
///     those tiles, wherever they fall, every block the same share, give or
///     take one.
struct Schedule {
  int tiles_m;          ///< tiles down M
  int tiles_n;          ///< tiles across N
  int steps;            ///< K-steps per tile: ceil(K / BK)
  long long elements;   ///< elements of C: M * N
  bool stream_k;        ///< which of the two ways
  int slices;           ///< split-K: slices per tile (gridDim.y)
  int steps_per_slice;  ///< split-K: steps of every slice but the last
  int dp_tiles;         ///< stream-K: tiles computed a block each, first
  int blocks;           ///< stream-K: blocks that share the other tiles
};

/// Split-K: slice `slice` of tile `tile`.
__host__ __device__ inline Segment split_k_segment(const Schedule& s, int tile, int slice) {
  const int first = slice * s.steps_per_slice;
  const int end = first + s.steps_per_slice < s.steps ? first + s.steps_per_slice : s.steps;
  return {tile, first, end, slice, s.slices, tile};
}

/// Stream-K: the iterations the shared tiles hold, counted from the first
/// step of tile dp_tiles.
__host__ __device__ inline long long stream_k_total(const Schedule& s) {
  return (1ll * s.tiles_m * s.tiles_n - s.dp_tiles) * s.steps;
}

/// Stream-K: the first iteration of sharing block `block` (block `blocks`
/// gives the end of the last).
__host__ __device__ inline long long stream_k_begin(const Schedule& s, int block) {
  return stream_k_total(s) * block / s.blocks;
}

/// Stream-K: the block whose iterations include iteration `i`.
__host__ __device__ inline int stream_k_owner(const Schedule& s, long long i) {
  // The largest b with total * b / blocks <= i, that is with
  // total * b < (i + 1) * blocks.
  return static_cast<int>(((i + 1) * s.blocks - 1) / stream_k_total(s));
}

/// Stream-K: the segment of block `block` that ends at iteration `end`
/// (exclusive), inside the block's range, which starts at `begin`. A block
/// walks its range from its end down: first the head (step 0 on) of the tile
/// it ends in, turn 0, which waits for nothing; then any whole tiles; last
/// the tail of the tile it starts in, whose earlier turns belong to lower
/// blocks. Only a range that lies inside one tile, past its head, starts
/// with a wait, for the block before it.
__host__ __device__ inline Segment stream_k_segment(const Schedule& s, int block, long long begin,
                                                    long long end) {
  const int shared_tile = static_cast<int>((end - 1) / s.steps);
  const long long tile_begin = 1ll * shared_tile * s.steps;
  const long long first = begin > tile_begin ? begin : tile_begin;
  const int first_block = stream_k_owner(s, tile_begin);
  const int last_block = stream_k_owner(s, tile_begin + s.steps - 1);
  Segment seg;
  seg.tile = s.dp_tiles + shared_tile;
  seg.first_step = static_cast<int>(first - tile_begin);
  seg.end_step = static_cast<int>(end - tile_begin);
  seg.turn = block - first_block;
  seg.turns = last_block - first_block + 1;
  seg.counter = shared_tile;
  return seg;
}
// [end]

// [add-into-c]
/// Adds a segment's results `acc` into the block's tile of C, in its turn:
/// turn 0 writes alpha * acc + beta * C (without reading C when beta == 0),
/// every later turn alpha * acc + C. A tile of one segment is written at
/// once, as in chapter 12. Otherwise thread 0 waits until the tile's counter
/// says it is this segment's turn, and after the block's writes, moves it
/// on: to the next turn, or back to 0 after the last.
template <class T, bool ALIGNED, bool EDGES>
__device__ void add_into_c(const float (&acc)[T::WMITER * T::TM * T::WNITER * T::TN],
                           const Segment& seg, float* C, int M, int N, float alpha, float beta,
                           int block_row, int block_col, int tid) {
  if (seg.turns > 1) {
    if (tid == 0) {
      while (load_acquire(&tile_turns[seg.counter]) != seg.turn) {
      }
    }
    // Every thread waits for thread 0 and, through it, for the earlier turns' writes.
    __syncthreads();
  }
  if (seg.turn == 0 && beta == 0.0f) {
    ch12::store_c_tile<T, ALIGNED, EDGES, false>(acc, C, M, N, alpha, beta, block_row, block_col,
                                                 tid);
  } else {
    const float beta_here = seg.turn == 0 ? beta : 1.0f;
    ch12::store_c_tile<T, ALIGNED, EDGES, true>(acc, C, M, N, alpha, beta_here, block_row,
                                                block_col, tid);
  }
  if (seg.turns > 1) {
    // All of the block's writes are made before thread 0 passes the turn on.
    __syncthreads();
    if (tid == 0) {
      store_release(&tile_turns[seg.counter], seg.turn + 1 == seg.turns ? 0 : seg.turn + 1);
    }
  }
}
// [end]

// [kernel]
/// Computes one segment: its K-steps of its tile (chapter 12's K-loop). Then
/// adds them into C; or, for split-K in slices (`TO_SLICE`), writes the sums
/// as they are into the slice's M x N matrix of `partials`, where the tile's
/// elements of C would go. A template parameter, not a test of `partials`:
/// each launch compiles only the ending it runs.
template <class T, bool ALIGNED, bool EDGES, bool TO_SLICE>
__device__ void compute_segment(const Segment& seg, const Schedule& s, int M, int N, int K,
                                float alpha, const float* A, const float* B, float beta, float* C,
                                float* partials, float* smem, int tid) {
  const ch12::TileCoord tile = ch12::block_tile<T>(seg.tile, s.tiles_m, s.tiles_n);
  const int block_row = tile.row * T::BM;
  const int block_col = tile.col * T::BN;
  float acc[T::WMITER * T::TM * T::WNITER * T::TN] = {};
  ch12::accumulate_steps<T, ALIGNED, EDGES>(acc, A, B, M, N, K, block_row, block_col,
                                            seg.first_step, seg.end_step, smem, tid);
  if constexpr (TO_SLICE) {
    ch12::store_c_tile<T, ALIGNED, EDGES, false>(acc, partials + seg.turn * s.elements, M, N, 1.0f,
                                                 0.0f, block_row, block_col, tid);
  } else {
    add_into_c<T, ALIGNED, EDGES>(acc, seg, C, M, N, alpha, beta, block_row, block_col, tid);
  }
}

/// @brief C = alpha * A * B + beta * C, its work divided among the blocks as
/// `s` says: by tiles and slices of K (split-K), or in equal shares of all
/// the tiles' K-steps (stream-K).
/// Split-K's blocks wait for no one: each writes its slice to `partials`,
/// and sum_slices() adds them up after the launch. A stream-K block waits
/// only for blocks of a lower index, and only for their first segment (see
/// stream_k_segment()). The turns keep the result right whatever order the
/// blocks run in: a tile's segments add into C in the order of K. Finishing
/// needs more: a block waited for must get a slot. The CUDA programming model
/// does not promise an order in which blocks start; in practice the GPU
/// starts them in the order of their index. Then the unfinished block of the
/// lowest index has started or is next to start, and it waits for nothing
/// (every block it could wait for has finished), so every block finishes.
/// @pre the grid is (tiles, slices) for split-K and (dp_tiles + blocks) for
///      stream-K;
///      blockDim.x == T::NUM_THREADS; T::SMEM_BYTES of dynamic shared
///      memory; every tile_turns counter is 0; split-K in slices: room for
///      slices M x N matrices at `partials`.
template <class T, bool ALIGNED, bool EDGES>
__global__ void __launch_bounds__(T::NUM_THREADS, T::MIN_BLOCKS)
    sgemm_segments(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                   float* C, float* partials, Schedule s) {
  extern __shared__ __align__(16) float smem[];
  const int tid = threadIdx.x;
  if (!s.stream_k) {
    const Segment seg = split_k_segment(s, blockIdx.x, blockIdx.y);
    if (s.slices == 1) {  // chapter 12's launch, straight into C
      compute_segment<T, ALIGNED, EDGES, false>(seg, s, M, N, K, alpha, A, B, beta, C, nullptr,
                                                smem, tid);
    } else {
      compute_segment<T, ALIGNED, EDGES, true>(seg, s, M, N, K, alpha, A, B, beta, C, partials,
                                               smem, tid);
    }
    return;
  }
  if (static_cast<int>(blockIdx.x) < s.dp_tiles) {
    const Segment whole{static_cast<int>(blockIdx.x), 0, s.steps, 0, 1, 0};
    compute_segment<T, ALIGNED, EDGES, false>(whole, s, M, N, K, alpha, A, B, beta, C, nullptr,
                                              smem, tid);
    return;
  }
  const int block = blockIdx.x - s.dp_tiles;  // among the sharing blocks
  const long long begin = stream_k_begin(s, block);
  for (long long end = stream_k_begin(s, block + 1); end > begin;) {
    const Segment seg = stream_k_segment(s, block, begin, end);
    compute_segment<T, ALIGNED, EDGES, false>(seg, s, M, N, K, alpha, A, B, beta, C, nullptr, smem,
                                              tid);
    end -= seg.end_step - seg.first_step;
  }
}
// [end]

// [sum-slices]
/// Threads per block of the second pass.
constexpr int kSumThreads = 256;

/// Split-K's second pass: C = alpha * (the sum of the slices' partial sums,
/// added in the order of K) + beta * C, without reading C when beta == 0.
/// Each thread takes four consecutive elements (ALIGNED: one 16-byte access
/// per matrix; M * N is then a multiple of 4) or one.
/// @pre the grid covers ceil(M * N / 4) threads (ALIGNED) or M * N.
template <bool ALIGNED>
__global__ void sum_slices(const float* partials, long long elements, int slices, float alpha,
                           float beta, float* C) {
  constexpr int WIDTH = ALIGNED ? 4 : 1;
  const long long first = WIDTH * (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x);
  if (first >= elements) return;
  if constexpr (ALIGNED) {
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int slice = 0; slice < slices; ++slice) {
      const float4 p = ch12::load_float4(partials + slice * elements + first);
      sum.x += p.x;
      sum.y += p.y;
      sum.z += p.z;
      sum.w += p.w;
    }
    float4 c = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (beta != 0.0f) c = ch12::load_float4(C + first);
    ch12::store_float4(C + first,
                       make_float4(alpha * sum.x + beta * c.x, alpha * sum.y + beta * c.y,
                                   alpha * sum.z + beta * c.z, alpha * sum.w + beta * c.w));
  } else {
    float sum = 0.0f;
    for (int slice = 0; slice < slices; ++slice) sum += partials[slice * elements + first];
    C[first] = beta != 0.0f ? alpha * sum + beta * C[first] : alpha * sum;
  }
}
// [end]

// [plan]
/// Split-K for tiling T: `slices` slices of each tile's K-steps, as even as
/// whole steps allow; fewer if some would be empty. One slice is chapter 12's
/// launch, a block per tile.
template <class T>
Schedule split_k(int M, int N, int K, int slices) {
  Schedule s{};
  s.tiles_m = ladder::ceil_div(M, T::BM);
  s.tiles_n = ladder::ceil_div(N, T::BN);
  s.steps = ladder::ceil_div(K, T::BK);
  s.elements = 1ll * M * N;
  s.steps_per_slice = ladder::ceil_div(s.steps, slices);
  s.slices = ladder::ceil_div(s.steps, s.steps_per_slice);
  return s;
}

/// Stream-K for tiling T with `blocks` sharing blocks, one per slot of the
/// GPU. When the tiles fill two rounds of `blocks` or more, all but the last
/// one or two rounds' worth are data-parallel, a block each, so that blocks
/// that run together share panels of A and B in L2 as in chapter 12; the
/// sharing blocks then divide between one and two rounds' worth of tiles.
/// (Osama et al.'s "data-parallel + two-tile stream-K".)
template <class T>
Schedule stream_k(int M, int N, int K, int blocks) {
  Schedule s = split_k<T>(M, N, K, 1);
  const long long tiles = 1ll * s.tiles_m * s.tiles_n;
  const long long rounds = tiles / blocks;  // full rounds of tiles
  s.stream_k = true;
  s.dp_tiles = rounds >= 2 ? static_cast<int>((rounds - 1) * blocks) : 0;
  const long long total = (tiles - s.dp_tiles) * s.steps;
  s.blocks = static_cast<int>(blocks < total ? blocks : total);
  return s;
}

/// What the launcher runs: a tiling, how its work is divided, and whether
/// it first packs the matrices into aligned copies.
struct Plan {
  bool small;           ///< Small, not Big
  Schedule schedule;    ///< tiles, slices, or stream-K (of the packed sizes, if packed)
  double cost;          ///< the count it was picked by (see cost())
  bool packed;          ///< runs on aligned copies of A, B and C (launch_packed())
  long long workspace;  ///< floats of workspace: the copies, then the slices
};

/// The most workspace the launcher asks for, in floats (1 GiB).
constexpr long long kMaxWorkspaceFloats = 1ll << 28;

/// The most slices split-K cuts a tile's K-steps into: enough for the
/// fewest tiles, the 2 of Big at 256 x 256, to fill nearly a round of 132
/// SMs with Big's 8-warp blocks (2 x 64 = 128 blocks).
constexpr int kMaxSlices = 64;

/// The fixed cost of a segment, in K-steps: the pipeline's prologue (a
/// step's loads with nothing to hide them behind) and its store of C.
constexpr int kSegmentOverheadSteps = 2;

/// A step of an SM that holds fewer blocks than it has slots is not shorter
/// in proportion: part of a step's time (its loads' latency, the pipes'
/// depth) is the SM's whatever it holds. The count prices a step of an SM
/// that holds b of its blocks_per_sm blocks as b + kFixedBlocks blocks' work.
/// The value is fitted to Small's plain tiles as measured: one block per SM
/// at 1024 against three per SM at 1536 (the chapter shows the fit).
constexpr double kFixedBlocks = 1.0 / 3.0;

/// The busiest SM's share of `blocks` blocks of tiling T spread over `sms`
/// SMs of `blocks_per_sm` slots, in elements of C per K-step of each block:
/// it holds ceil(blocks / sms) of them, in full rounds of blocks_per_sm and
/// a last, part-filled one.
template <class T>
double busiest_sm(long long blocks, int sms, int blocks_per_sm) {
  const long long held = (blocks + sms - 1) / sms;
  const long long full_rounds = held / blocks_per_sm;
  const long long rest = held % blocks_per_sm;
  double slots = static_cast<double>(full_rounds * blocks_per_sm);
  if (rest > 0) slots += blocks_per_sm * (rest + kFixedBlocks) / (blocks_per_sm + kFixedBlocks);
  return slots * T::BM * T::BN;
}

/// A float that a copy or split-K's second pass moves, in the count's unit
/// (one K-step of one element of C on one SM). An SM runs a K-step of one
/// element, BK = 16 FMAs, in 16 / 128 of a clock. Memory gives it about 4
/// floats a clock (the H200 copies 4.1 TB/s: 15.7 bytes a clock per SM, at
/// 1.98 GHz and 132 SMs), a quarter of a clock each: two K-steps of one
/// element.
constexpr double kFloatSteps = 2.0;

/// The general path loads A and B one float at a time, four instructions
/// where the aligned path issues one 16-byte load: the count charges its
/// schedules a quarter more. The value is fitted to chapter 12's kernel,
/// which runs 4097 on the general path, timed at 4097 against 4096.
constexpr double kGeneralSlowdown = 5.0 / 4.0;

/// A copy's fixed cost, whatever its size, for each of the four copies of a
/// packed product (C in, as the count assumes beta != 0, and out): 0.5 us,
/// at 1.98 GHz and 8 K-steps of one element a clock. The value is fitted to
/// two products timed both ways: 1001^3 ran faster packed, 513^3 on the
/// general path. A launch alone takes longer; but the general path's
/// slowdown grows at small sizes, which one kGeneralSlowdown does not see.
constexpr double kCopyFixedSteps = 0.5 * 1980 * 8;
constexpr int kCopies = 4;

/// The count's price of packing an M x N x K product on `sms` SMs: the
/// floats the copies move, kFloatSteps each, spread over the SMs, and each
/// copy's fixed cost.
inline double packing_cost(int M, int N, int K, int sms) {
  return kFloatSteps * packing_moves(M, N, K) / sms + kCopies * kCopyFixedSteps;
}

/// @brief How long schedule `s` of tiling T keeps the GPU busy, on `sms`
/// SMs that hold `blocks_per_sm` of its blocks each, in elements of C times
/// K-steps: the busiest SM's blocks (busiest_sm()) times the steps each one
/// runs. Each segment costs kSegmentOverheadSteps more.
///   * split-K: every block runs one slice. With more than one, the second
///     pass reads each slice's matrix and C and writes C: slices + 2 floats
///     per element (one less when beta == 0, which the count ignores),
///     spread over the SMs, kFloatSteps each.
///   * stream-K: the data-parallel tiles' full rounds, then one round of
///     shares, as long as the largest share. A tile's turns add into C one
///     after another, so each turn after its first costs
///     kSegmentOverheadSteps more.
template <class T>
double cost(const Schedule& s, int sms, int blocks_per_sm) {
  const long long tiles = 1ll * s.tiles_m * s.tiles_n;
  if (!s.stream_k) {
    const double blocks = busiest_sm<T>(tiles * s.slices, sms, blocks_per_sm) *
                          (s.steps_per_slice + kSegmentOverheadSteps);
    if (s.slices == 1) return blocks;
    return blocks + kFloatSteps * (s.slices + 2) * s.elements / sms;
  }
  // dp_tiles is a whole number of rounds of every slot. A share of `share`
  // iterations spans at most share / steps + 2 tiles, and a tile at most
  // steps / share + 2 shares.
  const double dp =
      busiest_sm<T>(s.dp_tiles, sms, blocks_per_sm) * (s.steps + kSegmentOverheadSteps);
  const long long share = (stream_k_total(s) + s.blocks - 1) / s.blocks;
  const long long segments = share / s.steps + 2;
  const long long turns = s.steps / share + 2;
  const long long shared = share + kSegmentOverheadSteps * (segments + turns - 1);
  return dp + busiest_sm<T>(s.blocks, sms, blocks_per_sm) * shared;
}

/// Which schemes a variant may pick.
struct Schemes {
  bool split;
  bool stream_k;
};

/// The cheapest schedule of tiling T by cost(): one slice, or
/// (schemes.split) 2 to kMaxSlices slices whose partial sums fit in `workspace`
/// floats, or (schemes.stream_k) stream-K with one sharing block per slot,
/// if it shares no more than kMaxSharedTiles tiles.
template <class T>
Plan plan_for(int M, int N, int K, int sms, int blocks_per_sm, bool small, Schemes schemes,
              long long workspace) {
  const Schedule plain = split_k<T>(M, N, K, 1);
  Plan best{small, plain, cost<T>(plain, sms, blocks_per_sm), false, 0};
  const long long tiles = 1ll * plain.tiles_m * plain.tiles_n;
  std::vector<Schedule> others;
  for (int slices = 2; schemes.split && slices <= kMaxSlices && slices <= plain.steps; ++slices) {
    const Schedule split = split_k<T>(M, N, K, slices);
    if (split.slices * split.elements <= workspace) others.push_back(split);
  }
  const Schedule shared = stream_k<T>(M, N, K, sms * blocks_per_sm);
  if (schemes.stream_k && tiles - shared.dp_tiles <= kMaxSharedTiles) others.push_back(shared);
  for (const Schedule& s : others) {
    const double c = cost<T>(s, sms, blocks_per_sm);
    const long long slices = s.stream_k ? 0 : s.slices * s.elements;
    if (c < best.cost) best = {small, s, c, false, slices};
  }
  return best;
}

/// Tiling T's plan for a product whose rows are 16-byte aligned or not
/// (`aligned`): on the general path, its cost() a quarter dearer; or, when
/// the copies fit in `workspace` and their sizes in 32-bit indices, on
/// packed copies, plus the copies: their floats at kFloatSteps each and
/// their fixed costs. The cheaper.
template <class T>
Plan plan_tiling(int M, int N, int K, int sms, int blocks_per_sm, bool small, Schemes schemes,
                 bool aligned, long long workspace) {
  Plan best = plan_for<T>(M, N, K, sms, blocks_per_sm, small, schemes, workspace);
  if (aligned) return best;
  best.cost *= kGeneralSlowdown;
  const int Kp = packed_row(K), Np = packed_row(N);
  const long long copies = packed_floats(M, N, K);
  const bool indexable = 1ll * M * Kp <= ladder::kMaxMatrixElements &&
                         1ll * Kp * Np <= ladder::kMaxMatrixElements &&
                         1ll * M * Np <= ladder::kMaxMatrixElements;
  if (copies > workspace || !indexable) return best;
  Plan packed = plan_for<T>(M, Np, Kp, sms, blocks_per_sm, small, schemes, workspace - copies);
  packed.cost += packing_cost(M, N, K, sms);
  packed.packed = true;
  packed.workspace += copies;
  return packed.cost < best.cost ? packed : best;
}

/// Small's blocks work through elements of C more slowly per SM than Big's
/// (chapter 12's sweep timed chapter 11's 64 x 128 tile at three blocks per
/// SM about an eighth below the winner at 4096): the count charges Small
/// kSmallSlowdown times its cost.
constexpr double kSmallSlowdown = 8.0 / 7.0;

/// @brief The plan for an M x N x K product on a GPU of `sms` SMs that hold
/// `big_blocks` blocks of Big and `small_blocks` of Small each, whose rows
/// are 16-byte aligned or not (`aligned`), with `workspace` floats of
/// workspace: the tiling, division of work and packing whose count (cost(),
/// Small's times kSmallSlowdown) is smallest.
inline Plan plan(int M, int N, int K, int sms, int big_blocks, int small_blocks, Schemes schemes,
                 bool aligned = true, long long workspace = kMaxWorkspaceFloats) {
  const Plan big = plan_tiling<Big>(M, N, K, sms, big_blocks, false, schemes, aligned, workspace);
  const Plan small =
      plan_tiling<Small>(M, N, K, sms, small_blocks, true, schemes, aligned, workspace);
  return kSmallSlowdown * small.cost < big.cost ? small : big;
}

/// The plan of stream-K alone (the variant "stream-k"), with whichever
/// tiling the count favours as plan() does.
inline Plan stream_k_plan(int M, int N, int K, int sms, int big_blocks, int small_blocks) {
  const Schedule big = stream_k<Big>(M, N, K, sms * big_blocks);
  const Schedule small = stream_k<Small>(M, N, K, sms * small_blocks);
  const Plan big_plan{false, big, cost<Big>(big, sms, big_blocks), false, 0};
  const Plan small_plan{true, small, cost<Small>(small, sms, small_blocks), false, 0};
  return kSmallSlowdown * small_plan.cost < big_plan.cost ? small_plan : big_plan;
}
// [end]

// [launch]
/// Launches sgemm_segments<T, ALIGNED, EDGES> with schedule `s`, and for
/// split-K in slices, the second pass, which adds the slices from the
/// workspace.
template <class T, bool ALIGNED, bool EDGES>
void launch_path(const ladder::Gemm& g, const Schedule& s, cudaStream_t stream) {
  static const bool smem_granted =
      ladder::allow_dynamic_smem(sgemm_segments<T, ALIGNED, EDGES>, T::SMEM_BYTES);
  (void)smem_granted;
  const dim3 grid =
      s.stream_k ? dim3(s.dp_tiles + s.blocks) : dim3(s.tiles_m * s.tiles_n, s.slices);
  sgemm_segments<T, ALIGNED, EDGES><<<grid, T::NUM_THREADS, T::SMEM_BYTES, stream>>>(
      g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C, g.workspace, s);
  if (!s.stream_k && s.slices > 1) {
    // Split-K's second pass, one thread per 16-byte group of C (or element).
    const long long threads = ALIGNED ? s.elements / 4 : s.elements;
    const int blocks = static_cast<int>((threads + kSumThreads - 1) / kSumThreads);
    sum_slices<ALIGNED><<<blocks, kSumThreads, 0, stream>>>(g.workspace, s.elements, s.slices,
                                                            g.alpha, g.beta, g.C);
  }
}

/// True when every row of A, B and C starts on a 16-byte boundary.
inline bool rows_aligned(const ladder::Gemm& g) {
  return rows_on_16_bytes(g.N, g.K) && ch12::aligned_16(g.A) && ch12::aligned_16(g.B) &&
         ch12::aligned_16(g.C);
}

/// Launches tiling T with schedule `s` on the path chapter 12's launcher
/// would take: exact, aligned, or general.
template <class T>
void launch_tiling(const ladder::Gemm& g, const Schedule& s, cudaStream_t stream) {
  const bool aligned = rows_aligned(g);
  const bool exact = g.M % T::BM == 0 && g.N % T::BN == 0 && g.K % T::BK == 0;
  if (aligned && exact) {
    launch_path<T, true, false>(g, s, stream);
  } else if (aligned) {
    launch_path<T, true, true>(g, s, stream);
  } else {
    launch_path<T, false, true>(g, s, stream);
  }
}

/// Blocks of tiling T (its exact path) that fit on one SM of the current GPU.
template <class T>
int blocks_per_sm() {
  // The dynamic shared memory must be granted before the occupancy is asked.
  ladder::allow_dynamic_smem(sgemm_segments<T, true, false>, T::SMEM_BYTES);
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, sgemm_segments<T, true, false>,
                                                           T::NUM_THREADS, T::SMEM_BYTES));
  return blocks;
}

/// The SMs of the current GPU.
inline int sm_count() {
  int device = 0, count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

/// The plan this GPU gets for an M x N x K product with `schemes`, rows
/// aligned or not, and `workspace` floats of workspace.
inline Plan plan_on_this_gpu(int M, int N, int K, Schemes schemes, bool aligned,
                             long long workspace) {
  static const int sms = sm_count();
  static const int big_blocks = blocks_per_sm<Big>();
  static const int small_blocks = blocks_per_sm<Small>();
  return plan(M, N, K, sms, big_blocks, small_blocks, schemes, aligned, workspace);
}

/// The workspace the launcher with `SPLIT` and `STREAM_K` wants for an M x
/// N x K product whose matrices the harness allocated (16-byte aligned):
/// what its plan needs, given up to kMaxWorkspaceFloats.
template <bool SPLIT, bool STREAM_K>
long long workspace(int M, int N, int K) {
  return plan_on_this_gpu(M, N, K, {SPLIT, STREAM_K}, rows_on_16_bytes(N, K), kMaxWorkspaceFloats)
      .workspace;
}

/// Runs `run` on aligned copies of g's matrices in g's workspace: A as
/// M x Kp, B as Kp x Np and C as M x Np (Kp and Np are packed_row(K) and
/// packed_row(N)), zeros in the added columns and rows, which add nothing
/// to the products. Then copies C back. `run` gets the copies as a product
/// of M x Np x Kp, and the rest of the workspace as its own.
template <class Run>
void launch_packed(const ladder::Gemm& g, cudaStream_t stream, Run run) {
  const int M = g.M, N = g.N, K = g.K, Kp = packed_row(K), Np = packed_row(N);
  float* A = g.workspace;
  float* B = A + 1ll * M * Kp;
  float* C = B + 1ll * Kp * Np;
  float* rest = C + 1ll * M * Np;
  const auto copy = [&](const float* src, int src_ld, int rows, int cols, float* dst, int dst_rows,
                        int dst_cols) {
    // Up to 4096 rows at once (gridDim.y may not pass 65 535).
    const dim3 grid(ladder::ceil_div(dst_cols, kCopyThreads), dst_rows < 4096 ? dst_rows : 4096);
    copy_padded<<<grid, kCopyThreads, 0, stream>>>(src, src_ld, rows, cols, dst, dst_rows,
                                                   dst_cols);
  };
  copy(g.A, K, M, K, A, M, Kp);
  copy(g.B, N, K, N, B, Kp, Np);
  if (g.beta != 0.0f) copy(g.C, N, M, N, C, M, Np);  // with beta == 0, C is not read
  run(ladder::Gemm{M, Np, Kp, g.alpha, A, B, g.beta, C, rest,
                   g.workspace_floats - packed_floats(M, N, K)});
  copy(C, Np, M, N, g.C, M, N);
}

/// Launches tiling T as plan `p` says: packed or not.
template <class T>
void launch_plan(const ladder::Gemm& g, const Plan& p, cudaStream_t stream) {
  if (p.packed) {
    launch_packed(g, stream, [&](const ladder::Gemm& packed) {
      launch_tiling<T>(packed, p.schedule, stream);
    });
  } else {
    launch_tiling<T>(g, p.schedule, stream);
  }
}

/// @brief Launches `g` as plan() says, with the schemes `SPLIT` and
/// `STREAM_K` allow and the workspace g has.
template <bool SPLIT, bool STREAM_K>
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const Plan p =
      plan_on_this_gpu(g.M, g.N, g.K, {SPLIT, STREAM_K}, rows_aligned(g), g.workspace_floats);
  if (p.small) {
    launch_plan<Small>(g, p, stream);
  } else {
    launch_plan<Big>(g, p, stream);
  }
}

/// Launches `g` with stream-K whatever its size, with the tiling
/// stream_k_plan() picks: the scheme alone, to measure it, and to test it at
/// sizes where plan() would not pick it.
inline void launch_stream_k(const ladder::Gemm& g, cudaStream_t stream) {
  static const int sms = sm_count();
  static const int big_blocks = blocks_per_sm<Big>();
  static const int small_blocks = blocks_per_sm<Small>();
  const Plan p = stream_k_plan(g.M, g.N, g.K, sms, big_blocks, small_blocks);
  if (p.small) {
    launch_tiling<Small>(g, p.schedule, stream);
  } else {
    launch_tiling<Big>(g, p.schedule, stream);
  }
}
// [end]

// [describe]
/// @brief This chapter as the runner and --describe see it. Its own variant
/// picks among tiles, split-K and stream-K; "tiles" only between the two
/// tilings (chapter 12's kernel with a tiling per size); "split-k" among
/// tiles and split-K; "stream-k" always runs stream-K. Its constants are
/// Big's, then Small's, prefixed "SMALL_"; its resources are Big's exact
/// path.
inline ladder::Chapter chapter() {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_segments<Big, true, false>),
                                  Big::NUM_THREADS, Big::SMEM_BYTES};
  std::vector<ladder::Constant> constants = ch12::constants<Big>();
  for (const ladder::Constant& c : ch12::constants<Small>()) {
    constants.push_back({"SMALL_" + c.name, c.value});
  }
  constants.push_back({"SEGMENT_OVERHEAD_STEPS", kSegmentOverheadSteps});
  constants.push_back({"SMALL_SLOWDOWN_PER_MILLE", static_cast<long long>(1000 * kSmallSlowdown)});
  constants.push_back({"MAX_SHARED_TILES", kMaxSharedTiles});
  constants.push_back({"MAX_SLICES", kMaxSlices});
  constants.push_back(
      {"GENERAL_SLOWDOWN_PER_MILLE", static_cast<long long>(1000 * kGeneralSlowdown)});
  constants.push_back(
      {"MAX_WORKSPACE_BYTES", kMaxWorkspaceFloats * static_cast<long long>(sizeof(float))});
  constexpr ladder::Arithmetic fp32 = ladder::Arithmetic::kFp32;
  return {"13-tail",
          "The tail",
          __FILE__,
          {{ladder::kDefaultVariant, "Tiles, split-K or stream-K", launch<true, true>,
            ch12::accepts<Big>, kernel, constants, fp32, workspace<true, true>},
           {"tiles", "A tiling per size", launch<false, false>, ch12::accepts<Big>, kernel,
            constants, fp32, workspace<false, false>},
           {"split-k", "Tiles or split-K", launch<true, false>, ch12::accepts<Big>, kernel,
            constants, fp32, workspace<true, false>},
           {"stream-k", "Stream-K at every size", launch_stream_k, ch12::accepts<Big>, kernel,
            constants}}};
}
// [end]

}  // namespace ch13
