// Chapter 17's kernel: chapter 16's, on 3xTF32 (PRODUCTS = 3, the tilings
// ch16::Split and the others). What is the chapter's own is the choice: which
// split of A (rounded or truncated; in a pass or on chip), which tile, and
// the cut last round.
// Everything but main(), which is in kernel.cu.
#pragma once

#include <type_traits>

#include "../16-wgmma/launch.cuh"

namespace ch17 {

// [pick-split]
/// Below this K, 3xTF32 rounds A's split; from it on, it truncates. The
/// truncated split leaves each product an error near 2^-21 of its size,
/// whatever K; FP32's own sums gather error as K grows. So at short K the
/// truncated split's error can pass SGEMM's, and the rounded split's stays
/// near it; but the rounded split is slower: it writes a second part (A
/// rounded, which the copies bring in A's place) and sums two steps at a
/// time in the tensor cores, not four. The page measures both splits' errors and speeds
/// (the variants truncated and rounded); kRoundBelowK was chosen from
/// such measurements, on both GPUs.
constexpr int kRoundBelowK = 1024;

/// 3xTF32 on the 64-row tile where its count (split_steps()) is the
/// smaller, on the 128-row tile otherwise.
template <class Square, class Half>
void launch_3xtf32_by_count(const ladder::Gemm& g, cudaStream_t stream) {
  static const int sms = ch13::sm_count();
  if (ch16::split_steps<Half>(g.M, g.N, g.K, sms) < ch16::split_steps<Square>(g.M, g.N, g.K, sms)) {
    ch16::launch<Half>(g, stream);
  } else {
    ch16::launch<Square>(g, stream);
  }
}

/// A's split rounded for short K, truncated (the faster) from kRoundBelowK
/// on; the tile by the count, and its last round cut into slices where the
/// workspace has room. ON_CHIP: A split on chip, tile by tile, not in a
/// pass before the product.
template <bool ON_CHIP>
void launch_split(const ladder::Gemm& g, cudaStream_t stream) {
  using std::conditional_t;
  using Rounded = conditional_t<ON_CHIP, ch16::SplitRoundedOnChip, ch16::SplitRounded>;
  using RoundedNarrow =
      conditional_t<ON_CHIP, ch16::SplitRoundedOnChipNarrow, ch16::SplitRoundedNarrow>;
  using Truncated = conditional_t<ON_CHIP, ch16::SplitOnChip, ch16::Split>;
  using TruncatedNarrow = conditional_t<ON_CHIP, ch16::SplitOnChipNarrow, ch16::SplitNarrow>;
  if (g.K < kRoundBelowK) {
    launch_3xtf32_by_count<Rounded, RoundedNarrow>(g, stream);
  } else {
    launch_3xtf32_by_count<Truncated, TruncatedNarrow>(g, stream);
  }
}

/// Whether the chapter's own launcher splits A on chip: where the pass
/// would cost too much (chapter 16's on_chip_pays()), for few tiles and long K.
inline bool splits_on_chip(int M, int N, int K) {
  static const int sms = ch13::sm_count();
  return ch16::on_chip_pays<ch16::Split>(M, N, K, sms);
}

/// The chapter's own launcher: launch_split(), on chip where it pays.
inline void launch_3xtf32(const ladder::Gemm& g, cudaStream_t stream) {
  if (splits_on_chip(g.M, g.N, g.K)) return launch_split<true>(g, stream);
  launch_split<false>(g, stream);
}

/// The workspace of launch_split<ON_CHIP>: room for the copies, A's parts
/// where a pass writes them, and, where either tile's last round is cut,
/// for its slices.
template <bool ON_CHIP>
long long workspace_split(int M, int N, int K) {
  static const int sms = ch13::sm_count();
  const bool cut = ch16::last_round<ch16::Split>(M, N, K, sms).slices > 1 ||
                   ch16::last_round<ch16::SplitNarrow>(M, N, K, sms).slices > 1;
  const long long parts = ON_CHIP            ? ch16::workspace(M, N, K)
                          : K < kRoundBelowK ? ch16::workspace_parts<ch16::SplitRounded>(M, N, K)
                                             : ch16::workspace_parts<ch16::Split>(M, N, K);
  return parts + (cut ? ch16::slices_floats<ch16::Split>() : 0);
}

/// The chapter's own workspace (launch_3xtf32()).
inline long long workspace_3xtf32(int M, int N, int K) {
  return splits_on_chip(M, N, K) ? workspace_split<true>(M, N, K) : workspace_split<false>(M, N, K);
}
// [end]

/// @brief This chapter as the runner and --describe see it: 3xTF32 on wgmma,
/// which promises FP32's accuracy. The chapter's own (launch_3xtf32()) rounds
/// A's split for short K and truncates it otherwise, splits A on chip where
/// that pays, picks the tile by its count and cuts the last round into
/// slices; "on-chip" splits A on chip at every size, "pass" in a pass
/// before the product at every size; "truncated", "narrow"
/// (A truncated, 64 x 128 tiles) and "rounded" (sums of two steps) run one
/// way at every K, uncut. Its constants and resources are the 128 x 128
/// tile's.
inline ladder::Chapter chapter() {
  return {
      "17-3xtf32-wgmma",
      "3xTF32 on wgmma",
      __FILE__,
      {ch16::variant<ch16::Split>(ladder::kDefaultVariant,
                                  "3xTF32 on wgmma, A rounded for short K, last round cut, A "
                                  "split on chip where it pays",
                                  launch_3xtf32, workspace_3xtf32),
       ch16::variant<ch16::SplitOnChip>("on-chip",
                                        "3xTF32 on wgmma, A split on chip, last round cut",
                                        launch_split<true>, workspace_split<true>),
       ch16::variant<ch16::Split>("pass",
                                  "3xTF32 on wgmma, A split in a pass before the product, last "
                                  "round cut",
                                  launch_split<false>, workspace_split<false>),
       ch16::variant<ch16::Split>("truncated", "3xTF32 on wgmma, A truncated"),
       ch16::variant<ch16::SplitNarrow>("narrow", "3xTF32 on wgmma, A truncated, 64 x 128 tiles"),
       ch16::variant<ch16::SplitRounded>("rounded", "3xTF32 on wgmma, A rounded")},
      true};
}

}  // namespace ch17
