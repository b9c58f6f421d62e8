// Chapter 02: global-memory coalescing. Still one thread per element of C, but
// the thread-to-element mapping is swapped: threadIdx.x now walks along a row
// of C, so the 32 lanes of a warp write 32 consecutive floats of C, read 32
// consecutive floats of a row of B, and all read the same float of A.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o coalescing
// Run it:
//   ./coalescing --sizes 1024 2048
#include <ladder/runner.cuh>

namespace ch02 {

// [kernel]
/// @brief C = alpha * A * B + beta * C with one thread per element of C,
/// consecutive lanes on consecutive columns.
///
/// Thread (x, y) of the grid computes C[row][col] with col taken from the x
/// index and row from the y index. The lanes of a warp differ in x only, so
/// in every step of the k loop they read one float of A (a broadcast) and 32
/// neighbouring floats of a row of B, and at the end they write 32
/// neighbouring floats of C: each warp-wide access is one contiguous 128-byte
/// segment instead of 32 segments K or N floats apart.
///
/// @pre blockDim.x * gridDim.x >= N and blockDim.y * gridDim.y >= M.
__global__ void sgemm_coalesced(int M, int N, int K, float alpha, const float* A, const float* B,
                                float beta, float* C) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += A[row * K + k] * B[k * N + col];
    }
    // BLAS semantics: with beta == 0, C is output only and is never read
    // (it may hold anything, NaN included).
    const float c_in = (beta == 0.0f) ? 0.0f : beta * C[row * N + col];
    C[row * N + col] = alpha * sum + c_in;
  }
}
// [end]

// [launch]
/// Side of the square thread block: 32 x 32 = 1024 threads.
constexpr int BLOCK = 32;

/// @brief Launches sgemm_coalesced with one thread per element of C; the
/// grid's x dimension covers the N columns and its y dimension the M rows.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(ladder::ceil_div(g.N, BLOCK), ladder::ceil_div(g.M, BLOCK));
  sgemm_coalesced<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
}
// [end]

}  // namespace ch02

#ifndef LADDER_NO_MAIN
int main(int argc, char** argv) {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(ch02::sgemm_coalesced),
                                  ch02::BLOCK * ch02::BLOCK, 0};
  const ladder::Chapter chapter{"02-coalescing", "Global-memory coalescing", __FILE__,
                                ch02::launch,    ladder::accepts_any_size,   kernel};
  return ladder::run_chapter(chapter, argc, argv);
}
#endif
