// Where and when a measurement was made: the GPU, the software, the source.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "cuda_check.hpp"
#include "json.hpp"

namespace ladder {

/// A file-name-safe slug of a GPU's name: "NVIDIA H200" -> "h200",
/// "NVIDIA GeForce RTX 4090" -> "rtx-4090".
inline std::string gpu_slug(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* vendor : {"nvidia ", "geforce "}) {
    const size_t at = lower.find(vendor);
    if (at != std::string::npos) lower.erase(at, std::string(vendor).size());
  }
  std::string slug;
  for (char c : lower) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c));
    if (keep) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "gpu" : slug;
}

/// "13.0" from CUDA's integer version 13000.
inline std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

/// The current UTC time, ISO 8601.
inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

/// The first line a shell command prints, or "unknown".
inline std::string first_line_of(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "unknown";
  char buf[256] = {0};
  const bool got = std::fgets(buf, sizeof buf, pipe) != nullptr;
  pclose(pipe);
  std::string line = got ? buf : "";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line.empty() ? "unknown" : line;
}

/// The path of `file` relative to the repository root, recognised by the
/// first "chapters/" or "code/" component; the path itself if neither is found.
inline std::string repo_relative(const std::string& file) {
  for (const char* root : {"chapters/", "code/"}) {
    const size_t at = file.find(root);
    if (at != std::string::npos && (at == 0 || file[at - 1] == '/')) return file.substr(at);
  }
  return file;
}

/// The directory part of a path ("." when there is none).
inline std::string dirname_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// The commit being measured: $LADDER_GIT_COMMIT when set (a copy of the
/// tree without its .git folder, as on a lent GPU machine), else what git
/// says about the folder the source is in.
inline std::string git_commit(const std::string& source_dir) {
  const char* given = std::getenv("LADDER_GIT_COMMIT");
  if (given != nullptr && given[0] != '\0') return given;
  return first_line_of("git -C '" + source_dir +
                       "' describe --always --dirty --abbrev=12 2>/dev/null");
}

/// The GPU, the software versions, the date, the commit and the source file,
/// as the "provenance" object of a results file. What the program was built
/// from (every file's hash) is added by the measure command, which can see
/// the build (code/ladder_tools/provenance.py).
inline Json provenance(int device, const std::string& source_file) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int sm_clock_khz = 0, mem_clock_khz = 0, driver = 0, runtime = 0, cublas = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasGetVersion(handle, &cublas));
  CUBLAS_CHECK(cublasDestroy(handle));

  const std::string dir = dirname_of(source_file);
  Json p = Json::object();
  p.set("gpu", std::string(prop.name))
      .set("gpu_slug", gpu_slug(prop.name))
      .set("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor))
      .set("sm_count", prop.multiProcessorCount)
      .set("sm_clock_mhz", sm_clock_khz / 1000)
      .set("mem_clock_mhz", mem_clock_khz / 1000)
      .set("l2_bytes", prop.l2CacheSize)
      .set("smem_per_block_optin", static_cast<int>(prop.sharedMemPerBlockOptin))
      .set("global_mem_bytes", static_cast<double>(prop.totalGlobalMem))
      .set("driver", cuda_version_string(driver))
      .set("cuda_runtime", cuda_version_string(runtime))
      .set("cublas", std::to_string(cublas / 10000) + "." + std::to_string((cublas / 100) % 100) +
                         "." + std::to_string(cublas % 100))
      .set("date", utc_now())
      .set("git_commit", git_commit(dir))
      .set("source", repo_relative(source_file));
  return p;
}

}  // namespace ladder
