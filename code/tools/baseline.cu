// The two ceilings every chapter is read against, measured on this GPU:
// the FP32 FMA peak (a loop of independent FMAs on registers, no memory) and
// device-to-device copy bandwidth (cudaMemcpy, bytes read plus written).
//
//   baseline [--json FILE]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ladder/cuda_check.hpp>
#include <ladder/json.hpp>
#include <ladder/provenance.hpp>
#include <ladder/stats.hpp>
#include <string>
#include <vector>

namespace {

constexpr int kChains = 8;         // independent FMA chains per thread hide the FMA latency
constexpr int kIterations = 4096;  // loop trips per thread

/// Each thread runs kChains independent chains of kIterations FMAs on values
/// held in registers; the result is stored so the compiler keeps the work.
__global__ void fma_loop(float* out, float a, float b) {
  float x[kChains];
  for (int c = 0; c < kChains; ++c) x[c] = threadIdx.x + c;
  for (int i = 0; i < kIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = fmaf(x[c], a, b);
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <typename Fn>
ladder::Summary time_ms(Fn&& fn, int trials) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  fn();  // warm-up
  std::vector<double> ms;
  for (int t = 0; t < trials; ++t) {
    CUDA_CHECK(cudaEventRecord(start));
    fn();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    ms.push_back(elapsed);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return ladder::summarize(ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: baseline [--json FILE]\n");
      return 2;
    }
  }
  if (ladder::count_gpus("baseline") == 0) return ladder::kExitNoGpu;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

  // FMA peak: enough blocks for several waves on every SM.
  const int threads = 256, blocks = prop.multiProcessorCount * 64;
  float* out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, sizeof(float) * threads * blocks));
  const ladder::Summary fma = time_ms(
      [&] {
        fma_loop<<<blocks, threads>>>(out, 0.999f, 0.001f);
        CUDA_CHECK_LAUNCH();
      },
      7);
  const double flops = 2.0 * kChains * kIterations * double(threads) * blocks;
  const double fma_gflops = flops / (fma.median * 1e-3) / 1e9;
  CUDA_CHECK(cudaFree(out));

  // Copy bandwidth: 256 MiB each way, counted as read plus written.
  const size_t bytes = size_t(256) << 20;
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  CUDA_CHECK(cudaMemset(src, 1, bytes));
  const ladder::Summary copy =
      time_ms([&] { CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)); }, 15);
  const double copy_gbs = 2.0 * bytes / (copy.median * 1e-3) / 1e9;
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));

  std::printf("%s: FP32 FMA peak %.0f GFLOP/s, device-to-device copy %.0f GB/s\n", prop.name,
              fma_gflops, copy_gbs);
  if (!json_path.empty()) {
    ladder::Json j = ladder::Json::object();
    j.set("schema", 1)
        .set("provenance", ladder::provenance(0, __FILE__))
        .set("fma_peak_gflops", fma_gflops)
        .set("fma_time_ms", fma.median)
        .set("copy_bandwidth_gbs", copy_gbs)
        .set("copy_bytes", static_cast<double>(bytes))
        .set("copy_time_ms", copy.median);
    std::ofstream(json_path) << j.dump() << "\n";
  }
  return 0;
}
