// Chapter 16's pipeline: the ring of stages in shared memory, its
// barriers, and the consumers' loops over K that wait for a stage, multiply
// it with wgmma (on TF32, or on 3xTF32 with chapter 15's three products) and
// hand it back to the producer. The kernel that runs them is in
// sgemm_wgmma.cuh; the instructions are in ptx.cuh.
#pragma once

#include <cstdint>

#include "../14-tf32/kernel.cuh"
#include "ptx.cuh"
#include "tiling.cuh"

namespace ch16 {

static_assert(kSmallScale == ch14::kSmallScale,
              "A's small parts (truncated_small()) and B's (ch14::split_tf32()) share one scale");

// The dynamic shared memory from its first 1024-byte boundary, where the
// swizzled tiles must start. Offsetting the array itself (not a cast
// integer) keeps the pointer known to be in shared memory, so that its loads
// compile to LDS.
__device__ float* aligned_tiles(unsigned char* raw) {
  return reinterpret_cast<float*>(raw + (1024 - smem_address(raw) % 1024) % 1024);
}

// [stages]
/// Each stage's barriers: "full" takes the producer's one arrival (with the
/// bytes its copies bring), "empty" one arrival from every consumer thread,
/// and on chip "ready" one from each converter warp (convert_a_tiles()).
/// The whole block waits until they are initialised.
template <class T>
__device__ void init_stage_barriers(uint64_t* full, uint64_t* empty, uint64_t* ready) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < T::STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CONSUMERS * WARPGROUP);
      if constexpr (T::ON_CHIP) mbarrier_init(&ready[s], CONVERTERS / 32);
    }
  }
  __syncthreads();
}
// [end]

// [convert-four]
/// Four of A's floats as tiling T's product reads them, the same in a pass
/// over A (convert_a()) and on chip (convert_a_tiles()): `big`, what wgmma
/// reads in A's place, and on 3xTF32 `small`. On TF32, big is A rounded
/// (chapter 14's to_tf32()). On 3xTF32 with A rounded, both are chapter
/// 14's split_tf32()'s; truncated, big is A itself (wgmma drops the low 13
/// bits) and small truncated_small().
struct FourParts {
  uint4 big;
  uint4 small;
};

template <class T>
__device__ FourParts convert_four(float4 x) {
  const float v[4] = {x.x, x.y, x.z, x.w};
  uint32_t big[4], small[4] = {};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    if constexpr (T::PRODUCTS == 1) {
      big[r] = ch14::to_tf32(v[r]);
    } else if constexpr (T::ROUNDED) {
      const ch14::Split p = ch14::split_tf32(v[r]);
      big[r] = p.big;
      small[r] = p.small;
    } else {
      big[r] = __float_as_uint(v[r]);
      small[r] = __float_as_uint(truncated_small(v[r]));
    }
  }
  return {make_uint4(big[0], big[1], big[2], big[3]),
          make_uint4(small[0], small[1], small[2], small[3])};
}
// [end]

// [convert]
/// On chip (T::ON_CHIP), the producer's CONVERTERS threads do what a pass
/// over A would have done, one stage at a time: wait for the stage's copies,
/// then write what convert_four() makes of A's tile: A rounded in its own
/// place (where ROUNDED), A's small part beside B's tile (on 3xTF32). Each
/// float is changed where it lies, so the swizzle stays as the copy left it.
/// The proxy fence orders each thread's writes before wgmma reads them
/// (through the async proxy); once the warp's threads have all fenced, its
/// first arrives on the stage's "ready", which the consumers wait for.
template <class T>
__device__ void convert_a_tiles(float* tiles, uint64_t* full, uint64_t* ready, int steps,
                                int converter) {
  constexpr int A_FLOATS = T::BM * BK;
  for (int kt = 0; kt < steps; ++kt) {
    const int s = kt % T::STAGES;
    mbarrier_wait(&full[s], (kt / T::STAGES) & 1);
    float* As = tiles + s * T::STAGE_FLOATS;
    float* a_small = As + A_FLOATS + BN * BK;  // after B's tile, as the copies would put it
#pragma unroll 4
    for (int i = 4 * converter; i < A_FLOATS; i += 4 * CONVERTERS) {
      const FourParts parts = convert_four<T>(*reinterpret_cast<const float4*>(As + i));
      if constexpr (T::ROUNDED) *reinterpret_cast<uint4*>(As + i) = parts.big;
      if constexpr (T::PRODUCTS == 3) *reinterpret_cast<uint4*>(a_small + i) = parts.small;
    }
    fence_proxy_async();
    __syncwarp();
    if (converter % 32 == 0) mbarrier_arrive(&ready[s]);
  }
}
// [end]

/// Waits until stage s of step kt holds what the consumers multiply: its
/// copies, and on chip A's tile converted.
template <class T>
__device__ void wait_stage(uint64_t* full, uint64_t* ready, int kt) {
  const int s = kt % T::STAGES;
  mbarrier_wait(&full[s], (kt / T::STAGES) & 1);
  if constexpr (T::ON_CHIP) mbarrier_wait(&ready[s], (kt / T::STAGES) & 1);
}

// [consume]
/// B^T's fragment for one step of 8 along K of a stage's B tile: the lane's
/// rows g and g + 8 of B^T, which are B's columns n0 and n1 (c_col()), at
/// columns k and k + 4 (B's rows), k = 8 step + t.
__device__ void load_bt_fragment(float (&b)[4], const float* Bs, int step, int n0, int n1, int t) {
  const int k = 8 * step + t;
  b[0] = Bs[b_tile_index(k, n0)];
  b[1] = Bs[b_tile_index(k, n1)];
  b[2] = Bs[b_tile_index(k + 4, n0)];
  b[3] = Bs[b_tile_index(k + 4, n1)];
}

/// One consumer's loop over K on TF32: for each stage, wait for it
/// (wait_stage()), load B^T's fragments, issue the stage's four wgmma, wait
/// for them, and hand the stage back to the producer.
template <class T>
__device__ void consume_tf32(float (&d)[T::BM / 2], const float* tiles, uint64_t* full,
                             uint64_t* empty, uint64_t* ready, int steps, int n0, int n1, int t) {
  for (int kt = 0; kt < steps; ++kt) {
    const int s = kt % T::STAGES;
    wait_stage<T>(full, ready, kt);
    const float* As = tiles + s * T::STAGE_FLOATS;
    const float* Bs = As + T::BM * BK;
    // B^T's fragments for the stage's four steps, loaded before the first wgmma.
    uint32_t b[BK / 8][4];
#pragma unroll
    for (int step = 0; step < BK / 8; ++step) {
      float f[4];
      load_bt_fragment(f, Bs, step, n0, n1, t);
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

/// The same on 3xTF32. A's small part lies in the stage after A's and B's
/// tiles (copied, or converted on chip); A's own tile is its big part. The
/// consumer splits its B^T fragments in registers (chapter 14's
/// split_tf32()). For every SUM_STEPS steps the tensor cores sum big * big
/// into `sum` from zero, and an FP32 addition adds `sum` into d. The two
/// corrections, small * big and big * small, come out 2^10 too large
/// (kSmallScale), so they have sums of their own, `corrections`; every
/// kCorrectionStages stages, and at the end, an FFMA scales them back into d.
/// Chapter 15's corrections take big_finite, so that an infinity meets only
/// zeros there. Here big stands in for it, A's and B^T's alike: where A or B
/// holds an infinity or NaN, big * big holds it too (x * inf is never
/// finite), so d is not finite; such a d keeps no correction, and is
/// computed again in FP32 (fp32_where_not_finite()). A stage then holds one
/// part of A, not two.
template <class T>
__device__ void consume_3xtf32(float (&d)[T::BM / 2], const float* tiles, uint64_t* full,
                               uint64_t* empty, uint64_t* ready, int steps, int n0, int n1, int t) {
  constexpr int A_FLOATS = T::BM * BK;
  float sum[T::BM / 2], corrections[T::BM / 2];
  for (int kt = 0; kt < steps; ++kt) {
    const int s = kt % T::STAGES;
    wait_stage<T>(full, ready, kt);
    const float* As = tiles + s * T::STAGE_FLOATS;
    const float* Bs = As + A_FLOATS;
    const float* a_small = Bs + BN * BK;
    ch14::Split b[BK / 8][4];
#pragma unroll
    for (int step = 0; step < BK / 8; ++step) {
      float f[4];
      load_bt_fragment(f, Bs, step, n0, n1, t);
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
        wgmma_rs(corrections, small, descriptor_128b(As) + 2 * step, !(fresh && step == 0));
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

}  // namespace ch16
