// Chapter 16's own choices and the chapter as the runner and --describe see
// it: the tile by the count (launch_by_count()), A rounded on chip where
// that pays (launch_tf32()), and their workspaces. The product runs on TF32
// (A and B rounded to it, as cuBLAS rounds them: A in a pass before the
// product, or tile by tile on chip; truncated by wgmma itself in the variant
// "truncated"). Chapter 17 runs the 3xTF32 tilings of the same kernel,
// through launch.cuh alone. Everything but main(), which is in kernel.cu.
//
// The chapter's files, in the order they build on one another: tiling.cuh
// (the tile, B's layout, which columns a warp takes, A's split), counts.cuh
// (the counts that pick a tile and cut the last round), ptx.cuh (one function per
// instruction), pipeline.cuh (the stages and the consumers' loops),
// slices.cuh (the cut last round's sum), sgemm_wgmma.cuh (the kernels),
// maps.cuh (the tensor maps TMA copies by), launch.cuh (the launch of any
// tiling), and this file.
#pragma once

#include <ladder/chapter.hpp>

#include "../13-tail/kernel.cuh"
#include "counts.cuh"
#include "launch.cuh"
#include "tiling.cuh"

namespace ch16 {

// [launch-by-count]
/// The tile by the count: the 256-row or the 64-row tile where its count is
/// the smallest, the 128-row tile otherwise (picked_rows()). With
/// CUT, the count is the cut's (the variant "cut"); the launch cuts the last
/// round only where the workspace has room for the slices (workspace_cut()).
template <class Square = Chosen, class Twice = Wide, class Half = Narrow, bool CUT = false>
void launch_by_count(const ladder::Gemm& g, cudaStream_t stream) {
  static const int sms = ch13::sm_count();  // chapter 13's
  const int rows = picked_rows<Square, Twice, Half, CUT>(g.M, g.N, g.K, sms);
  if (rows == Twice::BM) {
    launch<Twice>(g, stream);
  } else if (rows == Half::BM) {
    launch<Half>(g, stream);
  } else {
    launch<Square>(g, stream);
  }
}

/// The chapter's own launcher: A rounded on chip and the last round cut
/// where the pass over A would cost too much (on_chip_pays()), that is for
/// few tiles and long K; otherwise a pass over A first, the tile by the
/// count, uncut.
inline void launch_tf32(const ladder::Gemm& g, cudaStream_t stream) {
  static const int sms = ch13::sm_count();
  if (on_chip_pays<Chosen>(g.M, g.N, g.K, sms)) {
    launch_by_count<OnChip, OnChipWide, OnChipNarrow, true>(g, stream);
  } else {
    launch_by_count<>(g, stream);
  }
}

/// The same with A and B truncated (the variant "truncated"): no pass over A
/// first, but each product's error has a bias, and the sum's grows with it.
inline void launch_truncated_by_count(const ladder::Gemm& g, cudaStream_t stream) {
  launch_by_count<Truncated, TruncatedWide, TruncatedNarrow>(g, stream);
}

/// The chapter's own workspace: the copies', and A rounded (every tile
/// needs the same).
inline long long workspace_rounded(int M, int N, int K) { return workspace_parts<Chosen>(M, N, K); }

/// The cut's workspace: the chapter's own, and room for the widest tile's
/// slices where any of the three tiles' last round is cut.
template <class Square = Chosen, class Twice = Wide, class Half = Narrow>
long long workspace_cut(int M, int N, int K) {
  static const int sms = ch13::sm_count();
  const bool cut = last_round<Square>(M, N, K, sms).slices > 1 ||
                   last_round<Twice>(M, N, K, sms).slices > 1 ||
                   last_round<Half>(M, N, K, sms).slices > 1;
  return workspace_parts<Square>(M, N, K) + (cut ? slices_floats<Twice>() : 0);
}

/// The chapter's own launcher's workspace: the cut's on chip, the pass's
/// otherwise (launch_tf32()).
inline long long workspace_tf32(int M, int N, int K) {
  static const int sms = ch13::sm_count();
  if (on_chip_pays<Chosen>(M, N, K, sms))
    return workspace_cut<OnChip, OnChipWide, OnChipNarrow>(M, N, K);
  return workspace_rounded(M, N, K);
}
// [end]

/// @brief This chapter as the runner and --describe see it: on TF32 with A
/// and B rounded, the tile the count picks, and A rounded on chip with the
/// last round cut where that pays (launch_tf32(); its constants and
/// resources are the 128 x 128 tile's), the same with A and B truncated
/// ("truncated"), both with the last round cut ("cut", "truncated-cut";
/// chapter 17's page teaches the cut), A rounded on chip and the last round
/// cut at every size ("on-chip"), the 128 x 128 tile as the variant "square", the
/// 256 x 128 one as "wide", the 64 x 128 one as "narrow", and "wide" with
/// each consumer warp's columns spread as "wide-spread" (c_col()). Chapter 17 runs
/// the 3xTF32 tilings (Split and the others) of the same kernel.
inline ladder::Chapter chapter() {
  return {
      "16-wgmma",
      "TMA and wgmma",
      __FILE__,
      {variant<Chosen>(ladder::kDefaultVariant,
                       "TF32 on wgmma, the tile the count picks, A rounded on chip where it pays",
                       launch_tf32, workspace_tf32),
       variant<Truncated>("truncated", "TF32 on wgmma, A and B truncated, the tile the count picks",
                          launch_truncated_by_count, workspace_parts<Truncated>),
       variant<Chosen>("cut", "TF32 on wgmma, the tile the cut's count picks, last round cut",
                       launch_by_count<Chosen, Wide, Narrow, true>, workspace_cut<>),
       variant<Truncated>("truncated-cut",
                          "TF32 on wgmma, A and B truncated, the cut's tile, last round cut",
                          launch_by_count<Truncated, TruncatedWide, TruncatedNarrow, true>,
                          workspace_cut<Truncated, TruncatedWide, TruncatedNarrow>),
       variant<OnChip>("on-chip",
                       "TF32 on wgmma, A rounded on chip, the cut's tile, last round cut",
                       launch_by_count<OnChip, OnChipWide, OnChipNarrow, true>,
                       workspace_cut<OnChip, OnChipWide, OnChipNarrow>),
       variant<Chosen>("square", "TF32 on wgmma, 128 x 128 tiles"),
       variant<Wide>("wide", "TF32 on wgmma, 256 x 128 tiles"),
       variant<Narrow>("narrow", "TF32 on wgmma, 64 x 128 tiles"),
       variant<WideSpread>("wide-spread",
                           "TF32 on wgmma, 256 x 128 tiles, each warp's columns spread")},
      true};
}

}  // namespace ch16
