// Chapter 07 (07-vectorized) on the CPU emulation: its own kernel and launcher, run
// as written on the CPU (see README.md in this folder).
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
#include "chapters/07-vectorized/kernel.cuh"
#include "emulated_gemm.hpp"

TEST(Emulated, Ch07Vectorized) {
  // Multiples of BM = BN = 128 and BK = 8 (all the kernel accepts), several blocks and K steps;
  // M != N.
  const std::vector<emulated::Size> sizes = {{256, 384, 24}, {384, 128, 16}};
  const ladder::Chapter chapter = ch07::chapter();
  const int runs = emulated::check_chapter(chapter, sizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * sizes.size() * emulated::kCalls.size()));
}
