// The transpose exercise's kernels, index functions and program: everything
// but main(), which is in transpose.cu.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ladder/bank_model.hpp>
#include <ladder/chapter.hpp>  // ceil_div
#include <ladder/device.cuh>
#include <ladder/options.hpp>
#include <ladder/provenance.hpp>
#include <string>
#include <vector>

namespace transpose {

// [shape]
/// Side of the square tile a block moves: one float per lane of a warp.
constexpr int TILE = 32;
/// Rows of threads in a block. A block is TILE x BLOCK_ROWS threads, so each
/// thread moves TILE / BLOCK_ROWS elements, one every BLOCK_ROWS rows.
constexpr int BLOCK_ROWS = 8;
/// Elements each thread moves: the steps of a block down its tile.
constexpr int STEPS = TILE / BLOCK_ROWS;
/// Lanes in a warp.
constexpr int WARP = 32;

static_assert(TILE % BLOCK_ROWS == 0, "every thread must move the same number of elements");
static_assert(TILE * BLOCK_ROWS <= 1024, "a block has at most 1024 threads");
static_assert(TILE % WARP == 0, "a warp must lie within one row of the block");
static_assert((TILE & (TILE - 1)) == 0, "the XOR swizzle needs a power-of-two tile");

/// The tile row thread row `ty` handles on step `step` (0 .. STEPS-1).
__host__ __device__ constexpr int tile_row(int ty, int step) { return ty + step * BLOCK_ROWS; }
// [end]

// [layouts]
// The three ways to place the tile in shared memory, named for TILE = 32.

/// Row-major, rows of TILE floats: element (row, col) is float row * TILE + col.
/// Two elements of a column are TILE floats apart, a whole number of trips
/// round the 32 banks, so a column sits in one bank.
__host__ __device__ constexpr int index_32x32(int row, int col) { return row * TILE + col; }

/// Rows padded to TILE + 1 floats (the last float of a row is never used), so
/// each row starts one bank further on than the row above it.
__host__ __device__ constexpr int index_32x33(int row, int col) { return row * (TILE + 1) + col; }

/// Rows of TILE floats, but element (row, col) sits in slot col ^ row of its
/// row. For a fixed row, col -> col ^ row is a permutation of 0 .. TILE-1, so
/// the tile still fits in TILE * TILE floats; for a fixed col, row -> col ^ row
/// gives every row a different slot, so a column lands in different banks.
__host__ __device__ constexpr int index_swizzled(int row, int col) {
  return row * TILE + (col ^ row);
}
// [end]

// [layout-structs]
/// A shared-memory layout of the tile: the floats it occupies and where
/// element (row, col) lives. The tiled kernel takes one as its template
/// parameter; nothing else differs between the tiled variants.
struct Layout32x32 {
  static constexpr int kFloats = TILE * TILE;
  __host__ __device__ static constexpr int index(int row, int col) { return index_32x32(row, col); }
};
struct Layout32x33 {
  static constexpr int kFloats = TILE * (TILE + 1);
  __host__ __device__ static constexpr int index(int row, int col) { return index_32x33(row, col); }
};
struct LayoutSwizzled {
  static constexpr int kFloats = TILE * TILE;
  __host__ __device__ static constexpr int index(int row, int col) {
    return index_swizzled(row, col);
  }
};
// [end]

// [slots]
/// The shared-memory slot thread (tx, ty) writes on step `step`: it stores the
/// element it read from `in`, which belongs in row tile_row(ty, step),
/// column tx of the tile. A warp (fixed ty, tx = lane) writes along a row.
template <typename Layout>
__host__ __device__ constexpr int write_slot(int tx, int ty, int step) {
  return Layout::index(tile_row(ty, step), tx);
}

/// The slot thread (tx, ty) reads on step `step`: the element it stores into
/// `out` is row tx, column tile_row(ty, step) of the tile. A warp (fixed ty,
/// tx = lane) reads down a column: this is the access whose banks matter.
template <typename Layout>
__host__ __device__ constexpr int read_slot(int tx, int ty, int step) {
  return Layout::index(tx, tile_row(ty, step));
}
// [end]

// [copy]
/// @brief out = in for a rows x cols row-major matrix, with the launch shape
/// of the transposes: the baseline a transpose can at best match.
///
/// Block (bx, by) copies the TILE x TILE tile whose top-left element is
/// (by * TILE, bx * TILE); thread (tx, ty) copies column tx of rows
/// tile_row(ty, 0 .. STEPS-1). A warp reads and writes TILE consecutive floats.
///
/// @pre block = (TILE, BLOCK_ROWS), grid = (ceil(cols / TILE), ceil(rows / TILE)).
__global__ void copy_tiles(int rows, int cols, const float* __restrict__ in,
                           float* __restrict__ out) {
  const int col = blockIdx.x * TILE + threadIdx.x;
  for (int step = 0; step < STEPS; ++step) {
    const int row = blockIdx.y * TILE + tile_row(threadIdx.y, step);
    if (row < rows && col < cols) out[row * cols + col] = in[row * cols + col];
  }
}
// [end]

// [naive]
/// @brief out = transpose(in) straight from global memory.
///
/// in is rows x cols and out is cols x rows, both row-major. On each step,
/// thread (tx, ty) of block (bx, by) moves in[row][col] to out[col][row], with
///   row = by * TILE + tile_row(ty, step),  col = bx * TILE + tx.
/// The lanes of a warp read consecutive floats of one row of `in` (coalesced)
/// but write one float in each of 32 rows of `out`, `rows` floats apart (not
/// coalesced).
///
/// @pre block = (TILE, BLOCK_ROWS), grid = (ceil(cols / TILE), ceil(rows / TILE)).
__global__ void transpose_naive(int rows, int cols, const float* __restrict__ in,
                                float* __restrict__ out) {
  const int col = blockIdx.x * TILE + threadIdx.x;
  for (int step = 0; step < STEPS; ++step) {
    const int row = blockIdx.y * TILE + tile_row(threadIdx.y, step);
    if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];
  }
}
// [end]

// [tiled]
/// @brief out = transpose(in) through a shared-memory tile.
///
/// in is rows x cols and out is cols x rows, both row-major. Block (bx, by)
/// reads the TILE x TILE tile of `in` at rows by * TILE.., columns bx * TILE..
/// row by row (coalesced) into shared memory, waits for the whole block, then
/// writes it to `out` at rows bx * TILE.., columns by * TILE.., again row by
/// row (coalesced). A row of `out` is a column of the tile, so each warp reads
/// the tile down a column; how many banks that column spans is set by the
/// layout alone.
///
/// @tparam Layout  Layout32x32, Layout32x33 or LayoutSwizzled: the tile's size
///                 in floats and its index function.
/// @pre block = (TILE, BLOCK_ROWS), grid = (ceil(cols / TILE), ceil(rows / TILE)).
template <typename Layout>
__global__ void transpose_tiled(int rows, int cols, const float* __restrict__ in,
                                float* __restrict__ out) {
  __shared__ float tile[Layout::kFloats];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int first_row = blockIdx.y * TILE;  // the block's tile: rows of `in` from here
  const int first_col = blockIdx.x * TILE;  // and columns of `in` from here

  // Row tile_row(ty, step) of the tile, from one row of `in`.
  for (int step = 0; step < STEPS; ++step) {
    const int row = first_row + tile_row(ty, step);
    const int col = first_col + tx;
    if (row < rows && col < cols) tile[write_slot<Layout>(tx, ty, step)] = in[row * cols + col];
  }
  // A thread is about to read a column that other warps wrote.
  __syncthreads();
  // Row first_col + tile_row(ty, step) of `out` is that column of the tile.
  for (int step = 0; step < STEPS; ++step) {
    const int row = first_col + tile_row(ty, step);  // a row of out, a column of in
    const int col = first_row + tx;                  // a column of out, a row of in
    if (row < cols && col < rows) out[row * rows + col] = tile[read_slot<Layout>(tx, ty, step)];
  }
}
// [end]

// [launch]
/// The grid of every variant: one block per TILE x TILE tile of `in`.
inline dim3 grid_for(int rows, int cols) {
  return dim3(ladder::ceil_div(cols, TILE), ladder::ceil_div(rows, TILE));
}

/// Enqueues one variant on `stream`; in is rows x cols, out as the variant needs.
using LaunchFn = void (*)(int rows, int cols, const float* in, float* out, cudaStream_t stream);

inline void launch_copy(int rows, int cols, const float* in, float* out, cudaStream_t stream) {
  copy_tiles<<<grid_for(rows, cols), dim3(TILE, BLOCK_ROWS), 0, stream>>>(rows, cols, in, out);
}

inline void launch_naive(int rows, int cols, const float* in, float* out, cudaStream_t stream) {
  transpose_naive<<<grid_for(rows, cols), dim3(TILE, BLOCK_ROWS), 0, stream>>>(rows, cols, in, out);
}

template <typename Layout>
void launch_tiled(int rows, int cols, const float* in, float* out, cudaStream_t stream) {
  transpose_tiled<Layout>
      <<<grid_for(rows, cols), dim3(TILE, BLOCK_ROWS), 0, stream>>>(rows, cols, in, out);
}

/// One variant of the benchmark.
struct Variant {
  const char* name;  ///< as on the command line and in the JSON
  bool transposes;   ///< false for the copy, whose output must equal its input
  LaunchFn launch;
};

/// Every variant, in the order they are run and reported.
inline constexpr Variant kVariants[] = {
    {"copy", false, launch_copy},
    {"naive", true, launch_naive},
    {"tiled_32x32", true, launch_tiled<Layout32x32>},
    {"tiled_32x33", true, launch_tiled<Layout32x33>},
    {"tiled_swizzled", true, launch_tiled<LayoutSwizzled>},
};
inline constexpr int kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]);
// [end]

// [warp-addresses]
/// Byte offsets into the tile of one warp's two shared-memory accesses.
struct WarpAddresses {
  std::array<std::uint32_t, WARP> write{};  ///< the store into the tile (STS)
  std::array<std::uint32_t, WARP> read{};   ///< the load from the tile (LDS)
};

/// @brief The shared-memory byte addresses, lane by lane, of warp `warp` of a
/// tiled block on step `step`, computed by the slot functions the kernel calls.
///
/// Threads are numbered tx + TILE * ty within a block and a warp is 32
/// consecutive numbers, so lane `lane` of warp `warp` is thread number
/// WARP * warp + lane. Addresses are offsets from the tile's first byte (the
/// tile is the kernel's only shared variable); adding the same offset to every
/// lane shifts every bank by the same amount and changes no conflict.
///
/// @pre 0 <= warp < TILE * BLOCK_ROWS / WARP, 0 <= step < STEPS.
template <typename Layout>
constexpr WarpAddresses warp_addresses(int warp, int step) {
  WarpAddresses a;
  for (int lane = 0; lane < WARP; ++lane) {
    const int thread = WARP * warp + lane;
    const int tx = thread % TILE;
    const int ty = thread / TILE;
    a.write[lane] = static_cast<std::uint32_t>(write_slot<Layout>(tx, ty, step) * sizeof(float));
    a.read[lane] = static_cast<std::uint32_t>(read_slot<Layout>(tx, ty, step) * sizeof(float));
  }
  return a;
}

/// Warps in a tiled block.
constexpr int kWarpsPerBlock = TILE * BLOCK_ROWS / WARP;
// [end]

// [reference]
/// The host reference: in is rows x cols, the result cols x rows. Walked in
/// square blocks so that both sides stay in the CPU's cache.
inline std::vector<float> host_transpose(const std::vector<float>& in, int rows, int cols) {
  constexpr int kBlock = 64;
  std::vector<float> out(in.size());
  for (int r0 = 0; r0 < rows; r0 += kBlock) {
    for (int c0 = 0; c0 < cols; c0 += kBlock) {
      for (int r = r0; r < rows && r < r0 + kBlock; ++r) {
        for (int c = c0; c < cols && c < c0 + kBlock; ++c) {
          out[size_t(c) * rows + r] = in[size_t(r) * cols + c];
        }
      }
    }
  }
  return out;
}

/// Elements whose bits differ: a transpose moves bits, so equal means bitwise
/// equal (a NaN left by the poison never matches a finite input).
inline size_t count_mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bad += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
  }
  return bad;
}
// [end]

// ---------------------------------------------------------------------------
// The benchmark around the kernels: command line, checks, timing, report.

/// The largest side accepted: 16384 x 16384 floats (2^28) keeps every index
/// of the kernels' 32-bit arithmetic below 2^31.
constexpr int kMaxSide = 16384;

struct Shape {
  int rows;
  int cols;
};

struct Options {
  std::vector<Shape> sizes{{1024, 1024},   {2048, 2048}, {4096, 4096}, {8192, 8192},
                           {16384, 16384}, {8192, 4096}, {4096, 8192}, {1000, 3000}};
  std::vector<int> variants;  ///< indices into kVariants; empty means all
  bool check_only = false;
  bool banks = false;
  bool help = false;
  std::string json_path;
  int device = 0;
  unsigned seed = 20261130u;
};

constexpr int kTrials = 7;         ///< timed trials; the median is reported
constexpr int kReps = 20;          ///< launches per trial
constexpr double kWarmupMs = 300;  ///< minimum warm-up before timing

inline const char* usage() {
  return "usage: transpose [--sizes S [S ...]] [--variants V [V ...]] [--check-only] [--banks]\n"
         "                 [--json FILE] [--device I] [--seed N]\n"
         "  S is N (square) or ROWSxCOLS, each side 1 to 16384;\n"
         "    default 1024 2048 4096 8192 16384 8192x4096 4096x8192 1000x3000.\n"
         "  V is one of copy naive tiled_32x32 tiled_32x33 tiled_swizzled; default all.\n"
         "  --check-only  check every variant bit for bit against a host transpose; no timing.\n"
         "  --banks       print the bank model's view of one warp of each tiled layout\n"
         "                (CPU only, no GPU needed).\n"
         "Exit codes: 0 correct, 1 incorrect or a CUDA error, 2 bad input, 77 no GPU.\n";
}

/// Parses "N" or "ROWSxCOLS".
inline bool parse_shape(const std::string& text, Shape* out) {
  const size_t x = text.find_first_of("xX");
  const std::string first = text.substr(0, x);
  const std::string second = x == std::string::npos ? first : text.substr(x + 1);
  long rows = 0, cols = 0;
  if (!ladder::parse_int(first, 1, kMaxSide, &rows) ||
      !ladder::parse_int(second, 1, kMaxSide, &cols)) {
    return false;
  }
  *out = Shape{static_cast<int>(rows), static_cast<int>(cols)};
  return true;
}

inline int variant_index(const std::string& name) {
  for (int i = 0; i < kVariantCount; ++i) {
    if (name == kVariants[i].name) return i;
  }
  return -1;
}

/// Parses argv into `o` with the harness's parser; returns one sentence
/// saying what is wrong, or "".
inline std::string parse_options(int argc, const char* const* argv, Options* o) {
  bool sizes_given = false;
  ladder::ArgParser parser;
  parser.flag("--help", &o->help)
      .flag("-h", &o->help)
      .flag("--check-only", &o->check_only)
      .flag("--banks", &o->banks)
      .list("--sizes",
            [&](const std::string& text) {
              if (!sizes_given) o->sizes.clear();  // the first size replaces the defaults
              sizes_given = true;
              Shape s{};
              if (!parse_shape(text, &s)) {
                return "bad size '" + text + "': expected N or ROWSxCOLS, each side 1 to " +
                       std::to_string(kMaxSide);
              }
              o->sizes.push_back(s);
              return std::string();
            })
      .list("--variants",
            [&](const std::string& name) {
              const int index = variant_index(name);
              if (index < 0) {
                return "unknown variant '" + name +
                       "': expected copy, naive, tiled_32x32, tiled_32x33 or tiled_swizzled";
              }
              // A name given twice is run once.
              if (std::find(o->variants.begin(), o->variants.end(), index) == o->variants.end()) {
                o->variants.push_back(index);
              }
              return std::string();
            })
      .value("--json", ladder::text_into(&o->json_path))
      .value("--device", ladder::integer_into("--device", 0, &o->device))
      .value("--seed", ladder::integer_into("--seed", 0, &o->seed));
  const std::string error = parser.parse(argc, argv);
  if (o->variants.empty()) {
    for (int i = 0; i < kVariantCount; ++i) o->variants.push_back(i);
  }
  return error;
}

/// "N" when every warp instruction of an access takes N wavefronts, else "N to M".
inline std::string wavefront_range(int fewest, int most) {
  return fewest == most ? std::to_string(most)
                        : std::to_string(fewest) + " to " + std::to_string(most);
}

/// Prints, for one tiled layout, the bank model's verdict on its tile write
/// and tile read over every warp and step of a block, and the lane-by-lane
/// addresses and banks of warp `warp` on step `step`.
template <typename Layout>
void print_banks(const char* name, int warp, int step) {
  int write_fewest = WARP, write_most = 0, read_fewest = WARP, read_most = 0;
  for (int w = 0; w < kWarpsPerBlock; ++w) {
    for (int s = 0; s < STEPS; ++s) {
      const WarpAddresses a = warp_addresses<Layout>(w, s);
      const int write = ladder::bank::analyze(a.write).wavefronts;
      const int read = ladder::bank::analyze(a.read).wavefronts;
      write_fewest = std::min(write_fewest, write);
      write_most = std::max(write_most, write);
      read_fewest = std::min(read_fewest, read);
      read_most = std::max(read_most, read);
    }
  }
  std::printf("%s (%d floats of shared memory per block)\n", name, Layout::kFloats);
  std::printf("  tile write (STS): %s wavefront(s) per warp instruction (1 is conflict-free)\n",
              wavefront_range(write_fewest, write_most).c_str());
  std::printf("  tile read  (LDS): %s wavefront(s) per warp instruction\n",
              wavefront_range(read_fewest, read_most).c_str());
  const WarpAddresses a = warp_addresses<Layout>(warp, step);
  // The warp's threadIdx.y, and so the tile row it writes and the column it reads.
  const int line = tile_row(WARP * warp / TILE, step);
  std::printf("  warp %d, step %d (writes tile row %d, reads tile column %d):\n", warp, step, line,
              line);
  std::printf("  lane   write address  bank   read address  bank\n");
  for (int lane = 0; lane < WARP; ++lane) {
    std::printf("  %4d   %13u  %4d   %12u  %4d\n", lane, a.write[lane],
                ladder::bank::bank_of(a.write[lane]), a.read[lane],
                ladder::bank::bank_of(a.read[lane]));
  }
  std::printf("\n");
}

/// What was learned about one variant at one size.
struct VariantResult {
  int variant = 0;
  bool correct = false;
  size_t mismatches = 0;
  ladder::Summary ms;
};

/// Fills the input with fresh values, poisons the output, runs the variant
/// once and compares every element, bit for bit, with the host's answer.
inline VariantResult check_variant(int variant, const Shape& s, uint32_t seed,
                                   const ladder::DeviceBuffer& in, const ladder::DeviceBuffer& out,
                                   cudaStream_t stream) {
  ladder::fill(in, seed, stream);
  ladder::poison(out, stream);
  kVariants[variant].launch(s.rows, s.cols, in.get(), out.get(), stream);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> input = in.to_host();
  const std::vector<float> want =
      kVariants[variant].transposes ? host_transpose(input, s.rows, s.cols) : input;
  VariantResult r;
  r.variant = variant;
  r.mismatches = count_mismatches(out.to_host(), want);
  r.correct = r.mismatches == 0;
  return r;
}

/// GB/s of a pass that reads and writes `bytes` bytes each way in `ms`.
inline double gbs(double bytes, double ms) { return ms > 0 ? 2.0 * bytes / (ms * 1e-3) / 1e9 : 0; }

inline std::string shape_name(const Shape& s) {
  return std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

/// Times every checked variant and cudaMemcpy of the same bytes at one size:
/// at least kWarmupMs of warm-up, then kTrials trials of kReps launches.
/// Fills each result's `ms` and returns cudaMemcpy's times.
inline ladder::Summary time_size(const Shape& s, const ladder::DeviceBuffer& in,
                                 const ladder::DeviceBuffer& out,
                                 std::vector<VariantResult>* results, cudaStream_t stream) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  auto run_variant = [&](int v) {
    kVariants[v].launch(s.rows, s.cols, in.get(), out.get(), stream);
  };
  auto run_memcpy = [&] {
    CUDA_CHECK(cudaMemcpyAsync(out.get(), in.get(), in.size() * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream));
  };
  // Milliseconds per launch of `run`, averaged over `reps` launches.
  auto ms_per_launch = [&](auto&& run, int reps) {
    return ladder::time_launches(run, reps, stream, start, stop);
  };
  // Warm up everything, in turn, until kWarmupMs has passed: clocks ramp up
  // and first-launch costs are paid before anything is timed.
  double warm_ms = 0;
  while (warm_ms < kWarmupMs) {
    for (const VariantResult& r : *results) {
      warm_ms += ms_per_launch([&] { run_variant(r.variant); }, 1);
    }
    warm_ms += ms_per_launch(run_memcpy, 1);
  }
  // Interleaved: each trial times every variant and then cudaMemcpy, so
  // every ratio to cudaMemcpy comes from the same minutes of the same run.
  std::vector<std::vector<double>> samples(results->size());
  std::vector<double> memcpy_samples;
  for (int t = 0; t < kTrials; ++t) {
    for (size_t i = 0; i < results->size(); ++i) {
      const int v = (*results)[i].variant;
      samples[i].push_back(ms_per_launch([&] { run_variant(v); }, kReps));
    }
    memcpy_samples.push_back(ms_per_launch(run_memcpy, kReps));
  }
  for (size_t i = 0; i < results->size(); ++i) (*results)[i].ms = ladder::summarize(samples[i]);
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return ladder::summarize(memcpy_samples);
}

/// Prints one size's table and returns its JSON. `memcpy_ms` is null when
/// nothing was timed (--check-only).
inline ladder::Json report_size(const Shape& s, const std::vector<VariantResult>& results,
                                const ladder::Summary* memcpy_ms) {
  const double bytes = double(s.rows) * s.cols * sizeof(float);
  if (bytes >= (1 << 20)) {
    std::printf("%s (%.1f MiB each way)\n", shape_name(s).c_str(), bytes / (1 << 20));
  } else {
    std::printf("%s (%.1f KiB each way)\n", shape_name(s).c_str(), bytes / (1 << 10));
  }
  std::printf("  %-15s %-30s %10s %10s  %s\n", "variant", "time ms (median [min, max])", "GB/s",
              "% memcpy", "verdict");
  ladder::Json variants = ladder::Json::object();
  for (const VariantResult& r : results) {
    ladder::Json j = ladder::Json::object();
    char time[64] = "-", rate[32] = "-", pct[32] = "-", verdict[64] = "correct";
    if (memcpy_ms != nullptr) {
      const double rate_gbs = gbs(bytes, r.ms.median);
      const double pct_memcpy = 100.0 * memcpy_ms->median / r.ms.median;
      j.set("time_ms", ladder::summary_json(r.ms))
          .set("gbs", rate_gbs)
          .set("pct_memcpy", pct_memcpy);
      std::snprintf(time, sizeof time, "%.4f [%.4f, %.4f]", r.ms.median, r.ms.min, r.ms.max);
      std::snprintf(rate, sizeof rate, "%.1f", rate_gbs);
      std::snprintf(pct, sizeof pct, "%.1f%%", pct_memcpy);
    }
    j.set("correct", r.correct);
    if (!r.correct) {
      j.set("mismatches", static_cast<double>(r.mismatches));
      std::snprintf(verdict, sizeof verdict, "INCORRECT (%zu elements differ)", r.mismatches);
    }
    variants.set(kVariants[r.variant].name, std::move(j));
    std::printf("  %-15s %-30s %10s %10s  %s\n", kVariants[r.variant].name, time, rate, pct,
                verdict);
  }
  ladder::Json size = ladder::Json::object();
  size.set("rows", s.rows).set("cols", s.cols).set("variants", std::move(variants));
  if (memcpy_ms != nullptr) {
    char time[64];
    std::snprintf(time, sizeof time, "%.4f [%.4f, %.4f]", memcpy_ms->median, memcpy_ms->min,
                  memcpy_ms->max);
    std::printf("  %-15s %-30s %10.1f %10s\n", "cudaMemcpy", time, gbs(bytes, memcpy_ms->median),
                "100.0%");
    size.set("memcpy", ladder::Json::object()
                           .set("time_ms", ladder::summary_json(*memcpy_ms))
                           .set("gbs", gbs(bytes, memcpy_ms->median)));
  }
  std::fflush(stdout);
  return size;
}

/// Checks every chosen variant at one size, then (unless check_only) times
/// them. Returns this size's JSON; clears `all_correct` when a variant fails.
inline ladder::Json run_size(const Options& o, int size_index, cudaStream_t stream,
                             bool* all_correct) {
  const Shape s = o.sizes[size_index];
  ladder::DeviceBuffer in(size_t(s.rows) * s.cols), out(size_t(s.rows) * s.cols);
  std::vector<VariantResult> results;
  for (int v : o.variants) {
    const uint32_t seed = ladder::check_seed(o.seed, size_index, v, 0);
    results.push_back(check_variant(v, s, seed, in, out, stream));
    *all_correct = *all_correct && results.back().correct;
  }
  if (o.check_only) return report_size(s, results, nullptr);
  const ladder::Summary memcpy_ms = time_size(s, in, out, &results, stream);
  return report_size(s, results, &memcpy_ms);
}

/// The whole program: returns the process exit code.
inline int run(int argc, char** argv) {
  Options o;
  const std::string error = parse_options(argc, argv, &o);
  if (!error.empty()) {
    std::fprintf(stderr, "transpose: %s\n", error.c_str());
    return 2;
  }
  if (o.help) {
    std::printf("%s", usage());
    return 0;
  }
  if (o.banks) {
    // Warp 5, step 0 reads column 5 of the tile: a column where the three
    // layouts all differ (column 0 of the swizzled tile is the padded one's).
    print_banks<Layout32x32>("tiled_32x32", 5, 0);
    print_banks<Layout32x33>("tiled_32x33", 5, 0);
    print_banks<LayoutSwizzled>("tiled_swizzled", 5, 0);
    return 0;
  }

  std::vector<ladder::MemoryNeed> needs;
  for (const Shape& s : o.sizes) {
    needs.push_back({shape_name(s), 2.0 * sizeof(float) * s.rows * s.cols});  // input and output
  }
  if (const int refused = ladder::open_device("transpose", o.device, needs)) return refused;

  ladder::Json config = ladder::Json::object();
  config.set("trials", kTrials)
      .set("reps", kReps)
      .set("warmup_ms", kWarmupMs)
      .set("seed", static_cast<double>(o.seed))
      .set("check_only", o.check_only);
  ladder::Json provenance = ladder::provenance(o.device, __FILE__);
  provenance.set("config", std::move(config));

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
  std::printf("transpose on %s%s; GB/s counts bytes read plus bytes written\n", prop.name,
              o.check_only ? ", check only" : "");
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  bool all_correct = true;
  ladder::Json sizes = ladder::Json::array();
  for (int i = 0; i < static_cast<int>(o.sizes.size()); ++i) {
    sizes.push(run_size(o, i, stream, &all_correct));
  }
  CUDA_CHECK(cudaStreamDestroy(stream));

  if (!o.json_path.empty()) {
    ladder::Json report = ladder::Json::object();
    report.set("schema", 1)
        .set("program", "10-padding/exercise/transpose")
        .set("provenance", std::move(provenance))
        .set("sizes", std::move(sizes));
    std::ofstream file(o.json_path);
    file << report.dump() << "\n";
    if (!file) {
      std::fprintf(stderr, "transpose: could not write %s\n", o.json_path.c_str());
      return 1;
    }
  }
  return all_correct ? 0 : 1;
}

}  // namespace transpose
