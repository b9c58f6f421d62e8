// Chapter 01: the naive kernel. One thread computes one element of C.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o naive
// Run it:
//   ./naive --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch01::chapter(), argc, argv); }
