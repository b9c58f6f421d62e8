// Chapter 09: autotuning. Chapter 08's kernel, unchanged; what changes is how
// its tile sizes are chosen. Chapter 08 picked them among a handful tried by
// hand. Here a sweep (code/sweep.py, over the grid in sweep.json) builds,
// checks and times every configuration that meets the rules, on the GPU the
// book is measured on, and the fastest correct one is committed as Chosen
// below. So that the sweep can ask which configurations are valid without
// compiling each one, the rules move out of Tiling's static_asserts into one
// constexpr function over plain ints, tiling_error(), which Tiling checks too:
// the rules are written once.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o autotuning
// Run it:
//   ./autotuning --sizes 1024 2048
// Sweep the tile sizes (on a GPU), from the repository root:
//   python3 code/sweep.py 09-autotuning
#include "kernel.cuh"

int main(int argc, char** argv) {
  return ladder::run_chapter(ch09::chapter<ch09::Chosen>(), argc, argv);
}
