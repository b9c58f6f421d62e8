// Chapter 16's block tile, where its copies put B's floats in shared memory,
// and how 3xTF32 splits A's floats: shared by the kernel (kernel.cuh), the
// CPU tool that draws its bank maps (code/tools/bankmap.cu) and the CPU
// tests, none of which compiles wgmma.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ch16 {

// [tiling]
constexpr int BN = 128;          ///< columns of C (of B) per block
constexpr int BK = 32;           ///< K per stage: 128 bytes of a row, one swizzle span
constexpr int STAGES = 4;        ///< buffers in the ring between producer and consumers
constexpr int BOX_COLUMNS = 32;  ///< floats in one 128-byte swizzled row of a copy
constexpr int WARPGROUP = 128;   ///< threads that issue one wgmma together
constexpr int CONSUMERS = 2;     ///< warpgroups that multiply; one more produces
constexpr int NUM_THREADS = (CONSUMERS + 1) * WARPGROUP;
/// The producer warpgroup's threads that convert A's tiles on chip: all but
/// its first warp, whose first thread issues the copies.
constexpr int CONVERTERS = WARPGROUP - 32;
static_assert(CONVERTERS % 32 == 0, "the converters are whole warps: each arrives once on ready");

/// A block's tile: BM rows of C (of A) by BN columns. Each consumer computes
/// its 64 columns of the tile for all BM rows with wgmma.m64n{BM}k8.
/// PRODUCTS is 1 (TF32) or 3 (3xTF32, chapter 15's split); with 3, the
/// tensor cores sum SUM_STEPS steps of 8 along K from zero, and an FP32
/// addition adds that into the accumulators. ROUNDED: on 3xTF32, A's big
/// part is A rounded to TF32 (chapter 15's split), not truncated
/// (truncated_small()); on TF32, A and B are rounded to TF32, as cuBLAS does,
/// where wgmma would truncate them: A once before the product, B^T's
/// fragments in registers. ON_CHIP: A's tile is rounded or split in shared
/// memory, stage by stage, by the producer warpgroup's CONVERTERS threads
/// (convert_a_tiles()), in place of the pass over A before the product
/// (convert_a()).
template <int BM_, int PRODUCTS_ = 1, int SUM_STEPS_ = BK / 8, bool ROUNDED_ = false,
          bool ON_CHIP_ = false>
struct Tiling {
  static constexpr int BM = BM_;
  static constexpr int PRODUCTS = PRODUCTS_;
  static constexpr int SUM_STEPS = SUM_STEPS_;
  static constexpr bool ROUNDED = ROUNDED_;
  static constexpr bool ON_CHIP = ON_CHIP_;
  /// Whether a pass over A (convert_a()) runs before the product: on 3xTF32
  /// and on rounded TF32, unless A's tiles are converted on chip.
  static constexpr bool PASS_OVER_A = (PRODUCTS == 3 || ROUNDED) && !ON_CHIP;
  /// A's tiles per stage: A's own, and on 3xTF32 A's small part too:
  /// written once before the product (convert_a()) and copied like A, or
  /// written beside B's tile on chip. A's own tile is A's big part in both
  /// products that take it: no big_finite (consume_3xtf32() says why).
  static constexpr int A_TILES = PRODUCTS == 3 ? 2 : 1;
  /// The floats the copies bring per stage: A's tile, B's, then A's small
  /// part where a pass over A wrote it.
  static constexpr int COPY_FLOATS = ((ON_CHIP ? 1 : A_TILES) * BM + BN) * BK;
  static constexpr int STAGE_FLOATS = (A_TILES * BM + BN) * BK;
  static_assert(!ON_CHIP || PRODUCTS == 3 || ROUNDED,
                "on chip, A's tile is rounded or split: TF32 truncated has nothing to convert");
  /// A 3xTF32 stage of the 128-row tile holds three 16 KiB tiles (A, B,
  /// A's small part), as TF32's 256-row tile's does: four stages fit.
  static constexpr int STAGES = ch16::STAGES;
  /// Rows of block tiles in one raster group (chapter 12's order), so that
  /// the blocks running at once share their tiles of A and B in L2.
  static constexpr int GROUP_M = 8;
  /// The stages, and 1024 bytes to move the first to a 1024-byte boundary.
  static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * static_cast<int>(sizeof(float)) + 1024;
  static_assert(BM == 64 || BM == 128 || BM == 256,
                "the kernel has wgmma m64n64k8, m64n128k8 and m64n256k8");
  static_assert(PRODUCTS == 1 || (PRODUCTS == 3 && BM <= 128),
                "PRODUCTS is 1, or 3 with the 64- or 128-row tile (its sums take BM / 2 more "
                "registers, too many beside the 256-row tile's accumulators)");
  static_assert(SUM_STEPS >= 1 && (BK / 8) % SUM_STEPS == 0, "SUM_STEPS divides a stage's steps");
  /// Registers per thread for the producer and the consumers (setmaxnreg),
  /// or 0 to leave them as the compiler sets them. A 384-thread block gets
  /// at most 65 536 / 384, about 170, per thread: 168, as registers come in
  /// eights. The wide tile's 128 accumulators, and 3xTF32's 64 accumulators
  /// with 64 sums, need more, and the producer needs few, so its warpgroup
  /// gives some up: 128 threads at 40 and 256 at 232 make 64 512, 384 at 168.
  static constexpr bool SHIFTS_REGISTERS = BM > 128 || PRODUCTS == 3;
  static constexpr int PRODUCER_REGISTERS = SHIFTS_REGISTERS ? 40 : 0;
  static constexpr int CONSUMER_REGISTERS = SHIFTS_REGISTERS ? 232 : 0;
};

/// The 128 x 128 tile, A and B rounded to TF32 as cuBLAS rounds them: the
/// variant "square", and the launcher's pick where the count
/// (copy_rounds()) does not favour Wide.
using Chosen = Tiling<128, 1, BK / 8, true>;
/// Twice as many rows: the same B tile serves twice the product.
using Wide = Tiling<256, 1, BK / 8, true>;
/// Half as many rows: twice the blocks, for products whose 128 x 128 tiles
/// leave SMs idle.
using Narrow = Tiling<64, 1, BK / 8, true>;
/// The same three with A and B as wgmma reads them: truncated to TF32.
using Truncated = Tiling<128>;
using TruncatedWide = Tiling<256>;
using TruncatedNarrow = Tiling<64>;
/// The same three rounded on chip: A's tile in shared memory, not A in a pass
/// before the product.
using OnChip = Tiling<128, 1, BK / 8, true, true>;
using OnChipWide = Tiling<256, 1, BK / 8, true, true>;
using OnChipNarrow = Tiling<64, 1, BK / 8, true, true>;
/// 3xTF32 (chapter 17) on the 128 x 128 tile, a stage's products summed
/// from zero.
using Split = Tiling<128, 3>;
/// 3xTF32 with A rounded, as chapter 15 splits it, and the tensor cores'
/// sums half as long: two steps of 8.
using SplitRounded = Tiling<128, 3, 2, true>;
/// The same two on the 64 x 128 tile.
using SplitNarrow = Tiling<64, 3>;
using SplitRoundedNarrow = Tiling<64, 3, 2, true>;
/// The four split on chip.
using SplitOnChip = Tiling<128, 3, BK / 8, false, true>;
using SplitOnChipNarrow = Tiling<64, 3, BK / 8, false, true>;
using SplitRoundedOnChip = Tiling<128, 3, 2, true, true>;
using SplitRoundedOnChipNarrow = Tiling<64, 3, 2, true, true>;
// [end]

// [pick]
/// The count that picks a tile: an M x N product on `sms` SMs, one block of
/// tiling T each, takes ceil(blocks / sms) rounds. Where the copies bound a
/// K-step, a block's step lasts as long as its copies, (BM + BN) * BK
/// floats, so the product lasts as long as rounds times that.
template <class T>
constexpr long long copy_rounds(int M, int N, int sms) {
  const long long blocks = 1ll * ((M + T::BM - 1) / T::BM) * ((N + BN - 1) / BN);
  return (blocks + sms - 1) / sms * (T::BM + BN) * BK;
}
// [end]

// [last-round]
/// Where the tiles leave the last round part-filled, its tiles are cut
/// along K into slices, a block each, as many as fill the SMs: chapter 13's
/// split-K, on the last round alone. A slice's block writes its sums into
/// the workspace; once all of a tile's slices have, each adds up its share
/// of the tile into C (add_slices() in kernel.cuh).
struct LastRound {
  int tiles;            ///< tiles of C, in block_tile()'s order
  int whole_tiles;      ///< the first tiles: a block each, straight into C
  int slices;           ///< slices of each later tile (1: none is cut)
  int steps;            ///< K-steps of a tile
  int steps_per_slice;  ///< K-steps of every slice but the last
};

/// Tiling T's tiles for an M x N x K product, a block each, none cut.
template <class T>
constexpr LastRound uncut(int M, int N, int K) {
  const int tiles = ((M + T::BM - 1) / T::BM) * ((N + BN - 1) / BN);
  const int steps = (K + BK - 1) / BK;
  return {tiles, tiles, 1, steps, steps};
}

/// Tiling T's last round for an M x N x K product on `sms` SMs: its
/// sms / tiles-left slices per tile, at most one per K-step; none where that
/// is under 2.
template <class T>
constexpr LastRound last_round(int M, int N, int K, int sms) {
  const LastRound whole = uncut<T>(M, N, K);
  const int tiles = whole.tiles, steps = whole.steps;
  const int left = tiles % sms;  // the last round's tiles, if it is part-filled
  const int most = left == 0 ? 1 : sms / left;
  const int slices = most < steps ? most : steps;
  if (slices < 2) return whole;
  const int per_slice = (steps + slices - 1) / slices;
  // ceil(steps / per_slice) slices: none empty.
  return {tiles, tiles - left, (steps + per_slice - 1) / per_slice, steps, per_slice};
}

/// The blocks a launch of `r` takes: one per whole tile, one per slice.
constexpr int last_round_blocks(const LastRound& r) {
  return r.whole_tiles + (r.tiles - r.whole_tiles) * r.slices;
}

/// Block `block`'s share: K-steps [first_step, end_step) of tile `tile`.
/// `slice` numbers the slices of the cut tiles (its BM x BN matrix of the
/// workspace), -1 for a whole tile.
struct BlockWork {
  int tile;
  int first_step;
  int end_step;
  int slice;
};

__host__ __device__ constexpr BlockWork block_work(const LastRound& r, int block) {
  if (block < r.whole_tiles) return {block, 0, r.steps, -1};
  const int cut = block - r.whole_tiles;  // slice cut % slices of cut tile cut / slices
  const int first = cut % r.slices * r.steps_per_slice;
  const int end = first + r.steps_per_slice < r.steps ? first + r.steps_per_slice : r.steps;
  return {r.whole_tiles + cut / r.slices, first, end, cut};
}
// [end]

// [pick-cut]
/// The K-steps the busiest SM runs for the tiles `r`, one block per SM at a
/// time: a tile's steps for each whole round, then a slice's where the last
/// round is cut (a whole last round where it is not).
constexpr long long busiest_steps(const LastRound& r, int sms) {
  const long long whole_rounds = (r.whole_tiles + sms - 1) / sms;
  return whole_rounds * r.steps + (r.slices > 1 ? r.steps_per_slice : 0);
}

/// Chapter 16's count (copy_rounds()) with the last round cut: the floats
/// the busiest SM copies, (BM + BN) * BK for each of its K-steps.
template <class T>
constexpr long long cut_copies(int M, int N, int K, int sms) {
  return busiest_steps(last_round<T>(M, N, K, sms), sms) * (T::BM + BN) * BK;
}
// [end]

// [pick-tile]
/// Tiling T's count: the floats the busiest SM copies, without a cut
/// (copy_rounds()) or with the last round cut (cut_copies()).
template <class T, bool CUT>
constexpr long long copy_count(int M, int N, int K, int sms) {
  if constexpr (CUT) return cut_copies<T>(M, N, K, sms);
  return copy_rounds<T>(M, N, sms);
}

/// The rows (BM) of the tile chapter 16's launcher picks: Twice's where its
/// count is the smallest, Half's where its count is smaller than Square's,
/// Square's otherwise (ties go to the 128-row tile).
template <class Square, class Twice, class Half, bool CUT>
constexpr int picked_rows(int M, int N, int K, int sms) {
  const long long square = copy_count<Square, CUT>(M, N, K, sms);
  const long long wide = copy_count<Twice, CUT>(M, N, K, sms);
  const long long narrow = copy_count<Half, CUT>(M, N, K, sms);
  if (wide < square && wide < narrow) return Twice::BM;
  if (narrow < square) return Half::BM;
  return Square::BM;
}
// [end]

// [pick-on-chip]
/// Where converting A's tiles on chip costs less than a pass over A. The
/// pass converts each of A's floats once, but takes it from memory and back
/// to do so: spread over the SMs, M x K / sms floats per SM. On chip, a
/// block converts the A tile of every K-step it runs, so the busiest SM
/// converts its steps times BM x BK floats, in shared memory: each of A's
/// floats once for every column of tiles that reads it. A float converted
/// in shared memory costs less than one sent to memory and back, but it is
/// not free: it adds to the traffic of a step the tensor cores may bound.
/// So the launchers convert on chip where the pass's floats per SM are at
/// least 1 / kOnChipShare of the busiest SM's, with the last round cut.
/// The share was read off times measured on the H100 (chapter 17's page):
/// on chip, TF32 and 3xTF32 both won where the pass's share on the 128-row
/// tile was 0.20 (308 x 455 x 38530), 0.24 (512 x 512 x 16384) or 0.49
/// (256 x 256 x 65536), and both lost where it was 0.12 (1000 x 1000 x
/// 1000) or less. A sixth lies between.
constexpr int kOnChipShare = 6;

template <class T>
constexpr bool on_chip_pays(int M, int N, int K, int sms) {
  const long long pass_per_sm = 1ll * M * K / sms;
  const long long on_chip = busiest_steps(last_round<T>(M, N, K, sms), sms) * T::BM * BK;
  return kOnChipShare * pass_per_sm >= on_chip;
}
// [end]

// [pick-3xtf32]
/// 3xTF32's count. Its three products make the tensor cores, not the copies,
/// bound a K-step, so the count is the K-steps of the busiest SM: a tile's
/// steps per whole round, and a slice's in a cut last round, each step of
/// the 128-row tile's length. A 64-row block multiplies half as much per
/// step but likely takes longer than half: the rest of its step (B^T's
/// fragments and their split, the waits) does not halve. Fitted to the
/// variants' times at 4096 and 8192, where both tiles fill every SM: the
/// 64-row tile runs at 0.73 times the 128-row tile's rate, so its step
/// lasts 0.5 / 0.73, about 0.68, of one.
constexpr double kNarrowSplitStep = 0.68;

template <class T>
constexpr double split_steps(int M, int N, int K, int sms) {
  static_assert(T::PRODUCTS == 3 && (T::BM == 64 || T::BM == 128), "3xTF32's two tiles");
  return busiest_steps(last_round<T>(M, N, K, sms), sms) * (T::BM == 64 ? kNarrowSplitStep : 1.0);
}
// [end]

// [b-index]
/// Where float (k, n) of a stage's B tile lies: the tile is BK rows (k) of
/// BN floats (n), copied as BN / BOX_COLUMNS boxes of BOX_COLUMNS columns one
/// after another, each with the 128-byte swizzle: 16-byte piece p of row k
/// lands at piece p ^ (k % 8).
__host__ __device__ constexpr int b_tile_index(int k, int n) {
  const int box = n / BOX_COLUMNS, column = n % BOX_COLUMNS;
  return box * BK * BOX_COLUMNS + k * BOX_COLUMNS + ((column / 4) ^ (k % 8)) * 4 + column % 4;
}
// [end]

// [c-map]
/// Which element of the block's tile of C a consumer's accumulator
/// d[4 * j + r] holds: wgmma's accumulator layout, for C^T (rows n, columns
/// m), read back as C. Consumer warp w (0 .. 7: four per consumer) holds
/// C's columns 16w .. 16w + 15 for all BM rows. Its lane (g, t) = (lane / 4,
/// lane % 4) holds, in each 8 rows j, rows 8j + 2t and 8j + 2t + 1 of
/// columns 16w + g and 16w + g + 8: the layout of mma.sync's C fragment,
/// transposed and repeated down the rows.
__host__ __device__ constexpr int c_row(int lane, int j, int r) {
  return 8 * j + 2 * (lane % 4) + r % 2;
}
__host__ __device__ constexpr int c_col(int consumer_warp, int lane, int r) {
  return 16 * consumer_warp + lane / 4 + 8 * (r / 2);
}
// [end]

// [split-a]
/// What a small part is scaled by, as in chapter 15 (ch14::kSmallScale):
/// 2^10 keeps it finite, and keeps its bits for |x| >= 2^-123.
constexpr float kSmallScale = 1024.0f;

/// x truncated to TF32, its low 13 bits cleared: what wgmma reads of x.
__host__ __device__ inline float truncated(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= 0xffffe000u;
  float big;
  std::memcpy(&big, &bits, sizeof big);
  return big;
}

/// A's small part for 3xTF32 with A truncated. wgmma reads A's FP32 floats
/// from shared memory and drops their low 13 bits, so A's big part is x
/// truncated: A's own tile, read as it is. small is what truncating drops
/// (exact: x and big share their exponent) times kSmallScale, and 0 for an
/// infinity or NaN.
__host__ __device__ inline float truncated_small(float x) {
  return std::isfinite(x) ? (x - truncated(x)) * kSmallScale : 0.0f;
}
// [end]

// [keep-nan]
/// x's bits as an operand that wgmma truncates: x itself, but a NaN with its
/// quiet bit (bit 22) set, so that dropping the low 13 bits cannot turn a NaN
/// whose payload lies only there (0x7f800001, say) into an infinity.
__host__ __device__ inline uint32_t truncated_operand(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return std::isnan(x) ? bits | 0x00400000u : bits;
}
// [end]

}  // namespace ch16
