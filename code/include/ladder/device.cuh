// What every program of the book does on the device around its kernels:
// buffers, seeded inputs, poisoned outputs, timing with CUDA events, and the
// checks before the first launch (a GPU, the device asked for, enough
// memory). The GEMM runner (runner.cuh) and the transpose exercise both use
// it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "json.hpp"
#include "stats.hpp"

namespace ladder {

// [inputs]
/// A well-mixed 32-bit hash (a PCG step followed by an output permutation):
/// element i of a matrix filled with seed s gets hash(s * 2^32 + i).
__host__ __device__ inline uint32_t hash32(uint64_t x) {
  uint64_t state = x * 6364136223846793005ull + 1442695040888963407ull;
  const uint32_t xorshifted = static_cast<uint32_t>(((state >> 18u) ^ state) >> 27u);
  const uint32_t rot = static_cast<uint32_t>(state >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

/// Fills x[0..n) with values uniform in [-1, 1), a different set for each seed.
__global__ void fill_uniform(float* x, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t bits = hash32((uint64_t(seed) << 32) ^ i);
    x[i] = static_cast<float>(bits >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

/// Fills x[0..n) with values uniform in [-1, 1) times 2^e, where e is an
/// integer uniform in [-16, 16]: magnitudes spread over 33 binades, so that
/// products and sums mix large and small terms.
__global__ void fill_wide_range(float* x, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t bits = hash32((uint64_t(seed) << 32) ^ i);
    const uint32_t exponent_bits = hash32((uint64_t(~seed) << 32) ^ i);
    const int e = static_cast<int>(exponent_bits % 33u) - 16;
    x[i] = ldexpf(static_cast<float>(bits >> 8) * (2.0f / 16777216.0f) - 1.0f, e);
  }
}
// [end]

/// A device array of n values of type V that frees itself.
template <class V>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) { CUDA_CHECK(cudaMalloc(&ptr_, n * sizeof(V))); }
  ~DeviceArray() { CUDA_CHECK(cudaFree(ptr_)); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  V* get() const { return ptr_; }
  size_t size() const { return n_; }
  std::vector<V> to_host() const {
    std::vector<V> h(n_);
    CUDA_CHECK(cudaMemcpy(h.data(), ptr_, n_ * sizeof(V), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  V* ptr_ = nullptr;
  size_t n_ = 0;
};

/// The buffers every program's matrices live in.
using DeviceBuffer = DeviceArray<float>;

/// Fills `b` with values uniform in [-1, 1), a different set for each seed.
inline void fill(const DeviceBuffer& b, uint32_t seed, cudaStream_t stream) {
  fill_uniform<<<1024, 256, 0, stream>>>(b.get(), b.size(), seed);
  CUDA_CHECK_LAUNCH();
}

/// Fills `b` with values uniform in [-1, 1) scaled by powers of two from
/// 2^-16 to 2^16 (fill_wide_range()), a different set for each seed.
inline void fill_wide(const DeviceBuffer& b, uint32_t seed, cudaStream_t stream) {
  fill_wide_range<<<1024, 256, 0, stream>>>(b.get(), b.size(), seed);
  CUDA_CHECK_LAUNCH();
}

/// Every bit set: a NaN in every element, so an output the kernel never
/// writes cannot pass the check.
inline void poison(const DeviceBuffer& b, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(b.get(), 0xff, b.size() * sizeof(float), stream));
}

/// The seed of check number `check` at size number `size_index`: every
/// check draws fresh inputs.
inline uint32_t check_seed(unsigned base, int size_index, int check, int matrix) {
  return hash32((uint64_t(base) << 24) ^ (uint64_t(size_index) << 8) ^ (uint64_t(check) << 2) ^
                uint64_t(matrix));
}

/// Milliseconds per launch of `run`, averaged over `reps` back-to-back launches.
template <typename Fn>
double time_launches(Fn&& run, int reps, cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop) {
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int r = 0; r < reps; ++r) run();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK_LAUNCH();
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return double(ms) / reps;
}

/// A Summary (median, min, max) as JSON.
inline Json summary_json(const Summary& s) {
  Json j = Json::object();
  j.set("median", s.median).set("min", s.min).set("max", s.max);
  return j;
}

/// The memory one problem of a program needs on the GPU, and its name for
/// the message that refuses it.
struct MemoryNeed {
  std::string what;  ///< e.g. "4096x4096x4096"
  double bytes;
};

/// The checks every program makes before its first launch: that there is a
/// GPU, that `device` is one of them, and that each of `needs` fits in its
/// free memory. Selects the device and returns 0 when all hold; otherwise
/// prints one line, "<program>: why", and returns the exit code to leave
/// with: kExitNoGpu (77) without a GPU, 2 for a device or size the machine
/// cannot serve.
inline int open_device(const std::string& program, int device,
                       const std::vector<MemoryNeed>& needs) {
  const int device_count = count_gpus(program.c_str());
  if (device_count == 0) return kExitNoGpu;
  if (device >= device_count) {
    std::fprintf(stderr, "%s: --device %d, but there are only %d GPUs\n", program.c_str(), device,
                 device_count);
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(device));
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  for (const MemoryNeed& need : needs) {
    if (need.bytes > 0.9 * double(free_bytes)) {
      std::fprintf(stderr, "%s: %s needs %.1f GiB of GPU memory, %.1f GiB is free\n",
                   program.c_str(), need.what.c_str(), need.bytes / (1 << 30),
                   double(free_bytes) / (1 << 30));
      return 2;
    }
  }
  return 0;
}

}  // namespace ladder
