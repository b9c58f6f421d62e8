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
  // On a GPU that gives a block too little shared memory for the chapter's
  // own variant, a variant that fits runs, or the run is refused in one line.
  return ch14::run_fitting(ch14::chapter(), argc, argv, __FILE__);
}
