// Chapter 10, the alternative layout: the same kernel with As swizzled
// instead of padded (ALayout::kSwizzled), so that the chapter can measure
// both. The swizzle removes the same store conflicts as the padding and keeps
// every row of As 16-byte aligned, so the compute loop keeps its 16-byte reads.
//
// Build it alone, from this folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include swizzled.cu -lcublas -o padding-swizzled
#define LADDER_NO_MAIN
#include "kernel.cu"
#undef LADDER_NO_MAIN

int main(int argc, char** argv) {
  using Config = ch10::WithALayout<ch10::Chosen, ch10::ALayout::kSwizzled>;
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(ch10::sgemm_warptiled<Config>),
                                  Config::NUM_THREADS, 0};
  const ladder::Chapter chapter{"10-padding-swizzled",
                                "Padded shared memory (swizzled layout)",
                                __FILE__,
                                ch10::launch<Config>,
                                ch10::accepts<Config>,
                                kernel};
  return ladder::run_chapter(chapter, argc, argv);
}
