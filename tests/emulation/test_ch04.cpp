// Chapter 04 (04-smem-tiling) on the CPU emulation: its own kernel and launcher, run
// as written on the CPU (see README.md in this folder).
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
#include "chapters/04-smem-tiling/kernel.cuh"
#include "emulated_gemm.hpp"

TEST(Emulated, Ch04SmemTiling) {
  // Multiples of BLOCK = 32 (all the kernel accepts), several blocks and K steps; M != N.
  const std::vector<emulated::Size> sizes = {{64, 96, 64}, {96, 32, 32}};
  const ladder::Chapter chapter = ch04::chapter();
  const int runs = emulated::check_chapter(chapter, sizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * sizes.size() * emulated::kCalls.size()));
}
