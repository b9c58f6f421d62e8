// Chapter 12 with a tiling per size: the same kernel, launched with one of two
// tilings, whichever the count of rounds of blocks favours for the product at
// hand. The chapter's own binary runs Chosen at every size, and so does the
// sweep, which times one tiling per binary; this one adds the choice, and the
// measure command measures it beside the chapter.
//
// Build it alone, from this folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include by_size.cu -lcublas -o final-by-size
//
// Included by a file that defines LADDER_NO_MAIN first (the CPU tests), it
// adds the count and the launcher without a main().
#ifndef LADDER_NO_MAIN
#define LADDER_BY_SIZE_PROGRAM  // compiled as the program: main() is at the end
#define LADDER_NO_MAIN
#endif
#include "kernel.cu"

namespace ch12 {

// [by-size]
/// The second tiling: chapter 11's 64 x 128 tiles, which this kernel runs at
/// three blocks per SM, so that one round of blocks puts 3 * 64 * 128 = 24 576
/// elements of C on an SM instead of the 32 768 of one 128 x 256 block.
using Small = Tiling<64, 128, 16, 32, 64, 2, 8, 4, 128, 1, 1>;

/// Blocks of tiling T (its exact path) that fit on one SM of the current GPU.
template <class T>
int blocks_per_sm() {
  // The dynamic shared memory must be granted before the occupancy is asked.
  ladder::allow_dynamic_smem(sgemm_warptiled<T, true, false>, T::SMEM_BYTES);
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, sgemm_warptiled<T, true, false>, T::NUM_THREADS, T::SMEM_BYTES));
  return blocks;
}

/// The work that tiling T gives every SM time for in an M x N product, in
/// elements of C: its rounds of blocks (its blocks over the slots of all
/// `sms` SMs, rounded up) times the elements of C that one round puts on an
/// SM. If an SM works through elements of C at the same rate with either
/// tiling, the product's time is proportional to it.
template <class T>
long long round_work(int M, int N, int sms, int blocks_per_sm) {
  const long long blocks = 1ll * ladder::ceil_div(M, T::BM) * ladder::ceil_div(N, T::BN);
  const long long slots = 1ll * sms * blocks_per_sm;
  const long long rounds = (blocks + slots - 1) / slots;
  return rounds * blocks_per_sm * T::BM * T::BN;
}

/// True when Small should compute an M x N product instead of tiling T, on
/// a GPU of `sms` SMs that hold `big_blocks` blocks of T and `small_blocks`
/// of Small each: when Small's rounds give the SMs more than a tenth less
/// work to wait through. The margin covers what the count leaves out: Small's
/// blocks work through elements of C a little more slowly per SM than
/// 128 x 256 ones at equal load.
template <class T>
bool small_is_faster(int M, int N, int sms, int big_blocks, int small_blocks) {
  if (sms < 1 || big_blocks < 1 || small_blocks < 1) return false;
  return 10 * round_work<Small>(M, N, sms, small_blocks) <
         9 * round_work<T>(M, N, sms, big_blocks);
}

/// Launches the product with tiling T, or with Small where
/// small_is_faster() says so for this GPU.
template <class T>
void launch_by_size(const ladder::Gemm& g, cudaStream_t stream) {
  static const int sms = [] {
    int device = 0, count = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
  }();
  static const int big_blocks = blocks_per_sm<T>();
  static const int small_blocks = blocks_per_sm<Small>();
  if (small_is_faster<T>(g.M, g.N, sms, big_blocks, small_blocks)) {
    launch<Small>(g, stream);
  } else {
    launch<T>(g, stream);
  }
}
// [end]

}  // namespace ch12

#ifdef LADDER_BY_SIZE_PROGRAM
int main(int argc, char** argv) {
  using Config = ch12::Chosen;
  // The resource report shows Chosen's exact path, as the chapter's does.
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(ch12::sgemm_warptiled<Config>),
                                  Config::NUM_THREADS, Config::SMEM_BYTES};
  const ladder::Chapter chapter{"12-final-by-size",
                                "The final kernel (a tiling per size)",
                                __FILE__,
                                ch12::launch_by_size<Config>,
                                ch12::accepts<Config>,
                                kernel};
  return ladder::run_chapter(chapter, argc, argv);
}
#endif
