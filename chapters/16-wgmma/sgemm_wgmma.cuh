// Chapter 16's kernels: sgemm_wgmma, the product (a producer warpgroup
// copies the tiles with TMA, two consumer warpgroups multiply them with
// wgmma), and the pass over A that may run before it (convert_a(): A
// rounded for TF32, A's small part for 3xTF32, chapter 17). A sum the tensor
// cores leave not finite is computed again in FP32 (fp32_where_not_finite()).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "../14-tf32/kernel.cuh"
#include "counts.cuh"
#include "pipeline.cuh"
#include "slices.cuh"
#include "tiling.cuh"

namespace ch16 {

// [convert-a]
/// Converts A (count floats, a multiple of 4) once before the product, as
/// tiling T's product reads it (convert_four()): into `big`, A rounded,
/// where T is ROUNDED; into `small`, A's small part, on 3xTF32. Truncated, A
/// itself is the big part: wgmma drops the low 13 bits of what it reads. The
/// product's copies then bring these into shared memory in place of A's
/// tile (big) and beside it (small).
template <class T>
__global__ void convert_a(const float* A, long long count, float* big, float* small) {
  asm volatile("griddepcontrol.launch_dependents;");  // the product may start
  const long long stride = 4ll * gridDim.x * blockDim.x;
  for (long long i = 4ll * (blockIdx.x * blockDim.x + threadIdx.x); i < count; i += stride) {
    const FourParts parts = convert_four<T>(*reinterpret_cast<const float4*>(A + i));
    if constexpr (T::ROUNDED) *reinterpret_cast<uint4*>(big + i) = parts.big;
    if constexpr (T::PRODUCTS == 3) *reinterpret_cast<uint4*>(small + i) = parts.small;
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
      const int m = tile_m + c_row(lane, j, r),
                n = tile_n + c_col(consumer_warp, lane, r, T::SPREAD);
      if (!isfinite(d[4 * j + r]) && m < M && n < N) {
        d[4 * j + r] = ch14::fp32_dot(A, B, N, K, m, n, k_begin, k_end);
      }
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
/// one of STAGES buffers (on 3xTF32 A's small part too, from map_small); on
/// chip, its other warps convert A's tile in each (convert_a_tiles()).
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
                const __grid_constant__ CUtensorMap map_small, const float* A, const float* B,
                float* C, int M, int N, int K, float alpha, float beta, float* partials,
                LastRound cut) {
  constexpr int BM = T::BM, STAGES = T::STAGES, STAGE_FLOATS = T::STAGE_FLOATS;
  extern __shared__ unsigned char smem_raw[];
  float* tiles = aligned_tiles(smem_raw);
  __shared__ uint64_t full[STAGES], empty[STAGES], ready[T::ON_CHIP ? STAGES : 1];
  const int warpgroup = threadIdx.x / WARPGROUP;
  // The block's share; its tile in chapter 12's grouped order.
  const BlockWork work = block_work(cut, blockIdx.x);
  const ch14::TileCoord tile = ch14::block_tile<T>(work.tile, (M + BM - 1) / BM, (N + BN - 1) / BN);
  const int tile_m = tile.row * BM, tile_n = tile.col * BN;
  const int steps = work.end_step - work.first_step;  // the copies fill zeros past K, M and N

  init_stage_barriers<T>(full, empty, ready);
  // Where a pass over A runs first (convert_a()), this block may
  // start while it still runs (launch()); it waits here until that pass has
  // finished and what it wrote is in memory.
  if constexpr (T::PASS_OVER_A) asm volatile("griddepcontrol.wait;" ::: "memory");

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
        if constexpr (T::PRODUCTS == 3 && !T::ON_CHIP)  // A's small part, after B's tile
          tma_load_2d(Bs + BN * BK, &map_small, k, tile_m, &full[s]);
      }
    } else if constexpr (T::ON_CHIP) {
      if (threadIdx.x >= WARPGROUP - CONVERTERS)  // A's tiles, converted on chip
        convert_a_tiles<T>(tiles, full, ready, steps, threadIdx.x - (WARPGROUP - CONVERTERS));
    }
  } else {  // a consumer: its 64 columns of the tile (n), four warps of 16
    if constexpr (T::CONSUMER_REGISTERS > 0) claim_registers<T::CONSUMER_REGISTERS>();
    const int consumer = warpgroup - 1, warp = (threadIdx.x % WARPGROUP) / 32;
    const int lane = threadIdx.x % 32, t = lane % 4;
    const int consumer_warp = consumer * (WARPGROUP / 32) + warp;
    // The lane's two columns of B: its rows g and g + 8 of B^T.
    const int n0 = c_col(consumer_warp, lane, 0, T::SPREAD);
    const int n1 = c_col(consumer_warp, lane, 2, T::SPREAD);
    float d[BM / 2] = {};  // 64 rows of C^T by BM columns, over the warpgroup's 128 lanes
    if constexpr (T::PRODUCTS == 1) {
      consume_tf32<T>(d, tiles, full, empty, ready, steps, n0, n1, t);
    } else {
      consume_3xtf32<T>(d, tiles, full, empty, ready, steps, n0, n1, t);
    }
    // A sum the tensor cores leave not finite is FP32's own ([not-finite]).
    const int k_end = work.end_step * BK < K ? work.end_step * BK : K;
    fp32_where_not_finite<T>(d, A, B, M, N, K, tile_m, tile_n, consumer_warp, lane,
                             work.first_step * BK, k_end);

    // d holds C^T; c_row() and c_store_col() say where each value lands in C
    // (stored_values(), [c-store]).
    // Unrolled, so that d is indexed by constants and stays in registers.
    if (work.slice >= 0) {  // a slice: its sums as they are, into its matrix
      float* out = partials + static_cast<size_t>(work.slice) * BM * BN;
#pragma unroll
      for (int j = 0; j < BM / 8; ++j) {
        float v[4];
        stored_values<T::SPREAD>(d, j, lane, v);
#pragma unroll
        for (int r = 0; r < 4; ++r)
          out[c_row(lane, j, r) * BN + c_store_col(consumer_warp, lane, r, T::SPREAD)] = v[r];
      }
      add_slices<T>(partials, cut, work, C, M, N, alpha, beta, tile_m, tile_n,
                    threadIdx.x - WARPGROUP);
      return;
    }
#pragma unroll
    for (int j = 0; j < BM / 8; ++j) {
      float v[4];
      stored_values<T::SPREAD>(d, j, lane, v);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int m = tile_m + c_row(lane, j, r),
                  n = tile_n + c_store_col(consumer_warp, lane, r, T::SPREAD);
        if (m < M && n < N) {
          float* c = C + static_cast<size_t>(m) * N + n;
          *c = alpha * v[r] + (beta != 0.0f ? beta * *c : 0.0f);
        }
      }
    }
  }
}
// [end]

}  // namespace ch16
