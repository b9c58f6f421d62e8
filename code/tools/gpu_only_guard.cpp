// Linked into a GPU-only program that was compiled as a check alone, on a
// machine where configure found no GPU (cmake/GpuOnly.cmake): its device
// code is unoptimized PTX, not meant to run. Before main() starts, the
// program says so in one line and exits with 77, which CTest reports as
// skipped.
#include <cstdio>
#include <cstdlib>

namespace {

[[maybe_unused]] const int kRefused = [] {
  std::fputs(
      "compiled as a check only (no GPU when its build folder was configured); to run it, "
      "configure a new build folder on a machine with a GPU, or this one with "
      "-DLADDER_GPU_FOUND=ON\n",
      stderr);
  std::exit(77);
  return 0;
}();

}  // namespace
