// Chapter 16's cut last round, on the GPU: the blocks of a cut tile's
// slices each write their sums, wait until every slice has, and add their
// share of the tile into C (add_slices()). Which tiles are cut, and into how
// many slices, is decided on the host (last_round() in counts.cuh); chapter
// 17's page teaches it.
#pragma once

#include "../13-tail/kernel.cuh"
#include "counts.cuh"
#include "tiling.cuh"

namespace ch16 {

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

}  // namespace ch16
