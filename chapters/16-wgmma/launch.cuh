// Chapter 16's launch of any tiling T, for chapters 16 and 17: which path a
// product takes (TMA's copies, aligned copies of the matrices, or chapter
// 14's or 15's kernel), its workspace, the pass over A and the early launch
// after it, the cut last round, and a tiling as a variant the runner and
// --describe see. Chapter 16's own choices (the tile by the count, on chip
// where it pays) and the chapter are in kernel.cuh; chapter 17 includes this
// file alone. It needs the sm_90a target (an H100 or H200). Products whose
// rows TMA cannot copy (K or N not a multiple of 4) run on aligned copies in
// the workspace the harness gives (chapter 13's launch_packed()); without
// one, chapter 14's mma.sync kernel runs them, or chapter 15's for 3xTF32.
#pragma once

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
#include "counts.cuh"
#include "maps.cuh"
#include "sgemm_wgmma.cuh"
#include "tiling.cuh"

namespace ch16 {

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

/// The floats a pass over A writes before the product (convert_a()): A's
/// small part on 3xTF32, and A rounded (big) where T is ROUNDED.
template <class T>
long long parts_floats(int M, int K) {
  if constexpr (!T::PASS_OVER_A) return 0;
  return ((T::PRODUCTS == 3 ? 1ll : 0ll) + (T::ROUNDED ? 1ll : 0ll)) * M * K;
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
/// for 3xTF32, also where the workspace has no room for A's parts). Where T
/// has a pass over A, convert_a() first writes A's parts into the workspace. Where the
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
  // A's parts at the start of the workspace: small (3xTF32), then big
  // (rounded).
  const long long part = T::PASS_OVER_A ? 1ll * g.M * g.K : 0;
  float* small = g.workspace;
  float* big = small + (T::PRODUCTS == 3 ? part : 0);
  static const EncodeTiled encode = encode_tiled();
  static const bool smem_granted = ladder::allow_dynamic_smem(sgemm_wgmma<T>, T::SMEM_BYTES);
  (void)smem_granted;
  // The maps of the last product, reused while the matrices stay the same.
  static ladder::Gemm last{};
  static CUtensorMap map_a, map_b, map_small;
  if (g.A != last.A || g.B != last.B || g.M != last.M || g.N != last.N || g.K != last.K ||
      g.workspace != last.workspace) {
    // Rounded by a pass, wgmma reads A's rounded big part in place of A.
    const bool copies_parts = T::PRODUCTS == 3 && T::PASS_OVER_A;
    const float* a = T::ROUNDED && T::PASS_OVER_A ? big : g.A;
    map_a = row_major_map(encode, a, g.M, g.K, T::BM);
    map_b = row_major_map(encode, g.B, g.K, g.N, BK);
    map_small = copies_parts ? row_major_map(encode, small, g.M, g.K, T::BM) : map_a;
    last = g;
  }
  static const int sms = ch13::sm_count();
  if constexpr (T::PASS_OVER_A) {
    // A pass over A first (convert_a()): 256 threads a block, at most 8
    // blocks an SM.
    const long long count = 1ll * g.M * g.K;
    const int blocks = static_cast<int>(std::min<long long>((count / 4 + 255) / 256, 8ll * sms));
    convert_a<T><<<blocks, 256, 0, stream>>>(g.A, count, big, small);
  }
  float* partials = g.workspace + parts;
  LastRound cut = last_round<T>(g.M, g.N, g.K, sms);
  // A cut tile's slices add into C four floats at a time (add_slices()):
  // C must start on a 16-byte boundary for that.
  if (g.workspace_floats - parts < slices_floats<T>() ||
      cut.tiles - cut.whole_tiles > kMaxCutTiles || !on_16_bytes(g.C))
    cut = uncut<T>(g.M, g.N, g.K);
  // The product as convert_a()'s programmatic dependent: its blocks may
  // start as convert_a() ends, and wait inside for its parts
  // (griddepcontrol.wait).
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(last_round_blocks(cut));
  config.blockDim = dim3(NUM_THREADS);
  config.dynamicSmemBytes = T::SMEM_BYTES;
  config.stream = stream;
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = T::PASS_OVER_A ? 1 : 0;
  config.attrs = &early;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, sgemm_wgmma<T>, map_a, map_b, map_small, g.A, g.B, g.C,
                                g.M, g.N, g.K, g.alpha, g.beta, partials, cut));
}
// [end]

/// Why this GPU cannot run chapter `slug` (16 or 17), or empty when it can:
/// wgmma and TMA as built here need compute capability 9.0 exactly.
inline std::string unsupported_gpu(const cudaDeviceProp& prop,
                                   const std::string& slug = "16-wgmma") {
  if (prop.major == 9 && prop.minor == 0) return {};
  return slug + ": this GPU is sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
         "; wgmma and TMA as built here need sm_90 (an H100 or H200)";
}

/// Tiling T's constants, for --describe and the book; on 3xTF32 also how
/// often the corrections are scaled into the accumulators.
template <class T>
std::vector<ladder::Constant> constants() {
  std::vector<ladder::Constant> c = {{"BM", T::BM},
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
                                     {"SPREAD", T::SPREAD ? 1 : 0},
                                     {"A_TILES", T::A_TILES},
                                     {"SMEM_BYTES", T::SMEM_BYTES}};
  if (T::PRODUCTS == 3) c.push_back({"CORRECTION_STAGES", kCorrectionStages});
  return c;
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

}  // namespace ch16
