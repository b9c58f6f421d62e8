// Chapter 06: 2D register tiling. A thread now computes a TM x TN block of C
// instead of a TM x 1 strip. In each step of the dot product it reads TM
// floats of the A tile and TN floats of the B tile into registers and
// multiplies every pair (an outer product): TM + TN shared-memory reads feed
// TM * TN multiply-adds. The block tile grows to BM x BN = 128 x 128, so each
// float copied from global memory serves more products, and each thread
// copies several floats of each tile per step.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o 2d-register-tiling
// Run it:
//   ./2d-register-tiling --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch06::chapter(), argc, argv); }
