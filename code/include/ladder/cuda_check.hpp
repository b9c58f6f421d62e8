// Error checking for CUDA runtime and cuBLAS calls, shared by every program.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace ladder {

/// Exit code for "no usable GPU": CTest reports a test that returns it as
/// skipped (SKIP_RETURN_CODE 77), never as passed.
constexpr int kExitNoGpu = 77;

/// The number of CUDA GPUs, or 0 after printing why none can be used. A
/// machine without NVIDIA's kernel driver makes CUDA report "driver version is
/// insufficient"; that would send a user without a GPU off to upgrade a
/// driver, so without a loaded driver the message says only that no GPU was
/// found. With a driver loaded, CUDA's own reason is the useful one.
inline int count_gpus(const char* program) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess && count > 0) return count;
  const bool driver_loaded = std::ifstream("/proc/driver/nvidia/version").good();
  if (status == cudaSuccess || !driver_loaded) {
    std::fprintf(stderr, "%s: no CUDA GPU found; nothing was run\n", program);
  } else {
    std::fprintf(stderr, "%s: no CUDA GPU can be used (%s); nothing was run\n", program,
                 cudaGetErrorString(status));
  }
  return 0;
}

inline void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "error: %s failed at %s:%d: %s\n", what, file, line,
                 cudaGetErrorString(status));
    std::exit(1);
  }
}

inline void check_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: %s failed at %s:%d: %s\n", what, file, line,
                 cublasGetStatusString(status));
    std::exit(1);
  }
}

}  // namespace ladder

/// Checks a CUDA runtime call and exits with a message naming it on failure.
#define CUDA_CHECK(call) ::ladder::check_cuda((call), #call, __FILE__, __LINE__)
/// Checks a cuBLAS call and exits with a message naming it on failure.
#define CUBLAS_CHECK(call) ::ladder::check_cublas((call), #call, __FILE__, __LINE__)
/// Checks that the last kernel launch was accepted.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
