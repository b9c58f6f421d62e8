// Chapter 04: shared-memory tiling. A block still computes a 32 x 32 tile of C
// with one thread per element, but it walks along K in steps of 32: each step
// copies a 32 x 32 tile of A and one of B into shared memory (one float per
// thread, coalesced), waits for the whole block, and then every thread reads
// its 32 products' operands from shared memory instead of from global memory.
// Each float brought in from global memory is now used 32 times. The tiles
// must fit exactly, so from this chapter on M, N and K must be multiples of
// the tile sizes (chapter 12 lifts that).
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o smem-tiling
// Run it:
//   ./smem-tiling --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch04::chapter(), argc, argv); }
