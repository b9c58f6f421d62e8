// Chapter 17's kernel: chapter 16's, on 3xTF32 (PRODUCTS = 3, the tilings
// ch16::Split and the others). What is the chapter's own is the choice: which
// split of A (rounded or truncated), which tile, and the cut last round.
// Everything but main(), which is in kernel.cu.
#pragma once

#include "../16-wgmma/kernel.cuh"

namespace ch17 {

// [pick-split]
/// Below this K, 3xTF32 rounds A's split; from it on, it truncates. The
/// truncated split leaves each product an error near 2^-21 of its size,
/// whatever K; FP32's own sums gather error as K grows. So at short K the
/// truncated split's error can pass SGEMM's, and the rounded split's stays
/// near it; but the rounded split is slower: it writes a third part (A
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

/// The chapter's own launcher: A's split rounded for short K, truncated (the
/// faster) from kRoundBelowK on; the tile by the count, and its last round
/// cut into slices (it asks for the workspace: workspace_3xtf32()).
inline void launch_3xtf32(const ladder::Gemm& g, cudaStream_t stream) {
  if (g.K < kRoundBelowK) {
    launch_3xtf32_by_count<ch16::SplitRounded, ch16::SplitRoundedNarrow>(g, stream);
  } else {
    launch_3xtf32_by_count<ch16::Split, ch16::SplitNarrow>(g, stream);
  }
}

/// The same with A split on chip.
inline void launch_3xtf32_on_chip(const ladder::Gemm& g, cudaStream_t stream) {
  if (g.K < kRoundBelowK) {
    launch_3xtf32_by_count<ch16::SplitRoundedOnChip, ch16::SplitRoundedOnChipNarrow>(g, stream);
  } else {
    launch_3xtf32_by_count<ch16::SplitOnChip, ch16::SplitOnChipNarrow>(g, stream);
  }
}

/// The chapter's own workspace: room for the copies, A's parts, and,
/// where either tile's last round is cut, for its slices.
inline long long workspace_3xtf32(int M, int N, int K) {
  static const int sms = ch13::sm_count();
  const bool cut = ch16::last_round<ch16::Split>(M, N, K, sms).slices > 1 ||
                   ch16::last_round<ch16::SplitNarrow>(M, N, K, sms).slices > 1;
  const long long parts = K < kRoundBelowK ? ch16::workspace_parts<ch16::SplitRounded>(M, N, K)
                                           : ch16::workspace_parts<ch16::Split>(M, N, K);
  return parts + (cut ? ch16::slices_floats<ch16::Split>() : 0);
}
// [end]

/// @brief This chapter as the runner and --describe see it: 3xTF32 on wgmma,
/// which promises FP32's accuracy. The chapter's own (launch_3xtf32()) rounds
/// A's split for short K and truncates it otherwise, picks the tile by its
/// count and cuts the last round into slices; "truncated", "narrow" (A
/// truncated, 64 x 128 tiles) and "rounded" (sums of two steps) run one way at
/// every K, uncut. Its constants and resources are the 128 x 128 tile's.
inline ladder::Chapter chapter() {
  return {
      "17-3xtf32-wgmma",
      "3xTF32 on wgmma",
      __FILE__,
      {ch16::variant<ch16::Split>(ladder::kDefaultVariant,
                                  "3xTF32 on wgmma, A rounded for short K, last round cut",
                                  launch_3xtf32, workspace_3xtf32),
       ch16::variant<ch16::SplitOnChip>("on-chip",
                                        "3xTF32 on wgmma, A split on chip, last round cut",
                                        launch_3xtf32_on_chip, workspace_3xtf32),
       ch16::variant<ch16::Split>("truncated", "3xTF32 on wgmma, A truncated"),
       ch16::variant<ch16::SplitNarrow>("narrow", "3xTF32 on wgmma, A truncated, 64 x 128 tiles"),
       ch16::variant<ch16::SplitRounded>("rounded", "3xTF32 on wgmma, A rounded")},
      true};
}

}  // namespace ch17
