// Chapter 10 exercise: a matrix transpose that shows a shared-memory bank
// conflict, and two ways to remove it.
//
// out[c][r] = in[r][c] for a ROWS x COLS row-major float matrix. Every
// variant runs the same grid of TILE x BLOCK_ROWS (32 x 8) thread blocks,
// one block per 32 x 32 tile, and moves the same bytes:
//   copy            out[r][c] = in[r][c]: reads and writes both coalesced, the
//                   speed of light for this launch shape and these bytes
//   naive           the transpose straight from global memory: coalesced
//                   reads, writes that stride ROWS floats from lane to lane
//   tiled_32x32     through a 32 x 32 shared tile: coalesced on both sides,
//                   but a warp reads the tile down a column, and every float
//                   of a column sits in the same bank (a 32-way conflict)
//   tiled_32x33     the same kernel with the tile's rows padded to 33 floats:
//                   a column now spreads over all 32 banks
//   tiled_swizzled  the same kernel, rows of 32 floats, column index XORed
//                   with the row: conflict-free without the padding
// The three tiled variants are one kernel template; they differ only in the
// index function that places element (row, col) of the tile in shared memory.
// Those functions are constexpr and callable on the host, so the bank model
// (ladder/bank_model.hpp) computes each lane's address from the code that runs.
//
// Build it alone, from this folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../../code/include transpose.cu -lcublas -o transpose
// (-lcublas because the provenance of --json names the cuBLAS version.)
// Run it:
//   ./transpose                        every variant at the default sizes
//   ./transpose --sizes 4096 1000x3000 --variants copy tiled_32x32 tiled_32x33
//   ./transpose --banks                the bank model's view of one warp (no GPU needed)
//   ./transpose --help
#include "transpose.cuh"

int main(int argc, char** argv) { return transpose::run(argc, argv); }
