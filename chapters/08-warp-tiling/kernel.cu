// Chapter 08: warp tiling. Chapter 07's kernel with one more level in the
// tiling: the block's BM x BN tile of C is split into WM x WN warp tiles, one
// per warp, and each warp computes its tile as WMITER x WNITER sub-tiles, its
// 32 lanes laid over each sub-tile as a small grid of TM x TN blocks. A warp's
// shared-memory reads then stay within its own WM columns of As and WN columns
// of Bs, and each operand a thread loads is reused, from a register, across
// all of its sub-tiles. The tile sizes become template parameters, gathered in
// one Tiling type that states every rule they must meet, so that chapter 09
// can sweep them.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o warp-tiling
// Run it:
//   ./warp-tiling --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch08::chapter(), argc, argv); }
