// Chapter 16's kernel: Hopper's own path. The copy engine (TMA) brings each
// K-step's tiles into shared memory with the 128-byte swizzle, a producer
// warpgroup drives it, mbarriers hand the stages to two consumer warpgroups,
// and they multiply with wgmma, the tensor cores' asynchronous warpgroup MMA,
// on TF32 (A and B rounded to it first, as cuBLAS rounds them; truncated by
// wgmma itself in the variant "truncated"), or on 3xTF32 (the tilings that
// chapter 17 runs). Everything but main(), which is in kernel.cu. It needs
// the sm_90a target (an H100 or H200). Products whose rows TMA cannot copy
// (K or N not a multiple of 4) run on aligned copies in the workspace the
// harness gives (chapter 13's launch_packed()); without one, chapter 14's
// mma.sync kernel runs them, or chapter 15's for 3xTF32.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (the driver is reached through the runtime)

#include <algorithm>
#include <cstdint>
#include <ladder/chapter.hpp>
#include <ladder/cuda_check.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "../13-tail/kernel.cuh"
#include "../14-tf32/kernel.cuh"
#include "../15-3xtf32/kernel.cuh"
#include "tiling.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error \
    "Chapter 16 needs the sm_90a target (wgmma, setmaxnreg): -gencode=arch=compute_90a,code=sm_90a"
#endif

namespace ch16 {

static_assert(kSmallScale == ch14::kSmallScale,
              "A's small parts (split_truncated()) and B's (ch14::split_tf32()) share one scale");

// ---------------------------------------------------------------------------
// mbarrier, TMA and wgmma: each one PTX instruction.
// ---------------------------------------------------------------------------

// [primitives]
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

// Whether the barrier's phase `parity` has completed (try_wait itself waits
// a while before it answers no).
__device__ bool mbarrier_try_wait(uint64_t* bar, int parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Waits until the barrier's phase `parity` has completed. A wrong byte count
// or parity hangs here. (A guard that traps after many refusals would put a
// branch to a trap in every wait; with it, ptxas serializes the wide tile's
// wgmma, each waiting for the one before, and says so in warning C7512.)
__device__ void mbarrier_wait(uint64_t* bar, int parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
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

// Pins the accumulators in program order around the asynchronous wgmma: the
// compiler may not move a read or write of them across this point (an empty
// asm that claims to change them).
template <int N>
__device__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The accumulators as operands of an asm statement: 32 floats of d from
// d[o], each read and written ("+f"); LADDER_D32, LADDER_D64 and LADDER_D128
// list 32, 64 and 128 of them, for wgmma's N = 64, 128 and 256.
#define LADDER_D32_FROM(d, o)                                                                     \
  "+f"(d[o + 0]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), "+f"(d[o + 5]), \
      "+f"(d[o + 6]), "+f"(d[o + 7]), "+f"(d[o + 8]), "+f"(d[o + 9]), "+f"(d[o + 10]),            \
      "+f"(d[o + 11]), "+f"(d[o + 12]), "+f"(d[o + 13]), "+f"(d[o + 14]), "+f"(d[o + 15]),        \
      "+f"(d[o + 16]), "+f"(d[o + 17]), "+f"(d[o + 18]), "+f"(d[o + 19]), "+f"(d[o + 20]),        \
      "+f"(d[o + 21]), "+f"(d[o + 22]), "+f"(d[o + 23]), "+f"(d[o + 24]), "+f"(d[o + 25]),        \
      "+f"(d[o + 26]), "+f"(d[o + 27]), "+f"(d[o + 28]), "+f"(d[o + 29]), "+f"(d[o + 30]),        \
      "+f"(d[o + 31])
#define LADDER_D64_FROM(d, o) LADDER_D32_FROM(d, o), LADDER_D32_FROM(d, o + 32)
#define LADDER_D32(d) LADDER_D32_FROM(d, 0)
#define LADDER_D64(d) LADDER_D64_FROM(d, 0)
#define LADDER_D128(d) LADDER_D64_FROM(d, 0), LADDER_D64_FROM(d, 64)

#define LADDER_D32_TEXT                                                               \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

#define LADDER_D64_TEXT                                                               \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "  \
  "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "  \
  "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

// The dynamic shared memory from its first 1024-byte boundary, where the
// swizzled tiles must start. Offsetting the array itself (not a cast
// integer) keeps the pointer known to be in shared memory, so that its loads
// compile to LDS.
__device__ float* aligned_tiles(unsigned char* raw) {
  return reinterpret_cast<float*>(raw + (1024 - smem_address(raw) % 1024) % 1024);
}

// Arrives on the barrier once (no bytes expected).
__device__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
}

// The same with wgmma.m64n64k8: B^T * A^T for 64 columns (rows of A).
__device__ void wgmma_m64n64k8_rs(float (&d)[32], const uint32_t (&b)[4], uint64_t desc_a,
                                  int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred keep;\n"
      "setp.ne.b32 keep, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " LADDER_D32_TEXT
      ", {%32, %33, %34, %35}, %36, keep, 1, 1;\n"
      "}\n"
      : LADDER_D32(d)
      : "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "l"(desc_a), "r"(accumulate));
}

// d += B^T * A^T for one step of 8 along K, m64n128k8, B^T's fragment in
// registers and A's tile through its descriptor.
__device__ void wgmma_m64n128k8_rs(float (&d)[64], const uint32_t (&b)[4], uint64_t desc_a,
                                   int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred keep;\n"
      "setp.ne.b32 keep, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " LADDER_D64_TEXT
      ", {%64, %65, %66, %67}, %68, keep, 1, 1;\n"
      "}\n"
      : LADDER_D64(d)
      : "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "l"(desc_a), "r"(accumulate));
}

#define LADDER_D128_TEXT                                                                           \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "     \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "     \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, " \
  "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "     \
  "%124, %125, %126, %127}"

/// Lowers this warpgroup's registers per thread to REGS, for others to take.
template <int REGS>
__device__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}

/// Raises this warpgroup's registers per thread to REGS, from those released.
template <int REGS>
__device__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

// The same with wgmma.m64n256k8: B^T * A^T for 256 columns (rows of A).
__device__ void wgmma_m64n256k8_rs(float (&d)[128], const uint32_t (&b)[4], uint64_t desc_a,
                                   int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred keep;\n"
      "setp.ne.b32 keep, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " LADDER_D128_TEXT
      ", {%128, %129, %130, %131}, %132, keep, 1, 1;\n"
      "}\n"
      : LADDER_D128(d)
      : "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "l"(desc_a), "r"(accumulate));
}

/// d += B^T * A^T for one step of 8 along K, on the wgmma whose N fits d.
__device__ void wgmma_rs(float (&d)[32], const uint32_t (&b)[4], uint64_t desc_a, int accumulate) {
  wgmma_m64n64k8_rs(d, b, desc_a, accumulate);
}
__device__ void wgmma_rs(float (&d)[64], const uint32_t (&b)[4], uint64_t desc_a, int accumulate) {
  wgmma_m64n128k8_rs(d, b, desc_a, accumulate);
}
__device__ void wgmma_rs(float (&d)[128], const uint32_t (&b)[4], uint64_t desc_a, int accumulate) {
  wgmma_m64n256k8_rs(d, b, desc_a, accumulate);
}
// [end]

// [split-a-kernel]
/// Splits A (count floats, a multiple of 4) into its parts for 3xTF32, once
/// before the product: small and big_finite (split_truncated()), and, when
/// ROUNDED, big, A rounded to TF32 as chapter 15 splits it (chapter 14's
/// split_tf32()). Truncated, A itself is the big part: wgmma drops the low
/// 13 bits of what it reads. The product's copies then bring A's parts into
/// shared memory beside A's tile.
template <bool ROUNDED>
__global__ void split_a(const float* A, long long count, float* small, float* big_finite,
                        float* big) {
  asm volatile("griddepcontrol.launch_dependents;");  // the product may start
  const long long stride = 4ll * gridDim.x * blockDim.x;
  for (long long i = 4ll * (blockIdx.x * blockDim.x + threadIdx.x); i < count; i += stride) {
    const float4 x = *reinterpret_cast<const float4*>(A + i);
    if constexpr (ROUNDED) {
      const ch14::Split p[4] = {ch14::split_tf32(x.x), ch14::split_tf32(x.y), ch14::split_tf32(x.z),
                                ch14::split_tf32(x.w)};
      *reinterpret_cast<uint4*>(big + i) = make_uint4(p[0].big, p[1].big, p[2].big, p[3].big);
      *reinterpret_cast<uint4*>(small + i) =
          make_uint4(p[0].small, p[1].small, p[2].small, p[3].small);
      *reinterpret_cast<uint4*>(big_finite + i) =
          make_uint4(p[0].big_finite, p[1].big_finite, p[2].big_finite, p[3].big_finite);
    } else {
      float4 s, b;
      split_truncated(x.x, s.x, b.x);
      split_truncated(x.y, s.y, b.y);
      split_truncated(x.z, s.z, b.z);
      split_truncated(x.w, s.w, b.w);
      *reinterpret_cast<float4*>(small + i) = s;
      *reinterpret_cast<float4*>(big_finite + i) = b;
    }
  }
}
// [end]

/// Rounds A (count floats, a multiple of 4) to TF32, to nearest (chapter
/// 14's to_tf32()), once before a TF32 product: wgmma then reads it in
/// place of A, and drops only zeros.
__global__ void round_a(const float* A, long long count, float* rounded) {
  asm volatile("griddepcontrol.launch_dependents;");  // the product may start
  const long long stride = 4ll * gridDim.x * blockDim.x;
  for (long long i = 4ll * (blockIdx.x * blockDim.x + threadIdx.x); i < count; i += stride) {
    const float4 x = *reinterpret_cast<const float4*>(A + i);
    *reinterpret_cast<uint4*>(rounded + i) =
        make_uint4(ch14::to_tf32(x.x), ch14::to_tf32(x.y), ch14::to_tf32(x.z), ch14::to_tf32(x.w));
  }
}

// [stages]
/// Each stage's barriers: "full" takes the producer's one arrival (with the
/// bytes its copies bring), "empty" one arrival from every consumer thread.
/// The whole block waits until they are initialised.
template <int STAGES_>
__device__ void init_stage_barriers(uint64_t* full, uint64_t* empty) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES_; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CONSUMERS * WARPGROUP);
    }
  }
  __syncthreads();
}
// [end]

// [consume]
/// B^T's fragment for one step of 8 along K of a stage's B tile: rows n0 and
/// n0 + 8 of B^T, columns k and k + 4 (B's rows), k = 8 step + t.
__device__ void load_bt_fragment(float (&b)[4], const float* Bs, int step, int n0, int t) {
  const int k = 8 * step + t;
  b[0] = Bs[b_tile_index(k, n0)];
  b[1] = Bs[b_tile_index(k, n0 + 8)];
  b[2] = Bs[b_tile_index(k + 4, n0)];
  b[3] = Bs[b_tile_index(k + 4, n0 + 8)];
}

/// One consumer's loop over K on TF32: for each stage, wait for its copies,
/// load B^T's fragments, issue the stage's four wgmma, wait for them, and
/// hand the stage back to the producer.
template <class T>
__device__ void consume_tf32(float (&d)[T::BM / 2], const float* tiles, uint64_t* full,
                             uint64_t* empty, int steps, int n0, int t) {
  for (int kt = 0; kt < steps; ++kt) {
    const int s = kt % T::STAGES;
    mbarrier_wait(&full[s], (kt / T::STAGES) & 1);
    const float* As = tiles + s * T::STAGE_FLOATS;
    const float* Bs = As + T::BM * BK;
    // B^T's fragments for the stage's four steps, loaded before the first wgmma.
    uint32_t b[BK / 8][4];
#pragma unroll
    for (int step = 0; step < BK / 8; ++step) {
      float f[4];
      load_bt_fragment(f, Bs, step, n0, t);
#pragma unroll
      for (int r = 0; r < 4; ++r)
        b[step][r] = T::ROUNDED ? ch14::to_tf32(f[r]) : truncated_operand(f[r]);
    }
    fence_accumulators(d);
    wgmma_fence();
#pragma unroll
    for (int step = 0; step < BK / 8; ++step) {
      // A step of 8 along K is 32 bytes further along each row of A's tile:
      // 2 in the descriptor's units of 16 bytes.
      wgmma_rs(d, b[step], descriptor_128b(As) + 2 * step, kt > 0 || step > 0);
    }
    wgmma_commit();
    wgmma_wait_all();
    fence_accumulators(d);
    mbarrier_arrive(&empty[s]);  // after its own loads and wgmma
  }
}

/// 3xTF32's corrections are summed by the tensor cores over this many
/// stages (256 along K) before an FFMA adds them into the accumulators.
constexpr int kCorrectionStages = 8;

/// The same on 3xTF32. The copies bring A's parts into the stage (small,
/// then big_finite, after A's and B's tiles); the consumer splits its B^T
/// fragments in registers (chapter 14's split_tf32()). For every SUM_STEPS
/// steps the tensor cores sum big * big into `sum` from zero, and an FP32
/// addition adds `sum` into d. The two corrections, small * big and
/// big * small, come out 2^10 too large (kSmallScale), so they have sums of
/// their own, `corrections`; every kCorrectionStages stages, and at the end,
/// an FFMA scales them back into d. B^T's big part stands in for its
/// big_finite, to save registers: where B holds an infinity or NaN, d is
/// infinite or NaN too (x * inf is never finite), and such a d keeps no
/// correction.
template <class T>
__device__ void consume_3xtf32(float (&d)[T::BM / 2], const float* tiles, uint64_t* full,
                               uint64_t* empty, int steps, int n0, int t) {
  constexpr int A_FLOATS = T::BM * BK;
  float sum[T::BM / 2], corrections[T::BM / 2];
  for (int kt = 0; kt < steps; ++kt) {
    const int s = kt % T::STAGES;
    mbarrier_wait(&full[s], (kt / T::STAGES) & 1);
    const float* As = tiles + s * T::STAGE_FLOATS;
    const float* Bs = As + A_FLOATS;
    const float* a_small = Bs + BN * BK;
    const float* a_big = a_small + A_FLOATS;
    ch14::Split b[BK / 8][4];
#pragma unroll
    for (int step = 0; step < BK / 8; ++step) {
      float f[4];
      load_bt_fragment(f, Bs, step, n0, t);
#pragma unroll
      for (int r = 0; r < 4; ++r) b[step][r] = ch14::split_tf32(f[r]);
    }
    const bool fresh = kt % kCorrectionStages == 0;  // corrections start from zero
#pragma unroll
    for (int first = 0; first < BK / 8; first += T::SUM_STEPS) {
      fence_accumulators(sum);
      fence_accumulators(corrections);
      wgmma_fence();
#pragma unroll
      for (int step = first; step < first + T::SUM_STEPS; ++step) {
        uint32_t small[4], big[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          small[r] = b[step][r].small;
          big[r] = b[step][r].big;
        }
        wgmma_rs(corrections, small, descriptor_128b(a_big) + 2 * step, !(fresh && step == 0));
        wgmma_rs(corrections, big, descriptor_128b(a_small) + 2 * step, 1);
        wgmma_rs(sum, big, descriptor_128b(As) + 2 * step, step > first);
      }
      wgmma_commit();
      wgmma_wait_all();
      fence_accumulators(sum);
      fence_accumulators(corrections);
#pragma unroll
      for (int i = 0; i < T::BM / 2; ++i) d[i] += sum[i];
    }
    if ((kt + 1) % kCorrectionStages == 0 || kt + 1 == steps) {
#pragma unroll
      for (int i = 0; i < T::BM / 2; ++i)
        if (isfinite(d[i])) d[i] = fmaf(corrections[i], 1.0f / kSmallScale, d[i]);
    }
    mbarrier_arrive(&empty[s]);
  }
}
// [end]

// [not-finite]
/// Each of a consumer thread's sums that is not finite, computed again in
/// FP32 over the block's K-steps (chapter 14's fp32_dot()). wgmma's
/// operands can change a value's class: read as it is, A loses the low 13
/// bits of its floats, so a NaN whose payload lies only there reads as an
/// infinity; a value TF32 makes 0 (below 2^-137) times an infinity gives
/// NaN where FP32 gives an infinity; rounding makes a float at or above
/// 2^128 (1 - 2^-12) infinite. Each of these leaves the sum not finite.
/// Sums are almost always finite: then it costs one test per sum and one
/// branch.
template <class T>
__device__ void fp32_where_not_finite(float (&d)[T::BM / 2], const float* A, const float* B, int M,
                                      int N, int K, int tile_m, int tile_n, int consumer_warp,
                                      int lane, int k_begin, int k_end) {
  bool all_finite = true;
#pragma unroll
  for (int i = 0; i < T::BM / 2; ++i) all_finite &= isfinite(d[i]);
  if (all_finite) return;
#pragma unroll
  for (int j = 0; j < T::BM / 8; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int m = tile_m + c_row(lane, j, r), n = tile_n + c_col(consumer_warp, lane, r);
      if (!isfinite(d[4 * j + r]) && m < M && n < N) {
        d[4 * j + r] = ch14::fp32_dot(A, B, N, K, m, n, k_begin, k_end);
      }
    }
}
// [end]

// [add-slices]
/// Most tiles a launch cuts: one pair of counters each.
constexpr int kMaxCutTiles = 1024;
/// Per cut tile: how many of its slices have written their sums, and how
/// many have added their share into C. Zero between launches: the last
/// slice to add sets them back. (One launch at a time: two streams must not
/// share them.)
__device__ int slices_written[kMaxCutTiles];
__device__ int slices_added[kMaxCutTiles];

/// The consumers' own barrier (barrier 1, their 256 threads): the producer
/// warpgroup does not take part.
__device__ void consumers_sync() {
  asm volatile("bar.sync 1, %0;" ::"n"(CONSUMERS * WARPGROUP) : "memory");
}

/// Adds b into a, element by element.
__device__ void add4(float4& a, const float4& b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  a.w += b.w;
}

/// After a slice's block has written its sums: it waits until every slice
/// of its tile has, then adds up its share of the tile (a slices-th of its
/// elements), every slice's sums in the order of K, into C = alpha * sum +
/// beta * C, without reading C when beta == 0. Four floats at a time, and
/// BATCH of them per thread loaded before any is added, so that the loads
/// overlap. `thread` is the consumer thread, 0 .. 255.
/// @pre all of a cut tile's slices run at once (one block per SM, and
///      last_round() cuts at most as many slices as there are SMs); N % 4 == 0.
template <class T>
__device__ void add_slices(const float* partials, const LastRound& cut, const BlockWork& work,
                           float* C, int M, int N, float alpha, float beta, int tile_m, int tile_n,
                           int thread) {
  constexpr int TILE4 = T::BM * BN / 4, THREADS = CONSUMERS * WARPGROUP, BATCH = 4;
  const int cut_tile = work.tile - cut.whole_tiles;
  const int slice = work.slice - cut_tile * cut.slices;
  // A release in three steps: every thread's fence makes its sums visible
  // to the whole GPU, the barrier orders those fences before thread 0's
  // count, and the count itself can then be a relaxed atomicAdd.
  __threadfence();
  consumers_sync();
  if (thread == 0) {
    atomicAdd(&slices_written[cut_tile], 1);
    while (ch13::load_acquire(&slices_written[cut_tile]) < cut.slices) {
    }
  }
  consumers_sync();  // every thread waits for thread 0, and through it for the slices' sums
  const int share = (TILE4 + cut.slices - 1) / cut.slices;
  const int end = (slice + 1) * share < TILE4 ? (slice + 1) * share : TILE4;
  const float4* sums = reinterpret_cast<const float4*>(partials) +
                       static_cast<size_t>(cut_tile) * cut.slices * TILE4;
  for (int first = slice * share + thread; first < end; first += BATCH * THREADS) {
    float4 sum[BATCH];
#pragma unroll
    for (int b = 0; b < BATCH; ++b) sum[b] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    // BATCH loads in flight per slice before the first addition waits on one.
    // __ldcg reads through L2 only: this SM's L1 is not kept coherent with
    // the other SMs' stores.
    for (int s = 0; s < cut.slices; ++s)
#pragma unroll
      for (int b = 0; b < BATCH; ++b) {
        const int i = first + b * THREADS;
        if (i < end) add4(sum[b], __ldcg(sums + static_cast<size_t>(s) * TILE4 + i));
      }
#pragma unroll
    for (int b = 0; b < BATCH; ++b) {
      const int i = first + b * THREADS;
      const int m = tile_m + 4 * i / BN, n = tile_n + 4 * i % BN;
      if (i >= end || m >= M || n >= N) continue;  // N % 4 == 0: four floats lie in C or past it
      float4* c = reinterpret_cast<float4*>(C + static_cast<size_t>(m) * N + n);
      const float4 old = beta != 0.0f ? *c : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      *c = make_float4(alpha * sum[b].x + beta * old.x, alpha * sum[b].y + beta * old.y,
                       alpha * sum[b].z + beta * old.z, alpha * sum[b].w + beta * old.w);
    }
  }
  // Each slice counts itself once it has passed the wait; the last resets.
  if (thread == 0 && atomicAdd(&slices_added[cut_tile], 1) == cut.slices - 1) {
    slices_written[cut_tile] = 0;
    slices_added[cut_tile] = 0;
  }
}
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C for row-major A (M x K), B (K x N) and
/// C (M x N), one block per BM x BN tile of C, or per slice of a tile that
/// `cut` cuts along K (block_work()).
///
/// wgmma on TF32 reads an operand from shared memory only when it is
/// K-major, and row-major B is not: its rows run along N. So the block
/// computes C^T = B^T * A^T. A's tile, K-major, is wgmma's second operand,
/// read by the tensor cores through a descriptor; B^T is the first, in
/// registers, each lane loading its fragment from B's tile. The accumulators
/// then hold C transposed: row n, column m.
///
/// Warpgroup 0 produces: one thread copies each K-step's tiles with TMA into
/// one of STAGES buffers (on 3xTF32 A's parts too, from map_small and
/// map_big_finite).
/// Warpgroups 1 and 2 consume: each multiplies 64
/// columns of the tile (64 rows of C^T) by all BM rows, with
/// wgmma.m64n{BM}k8. A slice's block writes its sums, unscaled, into its
/// BM x BN matrix of `partials`, then adds its share of the tile's slices
/// into C (add_slices()).
/// @pre N and K are multiples of 4; A and B are 16-byte aligned (TMA's rows
///      must be multiples of 16 bytes); blockDim.x == NUM_THREADS;
///      T::SMEM_BYTES of dynamic shared memory; the grid is
///      last_round_blocks(cut) blocks; room for that many BM x BN matrices
///      at `partials` if cut.slices > 1.
template <class T>
__global__ void __launch_bounds__(NUM_THREADS, 1)
    sgemm_wgmma(const __grid_constant__ CUtensorMap map_a,
                const __grid_constant__ CUtensorMap map_b,
                const __grid_constant__ CUtensorMap map_small,
                const __grid_constant__ CUtensorMap map_big_finite, const float* A, const float* B,
                float* C, int M, int N, int K, float alpha, float beta, float* partials,
                LastRound cut) {
  constexpr int BM = T::BM, STAGES = T::STAGES, STAGE_FLOATS = T::STAGE_FLOATS;
  extern __shared__ unsigned char smem_raw[];
  float* tiles = aligned_tiles(smem_raw);
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const int warpgroup = threadIdx.x / WARPGROUP;
  // The block's share; its tile in chapter 12's grouped order.
  const BlockWork work = block_work(cut, blockIdx.x);
  const ch14::TileCoord tile = ch14::block_tile<T>(work.tile, (M + BM - 1) / BM, (N + BN - 1) / BN);
  const int tile_m = tile.row * BM, tile_n = tile.col * BN;
  const int steps = work.end_step - work.first_step;  // the copies fill zeros past K, M and N

  init_stage_barriers<STAGES>(full, empty);
  // 3xTF32: this block may start while split_a() still runs (launch()); it
  // waits here until split_a() has finished and its parts are in memory.
  if constexpr (T::PRODUCTS == 3 || T::ROUNDED) asm volatile("griddepcontrol.wait;" ::: "memory");

  if (warpgroup == 0) {  // the producer
    if constexpr (T::PRODUCER_REGISTERS > 0) release_registers<T::PRODUCER_REGISTERS>();
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < steps; ++kt) {
        const int s = kt % STAGES;
        // A fresh barrier counts as having completed the phase before its
        // first, so the first round's wait on parity 1 returns at once.
        mbarrier_wait(&empty[s], (kt / STAGES + 1) & 1);
        float* As = tiles + s * STAGE_FLOATS;
        float* Bs = As + BM * BK;
        mbarrier_expect_bytes(&full[s], T::COPY_FLOATS * static_cast<int>(sizeof(float)));
        const int k = (work.first_step + kt) * BK;
        tma_load_2d(As, &map_a, k, tile_m, &full[s]);
        for (int box = 0; box < BN / BOX_COLUMNS; ++box)
          tma_load_2d(Bs + box * BK * BOX_COLUMNS, &map_b, tile_n + box * BOX_COLUMNS, k, &full[s]);
        if constexpr (T::PRODUCTS == 3) {  // A's parts, after B's tile
          float* a_small = Bs + BN * BK;
          tma_load_2d(a_small, &map_small, k, tile_m, &full[s]);
          tma_load_2d(a_small + BM * BK, &map_big_finite, k, tile_m, &full[s]);
        }
      }
    }
  } else {  // a consumer: its 64 columns of the tile (n), four warps of 16
    if constexpr (T::CONSUMER_REGISTERS > 0) claim_registers<T::CONSUMER_REGISTERS>();
    const int consumer = warpgroup - 1, warp = (threadIdx.x % WARPGROUP) / 32;
    const int lane = threadIdx.x % 32, t = lane % 4;
    const int consumer_warp = consumer * (WARPGROUP / 32) + warp;
    const int n0 = c_col(consumer_warp, lane, 0);  // rows n0 and n0 + 8 of B^T
    float d[BM / 2] = {};  // 64 rows of C^T by BM columns, over the warpgroup's 128 lanes
    if constexpr (T::PRODUCTS == 1) {
      consume_tf32<T>(d, tiles, full, empty, steps, n0, t);
    } else {
      consume_3xtf32<T>(d, tiles, full, empty, steps, n0, t);
    }
    // A sum the tensor cores leave not finite is FP32's own ([not-finite]).
    const int k_end = work.end_step * BK < K ? work.end_step * BK : K;
    fp32_where_not_finite<T>(d, A, B, M, N, K, tile_m, tile_n, consumer_warp, lane,
                             work.first_step * BK, k_end);

    // d holds C^T; c_row() and c_col() say where each accumulator lands in C.
    // Unrolled, so that d is indexed by constants and stays in registers.
    if (work.slice >= 0) {  // a slice: its sums as they are, into its matrix
      float* out = partials + static_cast<size_t>(work.slice) * BM * BN;
#pragma unroll
      for (int j = 0; j < BM / 8; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          out[c_row(lane, j, r) * BN + c_col(consumer_warp, lane, r)] = d[4 * j + r];
      add_slices<T>(partials, cut, work, C, M, N, alpha, beta, tile_m, tile_n,
                    threadIdx.x - WARPGROUP);
      return;
    }
#pragma unroll
    for (int j = 0; j < BM / 8; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int m = tile_m + c_row(lane, j, r), n = tile_n + c_col(consumer_warp, lane, r);
        if (m < M && n < N) {
          float* c = C + static_cast<size_t>(m) * N + n;
          *c = alpha * d[4 * j + r] + (beta != 0.0f ? beta * *c : 0.0f);
        }
      }
  }
}
// [end]

// ---------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------

// [maps]
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's cuTensorMapEncodeTiled, found through the runtime, so that
// the program needs no link to libcuda.
EncodeTiled encode_tiled() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "16-wgmma: the driver has no cuTensorMapEncodeTiled\n");
    std::exit(1);
  }
  return reinterpret_cast<EncodeTiled>(fn);
}

/// A map of a row-major float matrix of rows x columns, copied in boxes of
/// box_rows x BOX_COLUMNS floats (128 bytes wide) with the 128-byte swizzle.
/// Outside the matrix the copy fills zeros. The rows must be multiples of 16
/// bytes.
inline CUtensorMap row_major_map(EncodeTiled encode, const float* base, int rows, int columns,
                                 int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(columns) * sizeof(float)};  // per row
  const cuuint32_t box[2] = {BOX_COLUMNS, static_cast<cuuint32_t>(box_rows)};  // innermost first
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult rc =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    std::fprintf(stderr, "16-wgmma: cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(rc));
    std::exit(1);
  }
  return map;
}
// [end]

// [launch]
/// Whether `p` lies on a 16-byte boundary.
inline bool on_16_bytes(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/// Whether TMA can copy the product's rows: each row of A and of B starts on
/// a 16-byte boundary.
inline bool tma_can_copy(const ladder::Gemm& g) {
  return ch13::rows_on_16_bytes(g.N, g.K) && on_16_bytes(g.A) && on_16_bytes(g.B);
}

/// The workspace the launchers want: room for aligned copies of the
/// matrices (chapter 13's packed_floats()) when TMA cannot copy their rows.
/// Copying costs a few floats per element of C; chapter 14's kernel, the
/// other way, runs at a fraction of this one's speed.
inline long long workspace(int M, int N, int K) {
  return ch13::rows_on_16_bytes(N, K) ? 0 : ch13::packed_floats(M, N, K);
}

/// The floats of A's parts that 3xTF32 splits before the product
/// (split_a()): small and big_finite, and big where A is rounded; none on
/// TF32.
template <class T>
long long parts_floats(int M, int K) {
  if constexpr (T::PRODUCTS == 1) return T::ROUNDED ? 1ll * M * K : 0;
  return (T::ROUNDED ? 3ll : 2ll) * M * K;
}

/// Tiling T's workspace without a cut: the copies', and A's parts (of the
/// packed copy of A where its rows need one).
template <class T>
long long workspace_parts(int M, int N, int K) {
  const int k = ch13::rows_on_16_bytes(N, K) ? K : ch13::packed_row(K);
  return workspace(M, N, K) + parts_floats<T>(M, k);
}

/// The floats of workspace that a cut last round of tiling T's can take at
/// most: a BM x BN matrix for each of at most one block per SM.
template <class T>
long long slices_floats() {
  static const int sms = ch13::sm_count();
  return 1ll * sms * T::BM * BN;
}

/// @brief Launches sgemm_wgmma<T> for any M and N, K and N multiples of 4;
/// any other product on aligned copies (chapter 13's launch_packed()), or
/// with too little workspace for them, chapter 14's kernel (chapter 15's
/// for 3xTF32, also where the workspace has no room for A's parts). On
/// 3xTF32, split_a() first writes A's parts into the workspace. Where the
/// rest of it has room (slices_floats()), the last round's tiles are cut
/// into slices (last_round()). The tensor maps are encoded on the host for
/// each new set of matrices (a call to the driver, no allocation) and
/// passed to the kernel as parameters.
template <class T>
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  using Fallback = std::conditional_t<T::PRODUCTS == 3, ch15::Chosen, ch14::Chosen>;
  if (!tma_can_copy(g)) {
    if (g.workspace_floats >= ch13::packed_floats(g.M, g.N, g.K)) {
      return ch13::launch_packed(g, stream,
                                 [&](const ladder::Gemm& packed) { launch<T>(packed, stream); });
    }
    return ch14::launch<Fallback>(g, stream);  // chapter 14's kernel, or chapter 15's
  }
  const long long parts = parts_floats<T>(g.M, g.K);
  if (g.workspace_floats < parts) return ch14::launch<Fallback>(g, stream);
  // A's parts at the start of the workspace: small, big_finite, then big
  // (on TF32 rounded, big alone).
  const long long part = 1ll * g.M * g.K;
  float* small = g.workspace;
  float* big_finite = small + (T::PRODUCTS == 3 ? part : 0);
  float* big = big_finite + (T::PRODUCTS == 3 ? part : 0);
  static const EncodeTiled encode = encode_tiled();
  static const bool smem_granted = ladder::allow_dynamic_smem(sgemm_wgmma<T>, T::SMEM_BYTES);
  (void)smem_granted;
  // The maps of the last product, reused while the matrices stay the same.
  static ladder::Gemm last{};
  static CUtensorMap map_a, map_b, map_small, map_big_finite;
  if (g.A != last.A || g.B != last.B || g.M != last.M || g.N != last.N || g.K != last.K ||
      g.workspace != last.workspace) {
    // Rounded, wgmma reads A's rounded big part in place of A.
    const float* a = T::ROUNDED ? big : g.A;
    map_a = row_major_map(encode, a, g.M, g.K, T::BM);
    map_b = row_major_map(encode, g.B, g.K, g.N, BK);
    map_small = T::PRODUCTS == 3 ? row_major_map(encode, small, g.M, g.K, T::BM) : map_a;
    map_big_finite = T::PRODUCTS == 3 ? row_major_map(encode, big_finite, g.M, g.K, T::BM) : map_a;
    last = g;
  }
  static const int sms = ch13::sm_count();
  // A pass over A first (3xTF32's split_a(), TF32's round_a()): 256 threads
  // a block, at most 8 blocks an SM.
  const long long count = 1ll * g.M * g.K;
  const int blocks = static_cast<int>(std::min<long long>((count / 4 + 255) / 256, 8ll * sms));
  if constexpr (T::PRODUCTS == 3) {
    split_a<T::ROUNDED><<<blocks, 256, 0, stream>>>(g.A, count, small, big_finite, big);
  } else if constexpr (T::ROUNDED) {
    round_a<<<blocks, 256, 0, stream>>>(g.A, count, big);
  }
  float* partials = g.workspace + parts;
  LastRound cut = last_round<T>(g.M, g.N, g.K, sms);
  // A cut tile's slices add into C four floats at a time (add_slices()):
  // C must start on a 16-byte boundary for that.
  if (g.workspace_floats - parts < slices_floats<T>() ||
      cut.tiles - cut.whole_tiles > kMaxCutTiles || !on_16_bytes(g.C))
    cut = uncut<T>(g.M, g.N, g.K);
  // The product as split_a()'s programmatic dependent: its blocks may start
  // as split_a()'s end, and wait inside for its parts (griddepcontrol.wait).
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(last_round_blocks(cut));
  config.blockDim = dim3(NUM_THREADS);
  config.dynamicSmemBytes = T::SMEM_BYTES;
  config.stream = stream;
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = T::PRODUCTS == 3 || T::ROUNDED ? 1 : 0;
  config.attrs = &early;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, sgemm_wgmma<T>, map_a, map_b, map_small, map_big_finite,
                                g.A, g.B, g.C, g.M, g.N, g.K, g.alpha, g.beta, partials, cut));
}
// [end]

// [launch-by-count]
/// The chapter's own launcher: the 256-row or the 64-row tile where its
/// count is the smallest, the 128-row tile otherwise.
template <class Square = Chosen, class Twice = Wide, class Half = Narrow>
void launch_by_count(const ladder::Gemm& g, cudaStream_t stream) {
  static const int sms = ch13::sm_count();  // chapter 13's
  const long long square = copy_rounds<Square>(g.M, g.N, sms);
  const long long wide = copy_rounds<Twice>(g.M, g.N, sms);
  const long long narrow = copy_rounds<Half>(g.M, g.N, sms);
  if (wide < square && wide < narrow) {
    launch<Twice>(g, stream);
  } else if (narrow < square) {
    launch<Half>(g, stream);
  } else {
    launch<Square>(g, stream);
  }
}

/// The same with A and B truncated (the variant "truncated"): no pass over A
/// first, but each product's error has a bias, and the sum's grows with it.
inline void launch_truncated_by_count(const ladder::Gemm& g, cudaStream_t stream) {
  launch_by_count<Truncated, TruncatedWide, TruncatedNarrow>(g, stream);
}

/// The chapter's own workspace: the copies', and A rounded (every tile
/// needs the same).
inline long long workspace_rounded(int M, int N, int K) { return workspace_parts<Chosen>(M, N, K); }

/// Why this GPU cannot run chapter `slug` (16 or 17), or empty when it can:
/// wgmma and TMA as built here need compute capability 9.0 exactly.
inline std::string unsupported_gpu(const cudaDeviceProp& prop,
                                   const std::string& slug = "16-wgmma") {
  if (prop.major == 9 && prop.minor == 0) return {};
  return slug + ": this GPU is sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
         "; wgmma and TMA as built here need sm_90 (an H100 or H200)";
}

/// Tiling T's constants, for --describe and the book.
template <class T>
std::vector<ladder::Constant> constants() {
  return {{"BM", T::BM},
          {"BN", BN},
          {"BK", BK},
          {"STAGES", T::STAGES},
          {"BOX_COLUMNS", BOX_COLUMNS},
          {"WARPGROUP", WARPGROUP},
          {"CONSUMERS", CONSUMERS},
          {"GROUP_M", T::GROUP_M},
          {"NUM_THREADS", NUM_THREADS},
          {"COPY_FLOATS", T::COPY_FLOATS},
          {"STAGE_FLOATS", T::STAGE_FLOATS},
          {"PRODUCTS", T::PRODUCTS},
          {"SUM_STEPS", T::SUM_STEPS},
          {"ROUNDED", T::ROUNDED ? 1 : 0},
          {"A_TILES", T::A_TILES},
          {"SMEM_BYTES", T::SMEM_BYTES}};
}

/// Variant `name`: sgemm_wgmma<T>, launched by `launcher` (launch<T> if
/// none is given), with the workspace `wants` (workspace_parts<T> if none).
template <class T>
ladder::Variant variant(const char* name, const char* title, ladder::LaunchFn launcher = nullptr,
                        ladder::WorkspaceFn wants = nullptr) {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_wgmma<T>), NUM_THREADS,
                                  T::SMEM_BYTES};
  return {name,
          title,
          launcher ? launcher : launch<T>,
          ladder::accepts_any_size,
          kernel,
          constants<T>(),
          T::PRODUCTS == 3 ? ladder::Arithmetic::kFp32 : ladder::Arithmetic::kTf32,
          wants ? wants : workspace_parts<T>};
}

/// @brief This chapter as the runner and --describe see it: on TF32 with A
/// and B rounded, the tile the count picks (its constants and resources are
/// the 128 x 128 tile's), the same with A and B truncated ("truncated"),
/// the 128 x 128 tile as the variant "square", the 256 x 128 one as "wide",
/// the 64 x 128 one as "narrow". Chapter 17 runs the 3xTF32 tilings
/// (Split and the others) of the same kernel.
inline ladder::Chapter chapter() {
  return {
      "16-wgmma",
      "TMA and wgmma",
      __FILE__,
      {variant<Chosen>(ladder::kDefaultVariant, "TF32 on wgmma, the tile the count picks",
                       launch_by_count<>, workspace_rounded),
       variant<Truncated>("truncated", "TF32 on wgmma, A and B truncated, the tile the count picks",
                          launch_truncated_by_count, workspace_parts<Truncated>),
       variant<Chosen>("square", "TF32 on wgmma, 128 x 128 tiles"),
       variant<Wide>("wide", "TF32 on wgmma, 256 x 128 tiles"),
       variant<Narrow>("narrow", "TF32 on wgmma, 64 x 128 tiles")},
      true};
}

}  // namespace ch16
