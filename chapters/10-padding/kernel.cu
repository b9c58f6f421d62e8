// Chapter 10: padded shared memory. Chapter 09's kernel, with the rows of
// the transposed A tile in shared memory lengthened by a few floats of
// padding. Since chapter 07 each thread has scattered its float4 of A down
// four rows of As; with rows of BM floats (a multiple of 32) the lanes of a
// warp that store the same element of their float4s fall on a few banks only,
// and their stores are serialized. The padding spreads them over all 32 banks.
// Padding by an amount that is not a multiple of four floats also breaks the
// 16-byte alignment of every other row of As, so the reads of As narrow from
// 16 bytes to 8 (BK = 16) or 4 (BK = 32); the Tiling's layout parameter
// offers, beside the padding, an XOR swizzle that removes the same conflicts
// and keeps every row aligned (bin/10-padding-swizzled runs it).
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o padding
// Run it:
//   ./padding --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch10::chapter(), argc, argv); }
