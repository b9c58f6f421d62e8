// Chapter 11 (11-double-buffering) on the CPU emulation: its own kernel and launcher, run
// as written on the CPU (see README.md in this folder).
// The kernel declares its dynamic shared memory `extern __shared__`: see
// cuda_emulation.hpp.
#define LADDER_EMULATION_EXTERN_SHARED
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
LADDER_EMULATION_DYNAMIC_SHARED(ch11, smem);
#include "chapters/11-double-buffering/kernel.cuh"
#include "emulated_gemm.hpp"

TEST(Emulated, Ch11DoubleBuffering) {
  // Multiples of Chosen's BM = 64, BN = 128 and BK = 16 (all the kernel accepts), several
  // blocks and K steps (so both stages); M != N.
  const std::vector<emulated::Size> sizes = {{128, 384, 48}, {192, 128, 16}};
  const ladder::Chapter chapter = ch11::chapter();
  const int runs = emulated::check_chapter(chapter, sizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * sizes.size() * emulated::kCalls.size()));
}
