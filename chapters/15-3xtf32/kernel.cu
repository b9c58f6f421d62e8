// Chapter 15: 3xTF32. Chapter 14's tensor-core kernel with every operand
// split into two TF32 values and three products per multiply, for FP32's
// accuracy at a third of the TF32 rate. It includes chapter 14's header
// (../14-tf32/kernel.cuh) and needs sm_80 or newer.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o 3xtf32
// Run it:
//   ./3xtf32 --sizes 1024 4096 1000x1000x1000
#include "kernel.cuh"

int main(int argc, char** argv) {
  // On a GPU that gives a block too little shared memory for the chapter's
  // own variant, a variant that fits runs, or the run is refused in one line.
  return ch14::run_fitting(ch15::chapter(), argc, argv, __FILE__);
}
