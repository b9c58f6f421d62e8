// Chapter 05: 1D register tiling. A thread now computes TM elements of C that
// lie in one column, instead of one element. In each step of the dot product
// it reads one float of the B tile into a register and uses it for TM
// products, so shared-memory reads per multiply-add drop from 2 to about 1.
// The block tile becomes BM x BN with a step of BK along K, and the copy of a
// tile into shared memory gets its own thread mapping, separate from the
// compute mapping.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o 1d-register-tiling
// Run it:
//   ./1d-register-tiling --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch05::chapter(), argc, argv); }
