// Chapter 11 in chapter 08's order: the same kernel and tiling, with each
// step's multiply-adds row by row (SERPENTINE = 0) instead of in the snaking
// column order that chapter 09's sweep chose, so that the chapter can measure
// what the order does to this kernel.
//
// Build it alone, from this folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include rows.cu -lcublas -o double-buffering-rows
#define LADDER_NO_MAIN
#include "kernel.cu"
#undef LADDER_NO_MAIN

int main(int argc, char** argv) {
  using Config = ch11::InRowOrder<ch11::Chosen>;
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(ch11::sgemm_warptiled<Config>),
                                  Config::NUM_THREADS, Config::SMEM_BYTES};
  const ladder::Chapter chapter{"11-double-buffering-rows",
                                "Double buffering (row order)",
                                __FILE__,
                                ch11::launch<Config>,
                                ch11::accepts<Config>,
                                kernel};
  return ladder::run_chapter(chapter, argc, argv);
}
