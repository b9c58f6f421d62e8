// Chapter 03 (03-flat-block) on the CPU emulation: its own kernel and launcher, run
// as written on the CPU (see README.md in this folder).
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
#include "chapters/03-flat-block/kernel.cuh"
#include "emulated_gemm.hpp"

TEST(Emulated, Ch03FlatBlock) {
  // Any size: one with partial tiles on every side, and one without; M != N, so that a swap of
  // rows and columns cannot pass unseen.
  const std::vector<emulated::Size> sizes = {{33, 47, 19}, {64, 32, 40}};
  const ladder::Chapter chapter = ch03::chapter();
  const int runs = emulated::check_chapter(chapter, sizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * sizes.size() * emulated::kCalls.size()));
}
