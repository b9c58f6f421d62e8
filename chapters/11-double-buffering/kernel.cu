// Chapter 11: double buffering. Chapter 10's kernel with its K loop
// software-pipelined over two stages of shared memory. While the block
// computes on the tiles in one stage, the next tiles are already on their way:
// the B tile by cp.async, straight from global into the other stage's Bs, and
// the A tile into registers (it still has to be scattered transposed, which a
// plain copy cannot do), stored into the other stage's As once the computing
// is done. The loads of step k + 1 overlap the multiply-adds of step k, and
// the loop needs one barrier per step instead of two.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o double-buffering
// Run it:
//   ./double-buffering --sizes 1024 2048
#include "kernel.cuh"

int main(int argc, char** argv) { return ladder::run_chapter(ch11::chapter(), argc, argv); }
