// Chapter 17: FP32's accuracy at wgmma's speed. Chapter 16's kernel on
// 3xTF32: A split once before the product (or tile by tile on chip, where a
// count says that pays), the split rounded or truncated by K, the tile by a
// count, and the last round cut into slices along K. It
// needs the sm_90a target and a GPU of compute capability 9.0 (an H100 or
// H200); on any other GPU it says so in one line and exits with 2.
//
// Build this chapter alone, from its folder:
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -I../../code/include kernel.cu -lcublas -o split
// Run it:
//   ./split --sizes 1024 4096 1000x1000x1000
#include <cstdio>
#include <cstring>
#include <string>

#include "kernel.cuh"

namespace {

/// The GPU the run asks for: --device N, or 0.
int device_asked(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--device") == 0) return std::atoi(argv[i + 1]);
  return 0;
}

/// Whether the run only prints text about the chapter (no GPU needed).
bool text_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--describe") == 0 || std::strcmp(argv[i], "--help") == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  // Without a GPU the runner reports the run skipped (exit code 77).
  if (!text_only(argc, argv) &&
      cudaGetDeviceProperties(&prop, device_asked(argc, argv)) == cudaSuccess) {
    const std::string why = ch16::unsupported_gpu(prop, "17-3xtf32-wgmma");
    if (!why.empty()) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return 2;
    }
  }
  return ladder::run_chapter(ch17::chapter(), argc, argv);
}
