// Chapter 10 in chapter 08's order: the same kernel and tiling, with each
// step's multiply-adds row by row (SERPENTINE = 0) instead of in the snaking
// column order that chapter 09's sweep chose, so that the chapter can measure
// what the order does to this kernel.
//
// Build it alone, from this folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include rows.cu -lcublas -o padding-rows
#define LADDER_NO_MAIN
#include "kernel.cu"
#undef LADDER_NO_MAIN

int main(int argc, char** argv) {
  using Config = ch10::InRowOrder<ch10::Chosen>;
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(ch10::sgemm_warptiled<Config>),
                                  Config::NUM_THREADS, 0};
  const ladder::Chapter chapter{"10-padding-rows",
                                "Padded shared memory (row order)",
                                __FILE__,
                                ch10::launch<Config>,
                                ch10::accepts<Config>,
                                kernel};
  return ladder::run_chapter(chapter, argc, argv);
}
