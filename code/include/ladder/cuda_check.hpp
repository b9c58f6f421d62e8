// Error checking for CUDA runtime and cuBLAS calls, shared by every program.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace ladder {

/// Exit code for "no usable GPU": CTest reports a test that returns it as
/// skipped (SKIP_RETURN_CODE 77), never as passed.
constexpr int kExitNoGpu = 77;

inline void check_cuda(cudaError_t status, const char* what, const char* file,
                       int line) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "error: %s failed at %s:%d: %s\n", what, file, line,
                 cudaGetErrorString(status));
    std::exit(1);
  }
}

inline void check_cublas(cublasStatus_t status, const char* what,
                         const char* file, int line) {
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
#define CUBLAS_CHECK(call) \
  ::ladder::check_cublas((call), #call, __FILE__, __LINE__)
/// Checks that the last kernel launch was accepted.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
