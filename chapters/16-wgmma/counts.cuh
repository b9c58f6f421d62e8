// Chapter 16's counts: how many rounds of blocks a product takes on the
// GPU's SMs, which tile the launchers pick by them, where the last round is
// cut along K into slices (LastRound, block_work()), where converting A on
// chip pays, and 3xTF32's count (chapter 17). Host and device code alike:
// the kernel reads its share of the work through block_work(), the CPU
// tools and tests call the rest.
#pragma once

#include "tiling.cuh"

namespace ch16 {
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

}  // namespace ch16
