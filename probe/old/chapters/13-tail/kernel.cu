// Chapter 13: the tail. Chapter 12's kernel, with the work divided otherwise
// when a product has too few tiles of C to keep every SM busy to the end:
// a tiling per size, split-K (the tiles' K-steps in slices, each slice a
// block) and stream-K (every block an equal share of all the tiles' K-steps).
// The blocks that share a tile add into C one after another, in K's order.
//
// It includes chapter 12's header (../12-final/kernel.cuh).
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o tail
// Run it:
//   ./tail --sizes 1024 2560 4096 1000x1000x1000 512x512x16384
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch13::chapter(), argc, argv); }
