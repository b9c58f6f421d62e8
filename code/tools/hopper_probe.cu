// hopper_probe: checks, on a GPU of compute capability 9.0, the three
// mechanisms a Hopper GEMM stands on, each against what can be derived for it
// on paper. It is the ground for Part II's Hopper chapter (16-wgmma), whose
// header gives it the primitives and the GEMM kernel; nothing in the book
// reads the probe itself.
//
//   tma       A tensor-map copy (TMA) of a 64 x 32 tile of floats with the
//             128-byte swizzle. Each row of the tile is 128 bytes, eight
//             16-byte pieces. The derivation: piece p of row r lands at piece
//             p ^ (r % 8) of that row. The check reads the tile back from
//             shared memory and compares every float's place.
//   wgmma-ss  One warpgroup computes D = A * B^T, 64 x 64 x 32, with four
//             wgmma.m64n64k8 on TF32, A and B read by the tensor cores from
//             the swizzled tiles through shared-memory descriptors.
//   wgmma-rs  The same product with A's fragments in registers, loaded by each
//             lane from global memory in the layout of mma.sync.m16n8k8's A.
//   tf32-bits What wgmma does with an FP32 operand's low 13 bits (drops them,
//             rounds, or keeps them): reported, for 3xTF32's split, not checked.
//   gemm      Chapter 16's kernel, C = alpha A B + beta C on row-major A, B and
//             C, any M and N, K and N multiples of 4: as pipeline, computing
//             C^T = B^T A^T, with A's tile through a descriptor and B^T's
//             fragments in registers, loaded from B's swizzled tile. At 256^3
//             and 200 x 260 x 36.
//   pipeline  A whole tile loop at 256^3: a producer warpgroup copies each
//             K-step's tiles with TMA into four stages, two consumer
//             warpgroups multiply them with wgmma.m64n128k8, and two mbarriers
//             per stage hand the buffers back and forth.
//
// The inputs are small integers, exact in TF32, whose products and sums are
// exact in FP32, so each product must equal the CPU's exactly.
//
// Usage: hopper_probe [--map] [--time N]
//   --map     also prints the measured swizzle, one line per row: the piece
//             where each of the row's eight pieces landed.
//   --time N  also times the pipeline kernel at N^3 (N a multiple of 128):
//             a first look for development, not a number for the book.
// Exit: 0 when every check holds, 1 when one fails, 2 for a bad command line,
// 77 without an sm_90 GPU.
//
// Build alone (wgmma needs the sm_90a target):
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I../.. -I../include \
//        hopper_probe.cu -lcublas -o hopper_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "chapters/16-wgmma/kernel.cuh"  // mbarrier, TMA and wgmma; the GEMM
#include "cli.hpp"

namespace {

using namespace ch16;  // the primitives, the maps and the GEMM kernel

constexpr int kRows = 64;  // rows of each tile: A is 64 x 32, B^T is 64 x 32
constexpr int kK = 32;     // floats per row: 128 bytes, one swizzle span
constexpr int kPiece = 4;  // floats per 16-byte piece
constexpr int kTileFloats = kRows * kK;
constexpr int kThreads = 128;  // one warpgroup

#define PROBE_CHECK(call)                                                              \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "hopper_probe: %s: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// ---------------------------------------------------------------------------
// Device side: mbarrier, TMA, wgmma, each one PTX instruction.
// ---------------------------------------------------------------------------

#define PROBE_D32(d)                                                                              \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

#define PROBE_D32_TEXT                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
  "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

// d += A * B^T for one step of 8 along K, A and B from shared memory. With
// accumulate = 0 the product overwrites d.
__device__ void wgmma_m64n64k8_ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                  int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred keep;\n"
      "setp.ne.b32 keep, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " PROBE_D32_TEXT
      ", %32, %33, keep, 1, 1;\n"
      "}\n"
      : PROBE_D32(d)
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// The same with A's fragment in four registers of each lane.
__device__ void wgmma_m64n64k8_rs(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b,
                                  int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred keep;\n"
      "setp.ne.b32 keep, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " PROBE_D32_TEXT
      ", {%32, %33, %34, %35}, %36, keep, 1, 1;\n"
      "}\n"
      : PROBE_D32(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

// Writes a warpgroup's m64n64 accumulators to D (64 x 64, row-major). Warp w
// holds rows 16w to 16w + 15; lane (g, t) = (lane / 4, lane % 4) holds, for
// each 8 columns j, the pairs (g, 8j + 2t) and (g + 8, 8j + 2t), two columns
// each: the layout of mma.sync's C fragment, repeated across N.
__device__ void store_accumulators(const float (&d)[32], float* D) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);
  for (int j = 0; j < 8; ++j) {
    D[row * 64 + 8 * j + col] = d[4 * j + 0];
    D[row * 64 + 8 * j + col + 1] = d[4 * j + 1];
    D[(row + 8) * 64 + 8 * j + col] = d[4 * j + 2];
    D[(row + 8) * 64 + 8 * j + col + 1] = d[4 * j + 3];
  }
}

// tma and wgmma-ss: copies A and B^T with the 128-byte swizzle, writes the
// copied A tile back as it lies in shared memory, and multiplies.
__global__ void __launch_bounds__(kThreads)
    probe_ss(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
             float* a_as_stored, float* D) {
  __shared__ __align__(1024) float As[kTileFloats];
  __shared__ __align__(1024) float Bs[kTileFloats];
  __shared__ uint64_t full;
  if (threadIdx.x == 0) {
    mbarrier_init(&full, 1);
    mbarrier_expect_bytes(&full, 2 * kTileFloats * static_cast<int>(sizeof(float)));
    tma_load_2d(As, &map_a, 0, 0, &full);
    tma_load_2d(Bs, &map_b, 0, 0, &full);
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  mbarrier_wait(&full, 0);

  for (int i = threadIdx.x; i < kTileFloats; i += kThreads) a_as_stored[i] = As[i];

  float d[32] = {};
  fence_accumulators(d);
  wgmma_fence();
  for (int k = 0; k < kK / 8; ++k) {
    // A step of 8 along K is 32 bytes further along each row: 2 in the
    // descriptor's units of 16 bytes. The swizzle is applied to the address
    // the tensor cores form, so the start address moves as if unswizzled.
    wgmma_m64n64k8_ss(d, descriptor_128b(As) + 2 * k, descriptor_128b(Bs) + 2 * k, k > 0);
  }
  wgmma_commit();
  wgmma_wait_all();
  fence_accumulators(d);
  store_accumulators(d, D);
}

// wgmma-rs: B^T through TMA as above, A's fragments straight from global.
__global__ void __launch_bounds__(kThreads)
    probe_rs(const __grid_constant__ CUtensorMap map_b, const float* A, float* D) {
  __shared__ __align__(1024) float Bs[kTileFloats];
  __shared__ uint64_t full;
  if (threadIdx.x == 0) {
    mbarrier_init(&full, 1);
    mbarrier_expect_bytes(&full, kTileFloats * static_cast<int>(sizeof(float)));
    tma_load_2d(Bs, &map_b, 0, 0, &full);
  }
  __syncthreads();
  mbarrier_wait(&full, 0);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4, row = 16 * warp + g;
  // The fragments of all four steps are loaded before the first wgmma: the
  // tensor cores read these registers asynchronously, so they must not be
  // written between wgmma.fence and the wait.
  uint32_t a[kK / 8][4];
  for (int k = 0; k < kK / 8; ++k) {
    const int col = 8 * k + t;
    a[k][0] = __float_as_uint(A[row * kK + col]);
    a[k][1] = __float_as_uint(A[(row + 8) * kK + col]);
    a[k][2] = __float_as_uint(A[row * kK + col + 4]);
    a[k][3] = __float_as_uint(A[(row + 8) * kK + col + 4]);
  }
  float d[32] = {};
  fence_accumulators(d);
  wgmma_fence();
  for (int k = 0; k < kK / 8; ++k) wgmma_m64n64k8_rs(d, a[k], descriptor_128b(Bs) + 2 * k, k > 0);
  wgmma_commit();
  wgmma_wait_all();
  fence_accumulators(d);
  store_accumulators(d, D);
}

// ---------------------------------------------------------------------------
// pipeline: a whole GEMM tile loop, the shape a Hopper kernel takes. A block
// of three warpgroups computes a 128 x 128 tile of C = A * B^T (A is M x K,
// B^T is N x K, both K-major). Warpgroup 0 is the producer: one of its
// threads copies each K-step's tiles with TMA into one of STAGES buffers.
// Warpgroups 1 and 2 are the consumers: each multiplies 64 rows of the tile
// with wgmma.m64n128k8. Two mbarriers per stage hand the buffers over:
// "full" completes when the copies have landed (the producer's arrival and
// the bytes), "empty" when all 256 consumer threads have finished reading it.
// ---------------------------------------------------------------------------

// Chapter 16's block shape, stages and barriers (init_stage_barriers()), on
// its truncating tiling: wgmma reads A as it is, with no pass over A first.
constexpr int kBM = Truncated::BM, kBN = BN, kBK = BK, kStages = Truncated::STAGES;
constexpr int kStageFloats = (kBM + kBN) * kBK;
constexpr int kPipelineThreads = NUM_THREADS;
constexpr int kPipelineSmem = kStages * kStageFloats * static_cast<int>(sizeof(float)) + 1024;

// d += A * B^T for one step of 8 along K, m64n128k8, both from shared memory.
__device__ void wgmma_m64n128k8_ss(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                   int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred keep;\n"
      "setp.ne.b32 keep, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " LADDER_D64_TEXT
      ", %64, %65, keep, 1, 1;\n"
      "}\n"
      : LADDER_D64(d)
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__global__ void __launch_bounds__(kPipelineThreads, 1)
    probe_pipeline(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_bt, float* C, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  float* tiles = aligned_tiles(smem_raw);
  __shared__ uint64_t full[kStages], empty[kStages];
  const int warpgroup = threadIdx.x / 128;
  const int tile_m = blockIdx.y * kBM, tile_n = blockIdx.x * kBN;
  const int steps = K / kBK;

  init_stage_barriers<Truncated>(full, empty, nullptr);  // STAGES, no "ready"

  if (warpgroup == 0) {
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < steps; ++kt) {
        const int s = kt % kStages, round = kt / kStages;
        // A fresh barrier counts as having completed the phase before its
        // first, so the first round's wait on parity 1 returns at once.
        mbarrier_wait(&empty[s], (round + 1) & 1);
        float* As = tiles + s * kStageFloats;
        float* Bs = As + kBM * kBK;
        mbarrier_expect_bytes(&full[s], kStageFloats * static_cast<int>(sizeof(float)));
        tma_load_2d(As, &map_a, kt * kBK, tile_m, &full[s]);
        tma_load_2d(Bs, &map_bt, kt * kBK, tile_n, &full[s]);
      }
    }
    return;
  }

  const int consumer = warpgroup - 1;  // rows 64 * consumer of the block tile
  float d[64] = {};
  for (int kt = 0; kt < steps; ++kt) {
    const int s = kt % kStages;
    mbarrier_wait(&full[s], (kt / kStages) & 1);
    const float* As = tiles + s * kStageFloats + consumer * 64 * kBK;
    const float* Bs = tiles + s * kStageFloats + kBM * kBK;
    fence_accumulators(d);
    wgmma_fence();
    for (int k = 0; k < kBK / 8; ++k)
      wgmma_m64n128k8_ss(d, descriptor_128b(As) + 2 * k, descriptor_128b(Bs) + 2 * k,
                         kt > 0 || k > 0);
    wgmma_commit();
    wgmma_wait_all();
    fence_accumulators(d);
    mbarrier_arrive(&empty[s]);  // after its own loads and wgmma
  }

  // The accumulators in C's layout: rows 16 * warp + g and + 8 of the
  // consumer's 64, columns 8j + 2t and + 1.
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int row = tile_m + consumer * 64 + 16 * warp + lane / 4;
  const int col = tile_n + 2 * (lane % 4);
  for (int j = 0; j < kBN / 8; ++j) {
    C[static_cast<size_t>(row) * N + col + 8 * j] = d[4 * j + 0];
    C[static_cast<size_t>(row) * N + col + 8 * j + 1] = d[4 * j + 1];
    C[static_cast<size_t>(row + 8) * N + col + 8 * j] = d[4 * j + 2];
    C[static_cast<size_t>(row + 8) * N + col + 8 * j + 1] = d[4 * j + 3];
  }
}

// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------

// Where the derivation puts float `column` of row `row` in the swizzled tile.
int swizzled_index(int row, int column) {
  const int piece = column / kPiece;
  return row * kK + ((piece ^ (row % 8)) * kPiece) + column % kPiece;
}

bool check_tma(const std::vector<float>& stored, bool print_map) {
  int wrong = 0;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kK; ++c)
      if (stored[swizzled_index(r, c)] != static_cast<float>(r * kK + c)) ++wrong;
  if (print_map) {
    // Each float of A holds its own row-major index, so where a piece landed
    // reads straight off the stored tile.
    for (int r = 0; r < 8; ++r) {
      std::printf("  row %d: piece p is stored at", r);
      for (int p = 0; p < kK / kPiece; ++p)
        for (int q = 0; q < kK / kPiece; ++q)
          if (stored[r * kK + q * kPiece] == static_cast<float>(r * kK + p * kPiece))
            std::printf(" %d", q);
      std::printf("\n");
    }
  }
  std::printf("tma       %s: %d of %d floats away from piece p ^ (row %% 8)\n",
              wrong ? "FAILED" : "ok", wrong, kTileFloats);
  return wrong == 0;
}

// What wgmma does with the low 13 bits of an FP32 operand it takes as TF32:
// every element of A is x = 1 + 3/4 of TF32's last place at 1 (2^-10), and
// every element of B^T is 1, so each element of D is 32 times what the
// tensor cores took x to be: 1 if they drop the low bits, 1 + 2^-10 if they
// round to nearest, x itself if they keep them. Reported, not checked: the
// PTX ISA promises only that TF32 operands already in TF32 form are exact.
void report_operand_rounding(const std::vector<float>& D) {
  const float x = 1.0f + 0.75f * 0x1p-10f;
  const char* seen = D[0] == 32.0f                       ? "drops the low 13 bits (truncates)"
                     : D[0] == 32.0f * (1.0f + 0x1p-10f) ? "rounds to nearest"
                     : D[0] == 32.0f * x                 ? "keeps every bit"
                                                         : "does something else";
  bool uniform = true;
  for (float v : D) uniform &= v == D[0];
  std::printf("tf32-bits  an FP32 operand's low bits: wgmma %s (D = %.9g%s)\n", seen,
              static_cast<double>(D[0]), uniform ? "" : ", not the same everywhere");
}

// D (n x n) against the CPU's exact product of A (n x K) and B^T (n x K).
bool check_product(const char* name, const std::vector<float>& D, const std::vector<float>& A,
                   const std::vector<float>& Bt, int n, int K) {
  int wrong = 0, first = -1;
  for (int m = 0; m < n; ++m)
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      for (int k = 0; k < K; ++k) sum += A[m * K + k] * Bt[j * K + k];
      if (D[m * n + j] != sum) {
        if (first < 0) first = m * n + j;
        ++wrong;
      }
    }
  std::printf("%-9s %s: %d of %d elements differ from the CPU's product (%d x %d x %d)", name,
              wrong ? "FAILED" : "ok", wrong, n * n, n, n, K);
  if (first >= 0) std::printf(" (the first at row %d, column %d)", first / n, first % n);
  std::printf("\n");
  return wrong == 0;
}

// pipeline: M = N = K = 256 checked against the CPU's exact product, and,
// with `time_size` > 0, timed at that size (square) with CUDA events.
bool check_pipeline(EncodeTiled encode, int time_size) {
  static const bool allowed = [] {
    PROBE_CHECK(cudaFuncSetAttribute(probe_pipeline, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     kPipelineSmem));
    return true;
  }();
  (void)allowed;
  auto run = [&](int n, const std::vector<float>& A, const std::vector<float>& Bt,
                 std::vector<float>* C, int repeats) {
    const size_t count = static_cast<size_t>(n) * n;
    float *dA, *dBt, *dC;
    PROBE_CHECK(cudaMalloc(&dA, count * sizeof(float)));
    PROBE_CHECK(cudaMalloc(&dBt, count * sizeof(float)));
    PROBE_CHECK(cudaMalloc(&dC, count * sizeof(float)));
    PROBE_CHECK(cudaMemcpy(dA, A.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    PROBE_CHECK(cudaMemcpy(dBt, Bt.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    const CUtensorMap map_a = row_major_map(encode, dA, n, n, kBM);
    const CUtensorMap map_bt = row_major_map(encode, dBt, n, n, kBN);
    const dim3 grid(n / kBN, n / kBM);
    cudaEvent_t start, stop;
    PROBE_CHECK(cudaEventCreate(&start));
    PROBE_CHECK(cudaEventCreate(&stop));
    probe_pipeline<<<grid, kPipelineThreads, kPipelineSmem>>>(map_a, map_bt, dC, n, n);
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaEventRecord(start));
    for (int r = 0; r < repeats; ++r)
      probe_pipeline<<<grid, kPipelineThreads, kPipelineSmem>>>(map_a, map_bt, dC, n, n);
    PROBE_CHECK(cudaEventRecord(stop));
    PROBE_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    PROBE_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (C) {
      C->resize(count);
      PROBE_CHECK(cudaMemcpy(C->data(), dC, count * sizeof(float), cudaMemcpyDeviceToHost));
    }
    cudaFree(dA);
    cudaFree(dBt);
    cudaFree(dC);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return repeats ? ms / repeats : 0.0f;
  };

  const int n = 256;
  std::vector<float> A(n * n), Bt(n * n), C;
  for (int i = 0; i < n * n; ++i) {
    A[i] = static_cast<float>((i * 5) % 9 - 4);
    Bt[i] = static_cast<float>((i * 7) % 9 - 4);
  }
  run(n, A, Bt, &C, 0);
  const bool ok = check_product("pipeline", C, A, Bt, n, n);

  if (time_size > 0) {
    const size_t count = static_cast<size_t>(time_size) * time_size;
    std::vector<float> big_a(count), big_bt(count);
    for (size_t i = 0; i < count; ++i) {
      big_a[i] = static_cast<float>(static_cast<int>(i * 5 % 9) - 4);
      big_bt[i] = static_cast<float>(static_cast<int>(i * 7 % 9) - 4);
    }
    const float ms = run(time_size, big_a, big_bt, nullptr, 20);
    std::printf(
        "pipeline  %d^3: %.3f ms, %.1f GFLOP/s (a probe's timing, not the measure command's)\n",
        time_size, ms, 2.0 * time_size * time_size * static_cast<double>(time_size) / ms / 1e6);
  }
  return ok;
}

// gemm: C = alpha * A * B + beta * C against the CPU at M x N x K, and, with
// `time_size` > 0, timed at that size (square). Inputs are small integers, so
// the CPU's result is exact and must be met exactly.
bool check_gemm(EncodeTiled encode, int M, int N, int K, int time_size) {
  static const bool allowed = [] {
    PROBE_CHECK(cudaFuncSetAttribute(sgemm_wgmma<Truncated>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     Truncated::SMEM_BYTES));
    return true;
  }();
  (void)allowed;
  const float alpha = 1.5f, beta = 0.5f;
  auto run = [&](int m, int n, int k, const std::vector<float>& A, const std::vector<float>& B,
                 std::vector<float>& C, int repeats) {
    float *dA, *dB, *dC;
    PROBE_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
    PROBE_CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
    PROBE_CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
    PROBE_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    PROBE_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
    PROBE_CHECK(cudaMemcpy(dC, C.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice));
    const CUtensorMap map_a = row_major_map(encode, dA, m, k, Truncated::BM);
    const CUtensorMap map_b = row_major_map(encode, dB, k, n, BK);
    // One block per tile, none cut into slices (so no workspace).
    const LastRound whole = uncut<Truncated>(m, n, k);
    const int tiles = whole.tiles;
    // TF32 reads no part of A: map_a stands in for its map.
    sgemm_wgmma<Truncated><<<tiles, NUM_THREADS, Truncated::SMEM_BYTES>>>(
        map_a, map_b, map_a, dA, dB, dC, m, n, k, alpha, beta, nullptr, whole);
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    float ms = 0;
    if (repeats > 0) {
      cudaEvent_t start, stop;
      PROBE_CHECK(cudaEventCreate(&start));
      PROBE_CHECK(cudaEventCreate(&stop));
      PROBE_CHECK(cudaEventRecord(start));
      for (int r = 0; r < repeats; ++r)
        sgemm_wgmma<Truncated><<<tiles, NUM_THREADS, Truncated::SMEM_BYTES>>>(
            map_a, map_b, map_a, dA, dB, dC, m, n, k, alpha, 0.0f, nullptr, whole);
      PROBE_CHECK(cudaEventRecord(stop));
      PROBE_CHECK(cudaEventSynchronize(stop));
      PROBE_CHECK(cudaEventElapsedTime(&ms, start, stop));
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    return repeats > 0 ? ms / repeats : 0.0f;
  };

  std::vector<float> A(static_cast<size_t>(M) * K), B(static_cast<size_t>(K) * N),
      C(static_cast<size_t>(M) * N);
  for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<float>(static_cast<int>(i * 5 % 9) - 4);
  for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<float>(static_cast<int>(i * 7 % 9) - 4);
  for (size_t i = 0; i < C.size(); ++i) C[i] = static_cast<float>(static_cast<int>(i * 3 % 5) - 2);
  std::vector<float> expected = C;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float sum = 0;
      for (int k = 0; k < K; ++k)
        sum += A[static_cast<size_t>(m) * K + k] * B[static_cast<size_t>(k) * N + n];
      expected[static_cast<size_t>(m) * N + n] =
          alpha * sum + beta * C[static_cast<size_t>(m) * N + n];
    }
  run(M, N, K, A, B, C, 0);
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < C.size(); ++i)
    if (C[i] != expected[i] && wrong++ == 0) first = i;
  std::printf(
      "gemm      %s: %zu of %zu elements of alpha A B + beta C differ from the CPU's "
      "(%d x %d x %d)",
      wrong ? "FAILED" : "ok", wrong, C.size(), M, N, K);
  if (wrong) std::printf(" (the first at row %zu, column %zu)", first / N, first % N);
  std::printf("\n");

  if (time_size > 0) {
    const size_t count = static_cast<size_t>(time_size) * time_size;
    std::vector<float> big_a(count, 1.0f), big_b(count, 1.0f), big_c(count, 0.0f);
    const float ms = run(time_size, time_size, time_size, big_a, big_b, big_c, 20);
    std::printf(
        "gemm      %d^3: %.3f ms, %.1f GFLOP/s (a probe's timing, not the measure command's)\n",
        time_size, ms, 2.0 * time_size * time_size * static_cast<double>(time_size) / ms / 1e6);
  }
  return wrong == 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool print_map = false;
  int time_size = 0;
  ladder::ArgParser parser;
  parser.flag("--map", &print_map)
      .value("--time", tools::integer_into("--time", 128, 1 << 14, &time_size));
  tools::parse_or_fail("hopper_probe", parser, "usage: hopper_probe [--map] [--time N]\n", argc,
                       argv);
  if (time_size % 128 != 0) tools::fail("hopper_probe", "--time takes a multiple of 128");
  int devices = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 ||
      cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
    std::printf("hopper_probe: skipped, it needs a GPU of compute capability 9.0\n");
    return 77;
  }

  // A holds its own indices (for the TMA check), small enough to be exact in
  // TF32; B^T holds small integers of both signs.
  std::vector<float> A(kTileFloats), Bt(kTileFloats);
  for (int i = 0; i < kTileFloats; ++i) {
    A[i] = static_cast<float>(i);
    Bt[i] = static_cast<float>((i * 7) % 9 - 4);
  }
  // kTileFloats - 1 = 2047 needs 11 significant bits: TF32 holds it exactly.
  float *dA, *dBt, *dStored, *dD;
  PROBE_CHECK(cudaMalloc(&dA, kTileFloats * sizeof(float)));
  PROBE_CHECK(cudaMalloc(&dBt, kTileFloats * sizeof(float)));
  PROBE_CHECK(cudaMalloc(&dStored, kTileFloats * sizeof(float)));
  PROBE_CHECK(cudaMalloc(&dD, kRows * kRows * sizeof(float)));
  PROBE_CHECK(cudaMemcpy(dA, A.data(), kTileFloats * sizeof(float), cudaMemcpyHostToDevice));
  PROBE_CHECK(cudaMemcpy(dBt, Bt.data(), kTileFloats * sizeof(float), cudaMemcpyHostToDevice));

  const EncodeTiled encode = encode_tiled();
  const CUtensorMap map_a = row_major_map(encode, dA, kRows, kK, kRows);
  const CUtensorMap map_b = row_major_map(encode, dBt, kRows, kK, kRows);

  std::vector<float> stored(kTileFloats), D(kRows * kRows);
  bool ok = true;

  probe_ss<<<1, kThreads>>>(map_a, map_b, dStored, dD);
  PROBE_CHECK(cudaGetLastError());
  PROBE_CHECK(cudaDeviceSynchronize());
  PROBE_CHECK(
      cudaMemcpy(stored.data(), dStored, stored.size() * sizeof(float), cudaMemcpyDeviceToHost));
  PROBE_CHECK(cudaMemcpy(D.data(), dD, D.size() * sizeof(float), cudaMemcpyDeviceToHost));
  ok &= check_tma(stored, print_map);
  ok &= check_product("wgmma-ss", D, A, Bt, kRows, kK);

  {  // The same kernel on operands that are not TF32 numbers.
    std::vector<float> x(kTileFloats, 1.0f + 0.75f * 0x1p-10f), one(kTileFloats, 1.0f);
    PROBE_CHECK(cudaMemcpy(dA, x.data(), kTileFloats * sizeof(float), cudaMemcpyHostToDevice));
    PROBE_CHECK(cudaMemcpy(dBt, one.data(), kTileFloats * sizeof(float), cudaMemcpyHostToDevice));
    probe_ss<<<1, kThreads>>>(map_a, map_b, dStored, dD);
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaMemcpy(D.data(), dD, D.size() * sizeof(float), cudaMemcpyDeviceToHost));
    report_operand_rounding(D);
    PROBE_CHECK(cudaMemcpy(dA, A.data(), kTileFloats * sizeof(float), cudaMemcpyHostToDevice));
    PROBE_CHECK(cudaMemcpy(dBt, Bt.data(), kTileFloats * sizeof(float), cudaMemcpyHostToDevice));
  }

  PROBE_CHECK(cudaMemset(dD, 0, D.size() * sizeof(float)));
  probe_rs<<<1, kThreads>>>(map_b, dA, dD);
  PROBE_CHECK(cudaGetLastError());
  PROBE_CHECK(cudaDeviceSynchronize());
  PROBE_CHECK(cudaMemcpy(D.data(), dD, D.size() * sizeof(float), cudaMemcpyDeviceToHost));
  ok &= check_product("wgmma-rs", D, A, Bt, kRows, kK);
  ok &= check_pipeline(encode, time_size);
  ok &= check_gemm(encode, 256, 256, 256, 0);
  ok &= check_gemm(encode, 200, 260, 36, time_size);  // partial tiles in M, N and K

  cudaFree(dA);
  cudaFree(dBt);
  cudaFree(dStored);
  cudaFree(dD);
  return ok ? 0 : 1;
}
