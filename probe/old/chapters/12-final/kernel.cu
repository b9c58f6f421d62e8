// Chapter 12: the final kernel. Chapter 11's pipelined kernel, retuned
// against its pipeline, and made general: it computes any M, N, K >= 1. Each
// addition is a separate, visible choice that the sweep or the chapter can
// measure:
//   * __launch_bounds__(NUM_THREADS, MIN_BLOCKS): MIN_BLOCKS resident blocks
//     per SM, which caps the registers a thread may use;
//   * with beta == 0 the epilogue does not read C at all;
//   * the blocks are rasterized in groups of GROUP_M tile rows, so that the
//     blocks resident at one time share panels of A and B in L2;
//   * edges: loads outside the matrices are predicated off and read as zero
//     (cp.async's source size 0 zero-fills), stores outside are skipped;
//   * three paths, which the launcher picks: an exact path, without any test
//     of the edges, when the tiles divide M, N and K; an aligned path (16-byte
//     global loads and stores, edges tested) when K % 4 == 0 and N % 4 == 0;
//     and a general path with 4-byte accesses otherwise, which is slower.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o final
// Run it:
//   ./final --sizes 1024 2048 4096 1000x1000x1000 127x255x63
#include "kernel.cuh"

int main(int argc, char** argv) {
  return ladder::run_chapter(ch12::chapter<ch12::Chosen>(), argc, argv);
}
