// Chapter 07: vectorized 128-bit access. The same tiles and the same outer
// product as chapter 06, but memory is moved four floats at a time: A, B and
// C are read and written with 16-byte float4 accesses (LDG.E.128, STG.E.128),
// and the A tile is stored transposed in shared memory, As[k][m], so that the
// TM operands a thread needs in one step are consecutive words, as the TN
// operands of the B tile already are. The compute loop then reads both tiles
// with 16-byte shared-memory loads (LDS.128).
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o vectorized
// Run it:
//   ./vectorized --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch07::chapter(), argc, argv); }
