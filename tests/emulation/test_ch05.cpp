// Chapter 05 (05-1d-register-tiling) on the CPU emulation: its own kernel and launcher, run
// as written on the CPU (see README.md in this folder).
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
#include "chapters/05-1d-register-tiling/kernel.cuh"
#include "emulated_gemm.hpp"

TEST(Emulated, Ch05OneDRegisterTiling) {
  // Multiples of BM = BN = 64 and BK = 8 (all the kernel accepts), several blocks and K steps;
  // M != N.
  const std::vector<emulated::Size> sizes = {{128, 192, 24}, {192, 64, 16}};
  const ladder::Chapter chapter = ch05::chapter();
  const int runs = emulated::check_chapter(chapter, sizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * sizes.size() * emulated::kCalls.size()));
}
