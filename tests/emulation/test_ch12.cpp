// Chapter 12 (12-final) on the CPU emulation: its own kernel and launchers,
// run as written on the CPU (see README.md in this folder).
// The kernel declares its dynamic shared memory `extern __shared__`: see
// cuda_emulation.hpp.
#define LADDER_EMULATION_EXTERN_SHARED
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
LADDER_EMULATION_DYNAMIC_SHARED(ch12, smem);
#include "chapters/12-final/kernel.cuh"
#include "emulated_gemm.hpp"

TEST(Emulated, Ch12Final) {
  // Any size, through each of the launcher's three paths: the exact one
  // (every tile full, 16-byte accesses), the aligned one with edges (N and K
  // multiples of 4, partial tiles), and the general one (N and K odd; and
  // every size again with A, B and C one float off 16-byte alignment, which
  // sends even the exact size there). 1 x 1 x 1 is one partial tile of each.
  // M != N, so that a swap of rows and columns cannot pass unseen.
  using ch12::Chosen;
  static_assert(Chosen::BM == 128 && Chosen::BN == 256 && Chosen::BK == 16,
                "the sizes below are chosen for Chosen's tiles: choose again");
  const std::vector<emulated::Size> sizes = {
      {256, 512, 48},  // exact: 2 x 2 tiles, 3 steps of K
      {200, 300, 52},  // aligned, with partial tiles on every side and a partial last step
      {130, 263, 37},  // general
      {1, 1, 1},       // general, one element
  };
  std::vector<emulated::Call> calls = emulated::kCalls;
  calls.push_back({0.75f, 0.5f, /*misaligned=*/true});
  const ladder::Chapter chapter = ch12::chapter<Chosen>();
  const int runs = emulated::check_chapter(chapter, sizes, calls);
  EXPECT_EQ(runs, int(chapter.variants.size() * sizes.size() * calls.size()));
}

TEST(Emulated, Ch12EveryPathRuns) {
  // The sizes above take each of the launcher's three paths with Chosen, in
  // each of the three layouts of As: so every kernel the chapter can launch
  // has run. Checked here, so that a change of tiling or sizes that leaves a
  // path untested fails.
  using namespace ch12;
  using Swizzled = WithALayout<Chosen, ALayout::kSwizzled>;
  using Unpadded = WithALayout<Chosen, ALayout::kUnpadded>;
  const ladder::Chapter chapter = ch12::chapter<Chosen>();
  ladder_emulation::launched_kernels().clear();
  emulated::check_chapter(chapter, {{256, 512, 48}, {200, 300, 52}, {130, 263, 37}},
                          {{1.0f, 0.5f}, {1.0f, 0.5f, /*misaligned=*/true}});
  const auto ran = [](auto* kernel) {
    const std::vector<const void*>& log = ladder_emulation::launched_kernels();
    return std::count(log.begin(), log.end(), reinterpret_cast<const void*>(kernel)) > 0;
  };
  EXPECT_TRUE(ran(sgemm_warptiled<Chosen, true, false>)) << "the exact path";
  EXPECT_TRUE(ran(sgemm_warptiled<Chosen, true, true>)) << "the aligned path with edges";
  EXPECT_TRUE(ran(sgemm_warptiled<Chosen, false, true>)) << "the general path";
  EXPECT_TRUE(ran(sgemm_warptiled<Swizzled, true, false>)) << "swizzled, exact";
  EXPECT_TRUE(ran(sgemm_warptiled<Swizzled, false, true>)) << "swizzled, general";
  EXPECT_TRUE(ran(sgemm_warptiled<Unpadded, true, false>)) << "unpadded, exact";
  EXPECT_TRUE(ran(sgemm_warptiled<Unpadded, false, true>)) << "unpadded, general";
}
