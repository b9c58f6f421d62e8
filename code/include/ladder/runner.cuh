// The shared runner every chapter's main() hands itself to: it parses the
// command line, makes inputs, checks the chapter's kernel against cuBLAS (and
// against an FP64 product on the CPU at small sizes), times it against cuBLAS
// in the same process, and prints a table and, on request, a JSON file.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "accuracy.hpp"
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "describe.hpp"
#include "device.cuh"
#include "json.hpp"
#include "options.hpp"
#include "provenance.hpp"
#include "stats.hpp"

namespace ladder {

namespace detail {

/// Writes one float into a device matrix.
inline void set_element(const DeviceBuffer& b, size_t index, float value, cudaStream_t stream) {
  CUDA_CHECK(
      cudaMemcpyAsync(b.get() + index, &value, sizeof value, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));  // `value` lives on this stack frame
}

/// Puts a NaN and two infinities into A (M x K) and B (K x N): a NaN in row
/// M/3 of A, +Inf in row 2M/3 of A, -Inf in column N/2 of B. Their rows and
/// column of C must come out NaN or infinite, and every other element finite,
/// in the kernel as in cuBLAS; a kernel that drops, moves or invents one
/// fails. Where +Inf meets -Inf the sum is NaN in any order, so the pattern
/// does not depend on the order of the multiply-adds.
inline void put_special_values(const Size& s, const DeviceBuffer& A, const DeviceBuffer& B,
                               cudaStream_t stream) {
  const float inf = INFINITY;
  set_element(A, size_t(s.M / 3) * s.K + s.K / 2, NAN, stream);
  set_element(A, size_t(2 * s.M / 3) * s.K, inf, stream);
  set_element(B, size_t(s.K - 1) * s.N + s.N / 2, -inf, stream);
}

/// The reference: cuBLAS in plain FP32 (CUBLAS_COMPUTE_32F, never TF32).
/// cuBLAS is column-major; a row-major C = A * B is the column-major
/// C^T = B^T * A^T, so B is passed first and M and N swap places.
inline void cublas_gemm(cublasHandle_t handle, const Gemm& g) {
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.N, g.M, g.K, &g.alpha, g.B,
                            CUDA_R_32F, g.N, g.A, CUDA_R_32F, g.K, &g.beta, g.C, CUDA_R_32F, g.N,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/// cuBLAS on the tensor cores with TF32 inputs (CUBLAS_COMPUTE_32F_FAST_TF32):
/// what Part II's kernels are timed against besides plain FP32.
inline void cublas_gemm_tf32(cublasHandle_t handle, const Gemm& g) {
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.N, g.M, g.K, &g.alpha, g.B,
                            CUDA_R_32F, g.N, g.A, CUDA_R_32F, g.K, &g.beta, g.C, CUDA_R_32F, g.N,
                            CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

/// y[i] = x[i] in FP64, for the FP64 reference on the GPU.
__global__ void widen(const float* x, double* y, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    y[i] = x[i];
  }
}

/// alpha * A * B + beta * C0 in FP64 on the GPU (cublasDgemm on FP64 copies
/// of the FP32 inputs), at any size: what Part II measures every method's
/// error against. With beta == 0, C0 is not read (it holds NaN).
inline std::vector<double> gpu_gemm_fp64(cublasHandle_t handle, const Size& s, float alpha,
                                         const DeviceBuffer& A, const DeviceBuffer& B, float beta,
                                         const DeviceBuffer& C0, cudaStream_t stream) {
  DeviceArray<double> A64(A.size()), B64(B.size()), C64(C0.size());
  widen<<<1024, 256, 0, stream>>>(A.get(), A64.get(), A.size());
  widen<<<1024, 256, 0, stream>>>(B.get(), B64.get(), B.size());
  if (beta == 0.0f) {
    CUDA_CHECK(cudaMemsetAsync(C64.get(), 0, C64.size() * sizeof(double), stream));
  } else {
    widen<<<1024, 256, 0, stream>>>(C0.get(), C64.get(), C0.size());
  }
  CUDA_CHECK_LAUNCH();
  const double a = alpha, b = beta;
  CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.N, s.M, s.K, &a, B64.get(), s.N,
                           A64.get(), s.K, &b, C64.get(), s.N));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return C64.to_host();
}

/// alpha * A * B + beta * C0 in FP64 on the CPU, for small sizes. With
/// beta == 0, C0 is not read (it holds NaN).
inline std::vector<double> cpu_gemm_fp64(const Size& s, float alpha, const std::vector<float>& A,
                                         const std::vector<float>& B, float beta,
                                         const std::vector<float>& C0) {
  std::vector<double> C(size_t(s.M) * s.N, 0.0);
  for (int i = 0; i < s.M; ++i) {
    double* row = &C[size_t(i) * s.N];
    for (int k = 0; k < s.K; ++k) {
      const double a = A[size_t(i) * s.K + k];
      const float* b = &B[size_t(k) * s.N];
      for (int j = 0; j < s.N; ++j) row[j] += a * b[j];
    }
    for (int j = 0; j < s.N; ++j) {
      row[j] = alpha * row[j] + (beta == 0.0f ? 0.0 : beta * double(C0[size_t(i) * s.N + j]));
    }
  }
  return C;
}

/// Products up to this many multiply-adds also get the FP64 CPU check.
constexpr double kCpuCheckMaxFma = 1 << 27;

/// What the runner learned about one size.
struct SizeResult {
  Size size{};
  Accuracy accuracy;  ///< kernel against cuBLAS, on the last check
  bool fp64_checked = false;
  Accuracy kernel_fp64;  ///< kernel against FP64 (small sizes)
  Accuracy cublas_fp64;  ///< cuBLAS against FP64 (small sizes)
  bool correct = true;   ///< every check passed
  bool timed = false;
  long long workspace_bytes = 0;  ///< the scratch memory the variant asked for
  std::string timing_skipped;
  Summary kernel_ms;
  Summary cublas_ms;
  // Part II (Chapter::tensor_cores) only:
  Summary cublas_tf32_ms;  ///< cuBLAS on TF32, timed beside the other two
  /// Errors against the FP64 product on the GPU, for uniform inputs ([0])
  /// and wide-range inputs ([1]): the kernel's, cuBLAS's, cuBLAS on TF32's.
  struct Fp64Errors {
    Accuracy kernel, cublas, cublas_tf32;
  };
  std::vector<Fp64Errors> fp64_errors;
};

/// The input distributions Part II measures errors for, in the order of
/// SizeResult::fp64_errors.
inline const char* const kDistributions[] = {"uniform", "wide"};

inline Json accuracy_json(const Accuracy& a) {
  Json j = Json::object();
  j.set("max_rel_err", a.max_rel_err)
      .set("rel_norm_err", a.rel_norm_err)
      .set("tolerance", a.tolerance)
      .set("bad_values", static_cast<double>(a.bad_values))
      .set("correct", a.correct);
  return j;
}

/// Checks the variant at one size `checks` times, each with fresh inputs,
/// then (unless check_only) warms up and times it against cuBLAS.
inline SizeResult run_size(const Chapter& chapter, const Variant& variant, const Options& o,
                           int size_index, cublasHandle_t handle, cudaStream_t stream) {
  SizeResult r;
  const Size s = o.sizes[size_index];
  r.size = s;
  DeviceBuffer A(size_t(s.M) * s.K), B(size_t(s.K) * s.N), C0(size_t(s.M) * s.N),
      C(size_t(s.M) * s.N), Cref(size_t(s.M) * s.N);
  // The variant's scratch memory, if it wants any, allocated here so that no
  // launch allocates and no timing includes an allocation.
  const long long workspace_floats = ladder::workspace_floats(variant, s.M, s.N, s.K);
  r.workspace_bytes = workspace_floats * static_cast<long long>(sizeof(float));
  std::unique_ptr<DeviceBuffer> W;
  if (workspace_floats > 0) W = std::make_unique<DeviceBuffer>(size_t(workspace_floats));
  const Gemm kernel_gemm{s.M,
                         s.N,
                         s.K,
                         o.alpha,
                         A.get(),
                         B.get(),
                         o.beta,
                         C.get(),
                         W ? W->get() : nullptr,
                         workspace_floats};
  const Gemm cublas_args{s.M, s.N, s.K, o.alpha, A.get(), B.get(), o.beta, Cref.get()};
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));

  // [check]
  const int checks = o.check_only ? 2 : 1;
  double first_kernel_ms = 0;
  for (int check = 0; check < checks; ++check) {
    fill(A, check_seed(o.seed, size_index, check, 0), stream);
    fill(B, check_seed(o.seed, size_index, check, 1), stream);
    if (o.special_values) put_special_values(s, A, B, stream);
    // With beta == 0 BLAS does not read C, so C starts as NaN: an element the
    // kernel forgets to write, or a kernel that reads C anyway, fails.
    if (o.beta == 0.0f) {
      poison(C0, stream);
    } else {
      fill(C0, check_seed(o.seed, size_index, check, 2), stream);
    }
    CUDA_CHECK(cudaMemcpyAsync(C.get(), C0.get(), C0.size() * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(Cref.get(), C0.get(), C0.size() * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream));
    cublas_gemm(handle, cublas_args);
    first_kernel_ms =
        time_launches([&] { variant.launch(kernel_gemm, stream); }, 1, stream, start, stop);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> out = C.to_host(), ref = Cref.to_host();
    const NonFinite non_finite =
        o.special_values ? NonFinite::MatchReference : NonFinite::Forbidden;
    const double tolerance = tolerance_of(variant, s.K);
    r.accuracy = compare_within(out.data(), ref.data(), out.size(), tolerance, non_finite);
    r.correct = r.correct && r.accuracy.correct;
    if (double(s.M) * s.N * s.K <= kCpuCheckMaxFma) {
      const std::vector<double> exact =
          cpu_gemm_fp64(s, o.alpha, A.to_host(), B.to_host(), o.beta, C0.to_host());
      r.fp64_checked = true;
      r.kernel_fp64 = compare_within(out.data(), exact.data(), out.size(), tolerance, non_finite);
      r.cublas_fp64 = compare(ref.data(), exact.data(), ref.size(), s.K, non_finite);
      r.correct = r.correct && r.kernel_fp64.correct && r.cublas_fp64.correct;
    }
  }
  // [end]

  // [fp64-errors]
  if (chapter.tensor_cores && !o.special_values) {
    // Each method's error against the FP64 product, for both input
    // distributions; the kernel must stay within its arithmetic's tolerance.
    for (int d = 0; d < 2; ++d) {
      const uint32_t seed_a = check_seed(o.seed, size_index, 2 + d, 0);
      const uint32_t seed_b = check_seed(o.seed, size_index, 2 + d, 1);
      if (d == 0) {
        fill(A, seed_a, stream);
        fill(B, seed_b, stream);
      } else {
        fill_wide(A, seed_a, stream);
        fill_wide(B, seed_b, stream);
      }
      if (o.beta == 0.0f) {
        poison(C0, stream);
      } else {
        fill(C0, check_seed(o.seed, size_index, 2 + d, 2), stream);
      }
      const std::vector<double> exact = gpu_gemm_fp64(handle, s, o.alpha, A, B, o.beta, C0, stream);
      const auto error_of = [&](auto method, const DeviceBuffer& out, double tolerance) {
        CUDA_CHECK(cudaMemcpyAsync(out.get(), C0.get(), C0.size() * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream));
        method();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::vector<float> result = out.to_host();
        return compare_within(result.data(), exact.data(), result.size(), tolerance);
      };
      SizeResult::Fp64Errors e;
      e.kernel =
          error_of([&] { variant.launch(kernel_gemm, stream); }, C, tolerance_of(variant, s.K));
      e.cublas = error_of([&] { cublas_gemm(handle, cublas_args); }, Cref, tolerance_for_k(s.K));
      e.cublas_tf32 =
          error_of([&] { cublas_gemm_tf32(handle, cublas_args); }, Cref, tf32_tolerance_for_k(s.K));
      r.fp64_errors.push_back(e);
      r.correct = r.correct && e.kernel.correct;
    }
  }
  // [end]

  if (!o.check_only) {
    // [time]
    const double predicted_s = 2.0 * o.trials * o.reps * first_kernel_ms / 1e3;
    if (o.budget_s > 0 && predicted_s > o.budget_s) {
      char why[160];
      std::snprintf(why, sizeof why, "timing would take about %.0f s, over the %.0f s budget",
                    predicted_s, o.budget_s);
      r.timing_skipped = why;
    } else {
      auto kernel = [&] { variant.launch(kernel_gemm, stream); };
      auto reference = [&] { cublas_gemm(handle, cublas_args); };
      auto reference_tf32 = [&] { cublas_gemm_tf32(handle, cublas_args); };
      const bool tf32 = chapter.tensor_cores;
      // Warm up all until at least warmup_ms has passed: clocks ramp, caches
      // and cuBLAS's heuristics settle, and module loading is out of the way.
      double warm_ms = 0;
      while (warm_ms < o.warmup_ms) {
        warm_ms += time_launches(kernel, 1, stream, start, stop);
        warm_ms += time_launches(reference, 1, stream, start, stop);
        if (tf32) warm_ms += time_launches(reference_tf32, 1, stream, start, stop);
      }
      // Interleave: trial t times the kernel, then cuBLAS (and, in Part II,
      // cuBLAS on TF32), so all see the same clocks and temperature and their
      // ratio comes from one run.
      std::vector<double> kernel_ms, cublas_ms, cublas_tf32_ms;
      for (int t = 0; t < o.trials; ++t) {
        kernel_ms.push_back(time_launches(kernel, o.reps, stream, start, stop));
        cublas_ms.push_back(time_launches(reference, o.reps, stream, start, stop));
        if (tf32)
          cublas_tf32_ms.push_back(time_launches(reference_tf32, o.reps, stream, start, stop));
      }
      r.kernel_ms = summarize(kernel_ms);
      r.cublas_ms = summarize(cublas_ms);
      if (tf32) r.cublas_tf32_ms = summarize(cublas_tf32_ms);
      r.timed = true;
    }
    // [end]
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return r;
}

inline Json size_json(const SizeResult& r) {
  const Size& s = r.size;
  Json j = Json::object();
  j.set("M", s.M).set("N", s.N).set("K", s.K);
  if (r.timed) {
    j.set("time_ms", summary_json(r.kernel_ms))
        .set("gflops", gflops(s.M, s.N, s.K, r.kernel_ms.median))
        .set("cublas_time_ms", summary_json(r.cublas_ms))
        .set("cublas_gflops", gflops(s.M, s.N, s.K, r.cublas_ms.median))
        .set("pct_cublas", 100.0 * r.cublas_ms.median / r.kernel_ms.median);
    if (!r.fp64_errors.empty() || r.cublas_tf32_ms.median > 0) {
      j.set("cublas_tf32_time_ms", summary_json(r.cublas_tf32_ms))
          .set("cublas_tf32_gflops", gflops(s.M, s.N, s.K, r.cublas_tf32_ms.median))
          .set("pct_cublas_tf32", 100.0 * r.cublas_tf32_ms.median / r.kernel_ms.median);
    }
  } else if (!r.timing_skipped.empty()) {
    j.set("timing_skipped", r.timing_skipped);
  }
  j.set("max_rel_err", r.accuracy.max_rel_err)
      .set("rel_norm_err", r.accuracy.rel_norm_err)
      .set("tolerance", r.accuracy.tolerance);
  if (r.fp64_checked) {
    j.set("fp64_check", Json::object()
                            .set("kernel", accuracy_json(r.kernel_fp64))
                            .set("cublas", accuracy_json(r.cublas_fp64)));
  }
  if (!r.fp64_errors.empty()) {
    Json errors = Json::object();
    for (size_t d = 0; d < r.fp64_errors.size(); ++d) {
      const SizeResult::Fp64Errors& e = r.fp64_errors[d];
      errors.set(kDistributions[d], Json::object()
                                        .set("kernel", accuracy_json(e.kernel))
                                        .set("cublas", accuracy_json(e.cublas))
                                        .set("cublas_tf32", accuracy_json(e.cublas_tf32)));
    }
    j.set("fp64_error", errors);
  }
  if (r.workspace_bytes > 0) j.set("workspace_bytes", static_cast<double>(r.workspace_bytes));
  j.set("correct", r.correct);
  return j;
}

/// The main kernel's resources as the GPU reports them: registers, static
/// shared memory, local memory (spills), and the resident blocks per SM that
/// cudaOccupancyMaxActiveBlocksPerMultiprocessor allows.
inline Json resources_json(const KernelInfo& k, int device) {
  Json j = Json::object();
  if (k.function == nullptr) return j;
  const KernelResources resources = resources_from_gpu(k.function);
  if (k.dynamic_smem_bytes > 0) {
    CUDA_CHECK(cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    k.dynamic_smem_bytes));
  }
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.function, k.threads_per_block,
                                                           k.dynamic_smem_bytes));
  int max_threads = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  j.set("threads_per_block", k.threads_per_block).set("dynamic_smem_bytes", k.dynamic_smem_bytes);
  set_resource_fields(j, resources)
      .set("blocks_per_sm", blocks)
      .set("occupancy", double(blocks) * k.threads_per_block / max_threads);
  return j;
}

inline void print_row(const SizeResult& r) {
  char time[64] = "-", rate[32] = "-", ref[32] = "-", pct[16] = "-";
  if (r.timed) {
    std::snprintf(time, sizeof time, "%.3f [%.3f, %.3f]", r.kernel_ms.median, r.kernel_ms.min,
                  r.kernel_ms.max);
    std::snprintf(rate, sizeof rate, "%.1f",
                  gflops(r.size.M, r.size.N, r.size.K, r.kernel_ms.median));
    std::snprintf(ref, sizeof ref, "%.1f",
                  gflops(r.size.M, r.size.N, r.size.K, r.cublas_ms.median));
    std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * r.cublas_ms.median / r.kernel_ms.median);
  } else if (!r.timing_skipped.empty()) {
    std::snprintf(time, sizeof time, "skipped");
  }
  std::printf("%-18s %-28s %12s %12s %9s %10.2e %10.2e  %s\n", to_string(r.size).c_str(), time,
              rate, ref, pct, r.accuracy.max_rel_err, r.accuracy.rel_norm_err,
              r.correct ? "correct" : "INCORRECT");
  if (!r.timing_skipped.empty()) std::printf("  (timing skipped: %s)\n", r.timing_skipped.c_str());
  if (r.timed && r.cublas_tf32_ms.median > 0) {
    std::printf("  cuBLAS on TF32: %.1f GFLOP/s (the kernel: %.1f%% of it)\n",
                gflops(r.size.M, r.size.N, r.size.K, r.cublas_tf32_ms.median),
                100.0 * r.cublas_tf32_ms.median / r.kernel_ms.median);
  }
  for (size_t d = 0; d < r.fp64_errors.size(); ++d) {
    const SizeResult::Fp64Errors& e = r.fp64_errors[d];
    std::printf(
        "  rel norm error vs FP64, %s inputs: kernel %.2e, cuBLAS %.2e, cuBLAS TF32 %.2e%s\n",
        kDistributions[d], e.kernel.rel_norm_err, e.cublas.rel_norm_err, e.cublas_tf32.rel_norm_err,
        e.kernel.correct ? "" : "  (kernel over its tolerance)");
  }
  std::fflush(stdout);
}

/// The names of the chapter's variants, separated by ", ".
inline std::string variant_names(const Chapter& chapter) {
  std::string names;
  for (const Variant& v : chapter.variants) names += (names.empty() ? "" : ", ") + v.name;
  return names;
}

/// The index of the variant called `name` in `chapter` (an empty name is the
/// chapter's own, 0), or -1 when it has none of that name.
inline int find_variant(const Chapter& chapter, const std::string& name) {
  if (name.empty()) return 0;
  for (size_t i = 0; i < chapter.variants.size(); ++i) {
    if (chapter.variants[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace detail

/// Runs a chapter from the command line: checks it, times it, reports it;
/// `--variant NAME` picks one of its variants, `--describe` prints what it
/// is, as JSON, instead. `program_file` is the file of the caller, the
/// chapter's kernel.cu, which --describe names. Returns the process exit
/// code: 0 when every check passed, 1 when one failed, 2 for bad input,
/// kExitNoGpu (77) when there is no GPU.
inline int run_chapter(const Chapter& chapter, int argc, char** argv,
                       const char* program_file = __builtin_FILE()) {
  // [refuse]
  const ParseResult parsed = parse_options(argc, argv);
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "%s: %s\n", chapter.slug.c_str(), parsed.error.c_str());
    return 2;
  }
  const Options& o = parsed.options;
  const int index = detail::find_variant(chapter, o.variant);
  if (index < 0) {
    std::fprintf(stderr, "%s: unknown variant '%s'; the variants are: %s\n", chapter.slug.c_str(),
                 o.variant.c_str(), detail::variant_names(chapter).c_str());
    return 2;
  }
  if (o.help) {
    std::printf("%s (%s)\n%sVariants: %s\n", chapter.slug.c_str(), chapter.title.c_str(),
                usage(program_name(argv[0])).c_str(), detail::variant_names(chapter).c_str());
    return 0;
  }
  if (o.describe) {
    std::printf("%s\n", describe_json(chapter, program_file).dump().c_str());
    return 0;
  }
  const Variant& variant = chapter.variants[index];
  const std::string slug = result_slug(chapter, index);
  for (const Size& s : o.sizes) {
    std::string why = check_index_range(s);
    if (why.empty()) why = variant.accepts(s.M, s.N, s.K);
    if (!why.empty()) {
      std::fprintf(stderr, "%s: cannot compute %s: %s\n", slug.c_str(), to_string(s).c_str(),
                   why.c_str());
      return 2;
    }
  }
  std::vector<MemoryNeed> needs;
  for (const Size& s : o.sizes) {
    // A, B, and three M x N buffers: C's input, the kernel's output, cuBLAS's.
    // Part II adds FP64 copies of A, B and C for the exact product.
    const double floats = double(s.M) * s.K + double(s.K) * s.N + 3.0 * s.M * s.N;
    const double doubles =
        chapter.tensor_cores ? double(s.M) * s.K + double(s.K) * s.N + double(s.M) * s.N : 0.0;
    needs.push_back({to_string(s), 4.0 * floats + 8.0 * doubles});
  }
  if (const int refused = open_device(slug, o.device, needs)) return refused;
  // [end]

  Json report = Json::object();
  report.set("schema", 1).set("chapter", slug);
  if (index > 0) report.set("variant", variant.name).set("binary", chapter.slug);
  report.set("title", variant.title);
  Json config = Json::object();
  config.set("trials", o.trials)
      .set("reps", o.reps)
      .set("warmup_ms", o.warmup_ms)
      .set("alpha", double(o.alpha))
      .set("beta", double(o.beta))
      .set("seed", static_cast<double>(o.seed))
      .set("check_only", o.check_only)
      .set("special_values", o.special_values)
      .set("budget_s", o.budget_s);
  Json prov = provenance(o.device, chapter.header);
  prov.set("config", config);
  report.set("provenance", prov);
  report.set("resources", detail::resources_json(variant.kernel, o.device));

  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUBLAS_CHECK(cublasSetStream(handle, stream));

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
  std::printf("%s (%s) on %s, alpha %g, beta %g%s%s\n", slug.c_str(), variant.title.c_str(),
              prop.name, o.alpha, o.beta, o.check_only ? ", check only" : "",
              o.special_values ? ", NaN and Inf in A and B" : "");
  std::printf("%-18s %-28s %12s %12s %9s %10s %10s  %s\n", "M x N x K",
              "time ms (median [min, max])", "GFLOP/s", "cuBLAS", "% cuBLAS", "max rel", "rel norm",
              "verdict");

  bool all_correct = true;
  Json sizes = Json::array();
  for (int i = 0; i < static_cast<int>(o.sizes.size()); ++i) {
    const detail::SizeResult r = detail::run_size(chapter, variant, o, i, handle, stream);
    detail::print_row(r);
    sizes.push(detail::size_json(r));
    all_correct = all_correct && r.correct;
  }
  report.set("sizes", sizes);

  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << report.dump() << "\n";
    if (!out) {
      std::fprintf(stderr, "%s: could not write %s\n", slug.c_str(), o.json_path.c_str());
      return 1;
    }
  }
  return all_correct ? 0 : 1;
}

}  // namespace ladder
