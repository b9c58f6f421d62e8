// The contract between a chapter's kernel header and the shared runner.
//
// A chapter describes itself as one `ladder::Chapter`: its name, its source
// files and its variants. Each variant is a launcher that computes
// C = alpha * A * B + beta * C for row-major matrices already on the device, a
// check that says which sizes the launcher can compute, the kernel it
// launches, and the constants of its tiling. The first variant is the
// chapter's own; the others (`--variant NAME`) are measured beside it. The
// runner owns everything else: inputs, references, timing, output.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "accuracy.hpp"
#include "cuda_check.hpp"

namespace ladder {

/// One GEMM problem on the device. All matrices are row-major and densely
/// packed: A is M x K (leading dimension K), B is K x N (leading dimension N)
/// and C is M x N (leading dimension N). `workspace` is scratch memory of
/// `workspace_floats` floats, 16-byte aligned, for a launcher that asks for
/// it (Variant::workspace); nullptr and 0 otherwise.
struct Gemm {
  int M;
  int N;
  int K;
  float alpha;
  const float* A;
  const float* B;
  float beta;
  float* C;
  float* workspace = nullptr;
  long long workspace_floats = 0;
};

/// Enqueues the chapter's kernel(s) for `g` on `stream`. It must not
/// synchronize and must not allocate; the runner checks launch errors.
using LaunchFn = void (*)(const Gemm& g, cudaStream_t stream);

/// The floats of scratch memory a launcher wants for an M x N x K product
/// whose matrices start on 16-byte boundaries; 0 for none. The runner
/// allocates them before the product is checked or timed and passes them in
/// Gemm::workspace. Called before anything is launched.
using WorkspaceFn = long long (*)(int M, int N, int K);

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

/// One named constant of a variant's tiling: a tile size (BM, TN, ...) or a
/// quantity the kernel derives from them (NUM_THREADS, A_STRIDE, SMEM_BYTES,
/// ...), under the name the chapter gives it.
struct Constant {
  std::string name;
  long long value;
};

/// What a variant's arithmetic promises, and so how close to an exact (FP64)
/// product its result must come: FP32 throughout (Part I, and 3xTF32), or
/// products of inputs rounded to TF32, 10 mantissa bits, as the tensor cores
/// take them (the tolerances in the harness's accuracy header).
enum class Arithmetic { kFp32, kTf32 };

/// The name of a chapter's own variant, the first of its list.
constexpr const char* kDefaultVariant = "default";

/// One way to run a chapter: a kernel with one tiling and its launcher.
struct Variant {
  std::string name;   ///< what `--variant` takes, e.g. "rows"; kDefaultVariant for the first
  std::string title;  ///< a short human title, e.g. "Padded shared memory (row order)"
  LaunchFn launch;
  AcceptsFn accepts;
  KernelInfo kernel;                ///< optional: the main kernel, for the resource report
  std::vector<Constant> constants;  ///< the tiling's parameters and derived constants
  Arithmetic arithmetic = Arithmetic::kFp32;  ///< the accuracy it promises
  WorkspaceFn workspace = nullptr;            ///< optional: the scratch memory it wants
};

/// The floats of workspace variant `v` wants for an M x N x K product.
inline long long workspace_floats(const Variant& v, int M, int N, int K) {
  return v.workspace ? v.workspace(M, N, K) : 0;
}

/// The error a variant may have against an exact product with inner
/// dimension K: FP32's, or TF32's (accuracy.hpp).
inline double tolerance_of(const Variant& v, int K) {
  return v.arithmetic == Arithmetic::kTf32 ? tf32_tolerance_for_k(K) : tolerance_for_k(K);
}

/// Everything the runner needs to know about one chapter.
struct Chapter {
  std::string slug;               ///< the chapter's folder name, e.g. "01-naive"
  std::string title;              ///< a short human title, e.g. "Naive"
  std::string header;             ///< the kernel header's path: `__FILE__` in kernel.cuh
  std::vector<Variant> variants;  ///< the chapter's own first, then the others
  /// Part II: also time cuBLAS on the TF32 tensor cores, and measure the
  /// error of the kernel, of cuBLAS and of cuBLAS on TF32 against an FP64
  /// product at every size, for uniform inputs and for inputs whose
  /// exponents span a wide range.
  bool tensor_cores = false;
};

/// The name that variant number `index` of `chapter` gives its results: the
/// chapter's slug for its own variant, "<slug>-<variant>" for the others
/// (e.g. "10-padding-rows").
inline std::string result_slug(const Chapter& chapter, size_t index) {
  return index == 0 ? chapter.slug : chapter.slug + "-" + chapter.variants[index].name;
}

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
__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace ladder
