// hopper_probe: checks, on a GPU of compute capability 9.0, the three
// mechanisms a Hopper GEMM stands on, each against what can be derived for it
// on paper. It is the ground for Part II's Hopper chapter (wgmma with TMA),
// which is not written yet; nothing in the book reads it so far.
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
//
// The inputs are small integers, exact in TF32, whose products and sums are
// exact in FP32, so each product must equal the CPU's exactly.
//
// Usage: hopper_probe [--map]
//   --map  also prints the measured swizzle, one line per row: the piece
//          where each of the row's eight pieces landed.
// Exit: 0 when every check holds, 1 when one fails, 77 without an sm_90 GPU.
//
// Build alone (wgmma needs the sm_90a target):
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a hopper_probe.cu -o hopper_probe
#include <cuda.h>  // CUtensorMap and its enums (the driver is reached through the runtime)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

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

__device__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(count));
  // Make the initialised barrier visible to the copy engine (the async proxy).
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arrives on the barrier and tells it how many bytes the copies will bring.
__device__ void mbarrier_expect_bytes(uint64_t* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
}

// Waits until the barrier's phase `parity` has completed.
__device__ void mbarrier_wait(uint64_t* bar, int parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}

// Copies the box at (column, row) of the tensor map into shared memory; the
// barrier counts the bytes as they land.
__device__ void tma_load_2d(float* dst, const CUtensorMap* map, int column, int row,
                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(column), "r"(row), "r"(smem_address(bar))
      : "memory");
}

// The shared-memory descriptor of a K-major tile with the 128-byte swizzle:
// rows of 128 bytes, groups of 8 rows (1024 bytes) one after another. Fields
// (PTX ISA, "Matrix Descriptor"): start address >> 4 in bits 0-13, leading
// byte offset >> 4 in bits 16-29 (unused by this layout; 1 by convention),
// stride byte offset >> 4 in bits 32-45 (1024 bytes between 8-row groups),
// swizzle mode in bits 62-63 (1: 128 bytes). The tile must start on a
// 1024-byte boundary, so that the base offset (bits 49-51) is 0.
__device__ uint64_t descriptor_128b(const float* tile) {
  uint64_t desc = (smem_address(tile) & 0x3FFFF) >> 4;
  desc |= uint64_t{16 >> 4} << 16;
  desc |= uint64_t{1024 >> 4} << 32;
  desc |= uint64_t{1} << 62;
  return desc;
}

__device__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

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
  wgmma_fence();
  for (int k = 0; k < kK / 8; ++k) {
    // A step of 8 along K is 32 bytes further along each row: 2 in the
    // descriptor's units of 16 bytes. The swizzle is applied to the address
    // the tensor cores form, so the start address moves as if unswizzled.
    wgmma_m64n64k8_ss(d, descriptor_128b(As) + 2 * k, descriptor_128b(Bs) + 2 * k, k > 0);
  }
  wgmma_commit();
  wgmma_wait_all();
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
  wgmma_fence();
  for (int k = 0; k < kK / 8; ++k) wgmma_m64n64k8_rs(d, a[k], descriptor_128b(Bs) + 2 * k, k > 0);
  wgmma_commit();
  wgmma_wait_all();
  store_accumulators(d, D);
}

// ---------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's cuTensorMapEncodeTiled, found through the runtime, so that
// the program needs no link to libcuda.
EncodeTiled encode_tiled() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  PROBE_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                               cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "hopper_probe: the driver has no cuTensorMapEncodeTiled\n");
    std::exit(1);
  }
  return reinterpret_cast<EncodeTiled>(fn);
}

// A map of a rows x 32 row-major float matrix whose box is the whole of it,
// copied with the 128-byte swizzle.
CUtensorMap tile_map(EncodeTiled encode, float* base, int rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {kK, static_cast<cuuint64_t>(rows)};  // innermost first
  const cuuint64_t strides[1] = {kK * sizeof(float)};              // bytes between rows
  const cuuint32_t box[2] = {kK, static_cast<cuuint32_t>(rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult rc =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims, strides, box, element_strides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    std::fprintf(stderr, "hopper_probe: cuTensorMapEncodeTiled failed (%d)\n",
                 static_cast<int>(rc));
    std::exit(1);
  }
  return map;
}

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

bool check_product(const char* name, const std::vector<float>& D, const std::vector<float>& A,
                   const std::vector<float>& Bt) {
  int wrong = 0, first = -1;
  for (int m = 0; m < kRows; ++m)
    for (int n = 0; n < kRows; ++n) {
      float sum = 0;
      for (int k = 0; k < kK; ++k) sum += A[m * kK + k] * Bt[n * kK + k];
      if (D[m * kRows + n] != sum) {
        if (first < 0) first = m * kRows + n;
        ++wrong;
      }
    }
  std::printf("%-9s %s: %d of %d elements differ from the CPU's product", name,
              wrong ? "FAILED" : "ok", wrong, kRows * kRows);
  if (first >= 0) std::printf(" (the first at row %d, column %d)", first / kRows, first % kRows);
  std::printf("\n");
  return wrong == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool print_map = argc > 1 && std::strcmp(argv[1], "--map") == 0;
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
  const CUtensorMap map_a = tile_map(encode, dA, kRows);
  const CUtensorMap map_b = tile_map(encode, dBt, kRows);

  std::vector<float> stored(kTileFloats), D(kRows * kRows);
  bool ok = true;

  probe_ss<<<1, kThreads>>>(map_a, map_b, dStored, dD);
  PROBE_CHECK(cudaGetLastError());
  PROBE_CHECK(cudaDeviceSynchronize());
  PROBE_CHECK(
      cudaMemcpy(stored.data(), dStored, stored.size() * sizeof(float), cudaMemcpyDeviceToHost));
  PROBE_CHECK(cudaMemcpy(D.data(), dD, D.size() * sizeof(float), cudaMemcpyDeviceToHost));
  ok &= check_tma(stored, print_map);
  ok &= check_product("wgmma-ss", D, A, Bt);

  PROBE_CHECK(cudaMemset(dD, 0, D.size() * sizeof(float)));
  probe_rs<<<1, kThreads>>>(map_b, dA, dD);
  PROBE_CHECK(cudaGetLastError());
  PROBE_CHECK(cudaDeviceSynchronize());
  PROBE_CHECK(cudaMemcpy(D.data(), dD, D.size() * sizeof(float), cudaMemcpyDeviceToHost));
  ok &= check_product("wgmma-rs", D, A, Bt);

  cudaFree(dA);
  cudaFree(dBt);
  cudaFree(dStored);
  cudaFree(dD);
  return ok ? 0 : 1;
}
