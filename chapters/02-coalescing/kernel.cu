// Chapter 02: global-memory coalescing. Still one thread per element of C, but
// the thread-to-element mapping is swapped: threadIdx.x now walks along a row
// of C, so the 32 lanes of a warp write 32 consecutive floats of C, read 32
// consecutive floats of a row of B, and all read the same float of A.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o coalescing
// Run it:
//   ./coalescing --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch02::chapter(), argc, argv); }
