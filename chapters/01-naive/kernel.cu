// Chapter 01: the naive kernel. One thread computes one element of C.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -std=c++17 -arch=native -I../../code/include kernel.cu -lcublas -o naive
// Run it:
//   ./naive --sizes 1024 2048
#include <ladder/runner.cuh>

namespace ch01 {

// [kernel]
/// @brief C = alpha * A * B + beta * C with one thread per element of C.
///
/// Thread (x, y) of the grid computes C[row][col] with row taken from the x
/// index and col from the y index. Consecutive lanes of a warp therefore walk
/// down a column of C and read rows of A that are K floats apart: the
/// accesses of one warp are not coalesced (chapter 02 fixes that).
///
/// @pre blockDim.x * gridDim.x >= M and blockDim.y * gridDim.y >= N.
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
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

/// @brief Launches sgemm_naive with one thread per element of C.
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(ladder::ceil_div(g.M, BLOCK), ladder::ceil_div(g.N, BLOCK));
  sgemm_naive<<<grid, block, 0, stream>>>(g.M, g.N, g.K, g.alpha, g.A, g.B,
                                          g.beta, g.C);
}
// [end]

}  // namespace ch01

#ifndef LADDER_NO_MAIN
int main(int argc, char** argv) {
  const ladder::Chapter chapter{
      "01-naive", "Naive", __FILE__, ch01::launch, ladder::accepts_any_size,
      {reinterpret_cast<const void*>(ch01::sgemm_naive), ch01::BLOCK * ch01::BLOCK, 0}};
  return ladder::run_chapter(chapter, argc, argv);
}
#endif
