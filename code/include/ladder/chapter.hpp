// The contract between a chapter's kernel file and the shared runner.
//
// A chapter hands the runner one `ladder::Chapter`: its name, a launcher that
// computes C = alpha * A * B + beta * C for row-major matrices already on the
// device, and a check that says which sizes the launcher can compute. The
// runner owns everything else: inputs, references, timing, output.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "cuda_check.hpp"

namespace ladder {

/// One GEMM problem on the device. All matrices are row-major and densely
/// packed: A is M x K (leading dimension K), B is K x N (leading dimension N)
/// and C is M x N (leading dimension N).
struct Gemm {
  int M;
  int N;
  int K;
  float alpha;
  const float* A;
  const float* B;
  float beta;
  float* C;
};

/// Enqueues the chapter's kernel(s) for `g` on `stream`. It must not
/// synchronize and must not allocate; the runner checks launch errors.
using LaunchFn = void (*)(const Gemm& g, cudaStream_t stream);

/// Returns an empty string when the chapter can compute an M x N x K product,
/// otherwise one sentence that says why not (for example "M must be a
/// multiple of 128"). Called before anything is launched.
using AcceptsFn = std::string (*)(int M, int N, int K);

/// The main kernel a chapter launches and its launch shape, so the runner can
/// ask the GPU for its registers, shared memory and occupancy.
struct KernelInfo {
  const void* function = nullptr;  ///< the `__global__` function, cast to const void*
  int threads_per_block = 0;
  int dynamic_smem_bytes = 0;
};

/// Everything the runner needs to know about one chapter.
struct Chapter {
  const char* slug;    ///< the chapter's folder name, e.g. "01-naive"
  const char* title;   ///< a short human title, e.g. "Naive"
  const char* source;  ///< the kernel file's path, pass `__FILE__`
  LaunchFn launch;
  AcceptsFn accepts;
  KernelInfo kernel;   ///< optional: the main kernel, for the resource report
};

/// The accepts-function of a chapter that computes every size.
inline std::string accepts_any_size(int, int, int) { return {}; }

/// Lets `kernel` take `bytes` of dynamic shared memory, past the 48 KiB a
/// block gets without asking; a refusal stops the program with CUDA's reason.
/// Returns true, so that a launcher can ask once, from a static initializer.
template <class Kernel>
bool allow_dynamic_smem(Kernel* kernel, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  return true;
}

/// Ceiling division for positive integers, for grid sizes.
constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace ladder
