// Chapter 16's block tile, where its copies put B's floats in shared memory,
// which columns of B each consumer warp multiplies, and how 3xTF32 splits
// A's floats: shared by the kernel (kernel.cuh), the CPU tools that draw its
// bank maps and fragments (code/tools/bankmap.cu, fragmap.cu), the CPU
// tests and the CPU emulation of its stores of C, none of which compiles
// wgmma. The counts that pick a tile are in counts.cuh.
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
/// (convert_a()). SPREAD: which columns of B each consumer warp multiplies
/// (c_col()): in order, 16 side by side, or spread, so that its loads of
/// B^T's fragments are free of bank conflicts, at the price of one shuffle
/// per two stores of C (c_store_col(); the variant "wide-spread").
template <int BM_, int PRODUCTS_ = 1, int SUM_STEPS_ = BK / 8, bool ROUNDED_ = false,
          bool ON_CHIP_ = false, bool SPREAD_ = false>
struct Tiling {
  static constexpr int BM = BM_;
  static constexpr int PRODUCTS = PRODUCTS_;
  static constexpr int SUM_STEPS = SUM_STEPS_;
  static constexpr bool ROUNDED = ROUNDED_;
  static constexpr bool ON_CHIP = ON_CHIP_;
  static constexpr bool SPREAD = SPREAD_;
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
/// The wide tile with each consumer warp's columns of B spread (c_col()):
/// its loads of B^T's fragments free of bank conflicts.
using WideSpread = Tiling<256, 1, BK / 8, true, false, true>;
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
/// m), read back as C. Lane (g, t) = (lane / 4, lane % 4) holds, in each 8
/// rows j, rows 8j + 2t and 8j + 2t + 1 (r % 2) of two columns (r / 2): the
/// layout of mma.sync's C fragment, transposed and repeated down the rows.
__host__ __device__ constexpr int c_row(int lane, int j, int r) {
  return 8 * j + 2 * (lane % 4) + r % 2;
}

/// The column of the tile (of B) that a consumer warp's row g (r / 2 = 0) or
/// g + 8 (r / 2 = 1) of B^T is. Any one-to-one choice gives the same
/// product, so long as B^T's fragments are loaded from the columns the
/// accumulators are stored to. In order, consumer warp w (0 .. 7, four per
/// consumer) takes columns 16w .. 16w + 15: lane g takes 16w + g and
/// 16w + g + 8. Spread, warps 2i and 2i + 1 share the 32 columns of B's copy
/// box i: lane g of warp w takes column c = 8 (w % 2) + 16 (g / 4) + g % 4 of
/// the box, and c + 4. A load's lanes t = 0 .. 3 read four rows k, one each;
/// spread, its lanes g read two 16-byte pieces of the row, p and p + 4, which
/// the swizzle (XOR with k % 8) keeps in different halves of the row: 8
/// different pieces, all 32 banks. In order they read pieces p and p + 1.
__host__ __device__ constexpr int c_col(int consumer_warp, int lane, int r, bool spread = false) {
  const int g = lane / 4;
  if (!spread) return 16 * consumer_warp + g + 8 * (r / 2);
  return BOX_COLUMNS * (consumer_warp / 2) + 8 * (consumer_warp % 2) + 16 * (g / 4) + g % 4 +
         4 * (r / 2);
}
// [end]

// [c-store]
/// Where a lane stores its accumulators d[4 * j + r] (r = 0 .. 3) of rows
/// c_row(lane, j, r). In order, value r goes to its own column
/// c_col(w, lane, r), and a row's eight lanes g fill one 32-byte sector.
/// Spread, they would fill half of each of two sectors; lanes g and g + 4
/// (lane XOR 16) each hold the other's missing half. So for each pair
/// (r, r + 2), r = 0 or 1, lane g < 4 sends its value r + 2, lane g >= 4 its
/// value r (sent_half()), and the value received takes the place of the one
/// sent (store_swaps(), half = r / 2). Store r then writes column
/// c_store_col(): eight adjacent columns per row again.
__host__ __device__ constexpr int sent_half(int lane) { return lane / 4 < 4 ? 1 : 0; }

__host__ __device__ constexpr bool store_swaps(int lane, int half, bool spread) {
  return spread && half == sent_half(lane);
}

__host__ __device__ constexpr int c_store_col(int consumer_warp, int lane, int r,
                                              bool spread = false) {
  if (!spread) return c_col(consumer_warp, lane, r, false);
  return BOX_COLUMNS * (consumer_warp / 2) + 8 * (consumer_warp % 2) + 16 * (r / 2) + lane / 4;
}

/// The four values v[r] a lane stores to columns c_store_col(w, lane, r) of
/// rows c_row(lane, j, r): its own d[4 * j + r] in order; spread, after the
/// exchange with lane XOR 16. Every lane of the warp calls it.
template <bool SPREAD, int N>
__device__ void stored_values(const float (&d)[N], int j, int lane, float (&v)[4]) {
#pragma unroll
  for (int r = 0; r < 4; ++r) v[r] = d[4 * j + r];
  if constexpr (SPREAD) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float sent = sent_half(lane) == 1 ? v[r + 2] : v[r];
      const float received = __shfl_sync(0xffffffffu, sent, lane ^ 16);
      if (store_swaps(lane, 0, SPREAD)) v[r] = received;
      if (store_swaps(lane, 1, SPREAD)) v[r + 2] = received;
    }
  }
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
