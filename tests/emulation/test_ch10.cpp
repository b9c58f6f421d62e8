// Chapter 10 (10-padding) on the CPU emulation: its own kernel and launcher, run
// as written on the CPU (see README.md in this folder).
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
#include "chapters/10-padding/kernel.cuh"
#include "emulated_gemm.hpp"

TEST(Emulated, Ch10Padding) {
  // Multiples of Chosen's BM = 64, BN = 128 and BK = 16 (all the kernel accepts), several
  // blocks and K steps; M != N.
  const std::vector<emulated::Size> sizes = {{128, 384, 48}, {192, 128, 16}};
  const ladder::Chapter chapter = ch10::chapter();
  const int runs = emulated::check_chapter(chapter, sizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * sizes.size() * emulated::kCalls.size()));
}
