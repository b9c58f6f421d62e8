// Chapter 03: flattening the block. The same work and the same memory access
// pattern as chapter 02, but the block is one-dimensional: 1024 threads in
// threadIdx.x only, and the kernel itself says which row and column of the
// block's 32 x 32 tile of C each thread owns. The index arithmetic is now
// explicit, in two small functions, which the following chapters build on.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o flat-block
// Run it:
//   ./flat-block --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch03::chapter(), argc, argv); }
