// Chapter 14: TF32 on the tensor cores. The same product as Part I, each
// 16 x 8 x 8 piece of it one mma.sync instruction of a whole warp, on inputs
// rounded to TF32 (10 mantissa bits); it needs sm_80 or newer.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o tf32
// Run it:
//   ./tf32 --sizes 1024 4096 1000x1000x1000
#include "kernel.cuh"

int main(int argc, char** argv) {
  // A GPU that gives a block too little shared memory is refused in one line.
  if (const int refused = ch14::refuse_if_too_big(ch14::chapter(), argc, argv)) return refused;
  return ladder::run_chapter(ch14::chapter(), argc, argv);
}
