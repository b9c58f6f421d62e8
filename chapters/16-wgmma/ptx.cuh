// Chapter 16's PTX: each function here is one instruction (or one wait
// loop around one), named by the instruction, and for wgmma by its shape and
// types. Shared-memory addresses, mbarriers, the TMA copy, setmaxnreg, and
// wgmma with its descriptor, fences and the accumulator operand lists. The
// algorithm that uses them is in pipeline.cuh and sgemm_wgmma.cuh.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (the driver is reached through the runtime)

#include <cstdint>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error \
    "Chapter 16 needs the sm_90a target (wgmma, setmaxnreg): -gencode=arch=compute_90a,code=sm_90a"
#endif

namespace ch16 {

// [primitives]
__device__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(count));
  // Make the initialised barrier visible to the copy engine (the async proxy).
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arrives on the barrier once (no bytes expected).
__device__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
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

// Makes this thread's ordinary stores to shared memory visible to the async
// proxy (wgmma reading a tile through its descriptor, TMA): a thread that
// writes a tile for wgmma runs this fence before it arrives on the barrier
// the consumers wait on.
__device__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

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

// d += B^T * A^T for one step of 8 along K, m64n128k8, B^T's fragment in
// registers and A's tile through its descriptor.
__device__ void wgmma_m64n128k8_f32_tf32_rs(float (&d)[64], const uint32_t (&b)[4], uint64_t desc_a,
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

// The same with wgmma.m64n64k8: B^T * A^T for 64 columns (rows of A).
__device__ void wgmma_m64n64k8_f32_tf32_rs(float (&d)[32], const uint32_t (&b)[4], uint64_t desc_a,
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

#define LADDER_D128_TEXT                                                                           \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "     \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "     \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, " \
  "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "     \
  "%124, %125, %126, %127}"

// The same with wgmma.m64n256k8: B^T * A^T for 256 columns (rows of A).
__device__ void wgmma_m64n256k8_f32_tf32_rs(float (&d)[128], const uint32_t (&b)[4],
                                            uint64_t desc_a, int accumulate) {
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
  wgmma_m64n64k8_f32_tf32_rs(d, b, desc_a, accumulate);
}
__device__ void wgmma_rs(float (&d)[64], const uint32_t (&b)[4], uint64_t desc_a, int accumulate) {
  wgmma_m64n128k8_f32_tf32_rs(d, b, desc_a, accumulate);
}
__device__ void wgmma_rs(float (&d)[128], const uint32_t (&b)[4], uint64_t desc_a, int accumulate) {
  wgmma_m64n256k8_f32_tf32_rs(d, b, desc_a, accumulate);
}

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
// [end]

}  // namespace ch16
