// Chapter 14's kernel, its launcher and its description: everything but
// main(), which is in kernel.cu. The first chapter of Part II: the same
// product on the tensor cores, with mma.sync on TF32 inputs. Chapter 15
// includes this header and runs the same kernel with three products per
// multiply (3xTF32).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <ladder/arch.hpp>
#include <ladder/runner.cuh>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "chapters 14 and 15 need sm_80 or newer: mma.sync on TF32 arrived with the A100"
#endif

namespace ch14 {

// [rules]
/// Returns `sentence`, the rule that a tiling breaks (not constexpr, so that
/// reaching it in a static_assert quotes the rule, as in Part I).
inline const char* broken_rule(const char* sentence) { return sentence; }

/// How the rows of the shared tiles As and Bs are laid out: kPlain, rows of
/// BK (As) and BN (Bs) floats; kPadded, rows padded as [strides] derives;
/// kSwizzled, rows of BK and BN floats whose 16-byte pieces are permuted as
/// [smem-index] derives.
enum Layout : int { kPlain = 0, kPadded = 1, kSwizzled = 2 };

/// @brief Every rule that the tile sizes of the mma.sync kernel must meet, over
/// plain ints; Tiling checks its own with it at compile time. The parameters
/// are Tiling's (see there).
/// @return nullptr when the sizes meet every rule, otherwise the first rule broken.
constexpr const char* tiling_error(int BM, int BN, int BK, int WM, int WN, int STAGES, int PRODUCTS,
                                   int GROUP_M, int STEP_SUMS, int LAYOUT) {
  if (BM < 1 || BN < 1 || BK < 1 || WM < 1 || WN < 1 || STAGES < 2 || GROUP_M < 1) {
    return broken_rule("tile sizes and GROUP_M must be positive, and STAGES at least 2");
  }
  if (PRODUCTS != 1 && PRODUCTS != 3) return broken_rule("PRODUCTS is 1 (TF32) or 3 (3xTF32)");
  if (STEP_SUMS != 0 && STEP_SUMS != 1) return broken_rule("STEP_SUMS is 0 or 1");
  if (LAYOUT != kPlain && LAYOUT != kPadded && LAYOUT != kSwizzled)
    return broken_rule("LAYOUT is kPlain, kPadded or kSwizzled");
  if (LAYOUT == kSwizzled && (BK % 32 != 0 || BN % 32 != 0)) {
    return broken_rule("a swizzled row needs BK and BN multiples of 32: 8 pieces to permute");
  }
  if (WM % 16 != 0 || WN % 8 != 0 || BK % 8 != 0) {
    return broken_rule("a warp tile is whole 16 x 8 mma tiles, and BK whole steps of 8");
  }
  if (BM % WM != 0 || BN % WN != 0) return broken_rule("warp tiles must tile the block tile");
  const int threads = (BM / WM) * (BN / WN) * 32;
  if (threads > 1024) return broken_rule("a block has at most 1024 threads");
  if (BN % 16 != 0) return broken_rule("rows of Bs are padded for BN % 16 == 0 (see B_STRIDE)");
  if ((BM * BK / 4) % threads != 0 || (BK * BN / 4) % threads != 0) {
    return broken_rule("the threads' 16-byte copies must cover each tile exactly");
  }
  const int stage_floats = BM * (BK + 4) + BK * (BN + 8);
  if (STAGES * stage_floats * 4 > ladder::arch::kHopper.smem_per_block_optin) {
    return broken_rule(
        "the stages must fit the 227 KiB of shared memory a block can have on sm_90");
  }
  return nullptr;
}
// [end]

// [tiling]
/// @brief One configuration of the mma.sync kernel.
///
/// @tparam BM_ rows of the block tile of C (and of the A tile in shared memory)
/// @tparam BN_ columns of the block tile of C (and of the B tile)
/// @tparam BK_ the step along K: the A tile is BM x BK, the B tile BK x BN
/// @tparam WM_ rows of the tile of C that one warp computes (whole 16-row mma tiles)
/// @tparam WN_ columns of the tile of C that one warp computes (whole 8-column mma tiles)
/// @tparam STAGES_ tiles in flight: the block computes on one stage while the
///         copies of the next STAGES - 1 are under way (cp.async)
/// @tparam PRODUCTS_ tensor-core products per multiply: 1 (TF32, this
///         chapter) or 3 (3xTF32, chapter 15)
/// @tparam GROUP_M_ rows of block tiles in one raster group, as in chapter 12
/// @tparam STEP_SUMS_ 0: the tensor cores add every product into the
///         accumulators, across all of K; 1: they sum one step's products
///         (8 of K) from zero, and an FP32 addition adds that into the
///         accumulators (chapter 15: the tensor cores' additions truncate)
/// @tparam LAYOUT_ how rows of As and Bs are laid out (Layout): padded as
///         [strides] derives, plain (to measure the conflicts the pads
///         remove), or swizzled as [smem-index] derives
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int PRODUCTS_, int GROUP_M_,
          int STEP_SUMS_ = 0, int LAYOUT_ = kPadded>
struct Tiling {
  static constexpr int BM = BM_;
  static constexpr int BN = BN_;
  static constexpr int BK = BK_;
  static constexpr int WM = WM_;
  static constexpr int WN = WN_;
  static constexpr int STAGES = STAGES_;
  static constexpr int PRODUCTS = PRODUCTS_;
  static constexpr int GROUP_M = GROUP_M_;
  static constexpr int STEP_SUMS = STEP_SUMS_;
  static constexpr int LAYOUT = LAYOUT_;

  static constexpr int WARP_SIZE = 32;
  /// The shape of one mma.sync.m16n8k8: a 16 x 8 tile of C from a 16 x 8
  /// tile of A and an 8 x 8 tile of B.
  static constexpr int MMA_M = 16;
  static constexpr int MMA_N = 8;
  static constexpr int MMA_K = 8;
  static constexpr int WARPS_M = BM / WM;
  static constexpr int WARPS_N = BN / WN;
  static constexpr int NUM_THREADS = WARPS_M * WARPS_N * WARP_SIZE;
  /// mma tiles down a warp tile, and across it.
  static constexpr int MI = WM / MMA_M;
  static constexpr int NI = WN / MMA_N;

  // [strides]
  // A lane reads its A fragment at rows g (+8) and columns t (+4) of As,
  // where g = lane / 4 and t = lane % 4. With rows of A_STRIDE floats, lane
  // (g, t) hits bank (g * A_STRIDE + t) % 32: the 8 groups need rows that
  // start 4 banks apart, A_STRIDE % 32 in {4, 12, 20, 28}; BK + 4 is one
  // when BK % 8 == 0. The B fragment sits at rows t (+4) and column g of
  // Bs: bank (t * B_STRIDE + g) % 32, so the 4 values of t need rows 8
  // banks apart, B_STRIDE % 32 in {8, 24}; BN + 8 is one when BN % 16 == 0.
  // Both strides stay multiples of 4 floats, so every 16-byte copy lands
  // aligned. Unpadded (A_STRIDE = 32, B_STRIDE = 128 at the chosen sizes),
  // all 8 groups of an A load hit the same 4 banks and the 4 places of a B
  // load the same 8: 8-way and 4-way conflicts.
  static constexpr int A_PAD = LAYOUT == kPadded ? 4 : 0;
  static constexpr int B_PAD = LAYOUT == kPadded ? 8 : 0;
  static constexpr int A_STRIDE = BK + A_PAD;
  static constexpr int B_STRIDE = BN + B_PAD;
  // [end]
  static constexpr int A_STAGE_FLOATS = BM * A_STRIDE;
  static constexpr int STAGE_FLOATS = A_STAGE_FLOATS + BK * B_STRIDE;
  static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * int(sizeof(float));
  /// 16-byte pieces of the A tile, and of the B tile, that each thread copies per step.
  static constexpr int A_COPIES = BM * BK / 4 / NUM_THREADS;
  static constexpr int B_COPIES = BK * BN / 4 / NUM_THREADS;

  static_assert(tiling_error(BM, BN, BK, WM, WN, STAGES, PRODUCTS, GROUP_M, STEP_SUMS, LAYOUT) ==
                    nullptr,
                "the tile sizes break a rule of tiling_error()");
  static_assert(LAYOUT != kPadded || (A_STRIDE % 8 == 4 && B_STRIDE % 16 == 8),
                "the pads of [strides] must hold");
};
// [end]

// [chosen]
/// The configuration this chapter runs: a 128 x 128 block tile of four warps,
/// each 64 x 64 (4 x 8 mma tiles), BK = 32, three stages.
using Chosen = Tiling<128, 128, 32, 64, 64, 3, 1, 8>;
/// The same tiling with no pads: the fragment loads' bank conflicts that
/// [strides] derives, there to be measured.
using Unpadded = Tiling<128, 128, 32, 64, 64, 3, 1, 8, 0, kPlain>;
/// The same tiling with rows swizzled instead of padded ([smem-index]).
using Swizzled = Tiling<128, 128, 32, 64, 64, 3, 1, 8, 0, kSwizzled>;
// [end]

// [fragments]
// The PTX ISA fixes which elements of the 16 x 8 (A), 8 x 8 (B) and 16 x 8
// (C) tiles of one mma.sync.m16n8k8 each lane holds. Lane `lane` is in group
// g = lane / 4 and has place t = lane % 4 in it.

/// Row of the 16 x 8 A tile that register `r` (0 .. 3) of lane `lane` holds.
__host__ __device__ constexpr int a_frag_row(int lane, int r) { return lane / 4 + 8 * (r % 2); }
/// Column (k) of the 16 x 8 A tile that register `r` of lane `lane` holds.
__host__ __device__ constexpr int a_frag_col(int lane, int r) { return lane % 4 + 4 * (r / 2); }
/// Row (k) of the 8 x 8 B tile that register `r` (0 .. 1) of lane `lane` holds.
__host__ __device__ constexpr int b_frag_row(int lane, int r) { return lane % 4 + 4 * r; }
/// Column of the 8 x 8 B tile that register `r` of lane `lane` holds.
__host__ __device__ constexpr int b_frag_col(int lane, int) { return lane / 4; }
/// Row of the 16 x 8 C tile that accumulator `r` (0 .. 3) of lane `lane` holds.
__host__ __device__ constexpr int c_frag_row(int lane, int r) { return lane / 4 + 8 * (r / 2); }
/// Column of the 16 x 8 C tile that accumulator `r` of lane `lane` holds.
__host__ __device__ constexpr int c_frag_col(int lane, int r) { return 2 * (lane % 4) + r % 2; }
// [end]

// [smem-index]
// Swizzled (kSwizzled), a row keeps BK or BN floats and its 16-byte pieces
// trade places: piece p of row m of As is stored at piece p ^ (m % 8), and
// piece p of row k of Bs at piece p ^ (2 * (k % 4)). The A fragment's lane
// (g, t) reads row g (+8): its piece p lands at p ^ g, bank 4 * (p ^ g) + t,
// and the 8 values of g give 8 different pieces: 32 banks. The B fragment's
// lane (g, t) reads row t (+4), piece 2 * ni + g / 4 (plus a multiple of
// 8): bank (4 * ((2 * ni + g / 4) ^ 2t) + g % 4) % 32, again 32 banks. A
// piece stays 16 aligned bytes, and the 8 pieces of a group stay the same 8
// pieces, so the copies land whole and without conflicts, as unpadded.

/// Index in As (BM rows of A_STRIDE floats) of A tile element (m, k).
template <class T>
__host__ __device__ constexpr int as_index(int m, int k) {
  if constexpr (T::LAYOUT == kSwizzled) {
    return m * T::A_STRIDE + ((k / 4) ^ (m % 8)) * 4 + k % 4;
  } else {
    return m * T::A_STRIDE + k;
  }
}
/// Index in Bs (BK rows of B_STRIDE floats) of B tile element (k, n).
template <class T>
__host__ __device__ constexpr int bs_index(int k, int n) {
  if constexpr (T::LAYOUT == kSwizzled) {
    return k * T::B_STRIDE + ((n / 4) ^ (2 * (k % 4))) * 4 + n % 4;
  } else {
    return k * T::B_STRIDE + n;
  }
}
/// Index in As of register `r` of lane `lane`'s A fragment for mma tile row
/// `mi` of warp row `warp_m`, at step `kk` (0 .. BK / 8 - 1) of the tile.
template <class T>
__host__ __device__ constexpr int a_frag_index(int warp_m, int mi, int kk, int lane, int r) {
  return as_index<T>(warp_m * T::WM + mi * T::MMA_M + a_frag_row(lane, r),
                     kk * T::MMA_K + a_frag_col(lane, r));
}
/// Index in Bs of register `r` of lane `lane`'s B fragment for mma tile
/// column `ni` of warp column `warp_n`, at step `kk`.
template <class T>
__host__ __device__ constexpr int b_frag_index(int warp_n, int ni, int kk, int lane, int r) {
  return bs_index<T>(kk * T::MMA_K + b_frag_row(lane, r),
                     warp_n * T::WN + ni * T::MMA_N + b_frag_col(lane, r));
}
/// Row and first column of the A tile's 16-byte piece number `piece`
/// (0 .. BM * BK / 4 - 1): BK / 4 pieces per row, row after row.
template <class T>
__host__ __device__ constexpr int a_piece_row(int piece) {
  return piece / (T::BK / 4);
}
template <class T>
__host__ __device__ constexpr int a_piece_col(int piece) {
  return (piece % (T::BK / 4)) * 4;
}
/// Row and first column of the B tile's 16-byte piece number `piece`.
template <class T>
__host__ __device__ constexpr int b_piece_row(int piece) {
  return piece / (T::BN / 4);
}
template <class T>
__host__ __device__ constexpr int b_piece_col(int piece) {
  return (piece % (T::BN / 4)) * 4;
}
// [end]

// [raster]
/// The block tile of C that block number `block` computes, in groups of
/// GROUP_M tile rows walked column by column (chapter 12's order).
struct TileCoord {
  int row;
  int col;
};
template <class T>
__host__ __device__ constexpr TileCoord block_tile(int block, int tiles_m, int tiles_n) {
  const int blocks_per_group = T::GROUP_M * tiles_n;
  const int first_row = (block / blocks_per_group) * T::GROUP_M;
  const int rows_left = tiles_m - first_row;
  const int group_rows = rows_left < T::GROUP_M ? rows_left : T::GROUP_M;
  const int in_group = block % blocks_per_group;
  return {first_row + in_group % group_rows, in_group / group_rows};
}
// [end]

// [cp-async]
/// How a tile's copies check their edges. kExact: every tile is whole (M, N
/// and K multiples of BM, BN and BK), no checks. kAligned: K and N are
/// multiples of 4, so a 16-byte piece is wholly inside or wholly outside;
/// pieces outside are filled with zeros. kGeneral: any size, one float per
/// copy.
enum class Path { kExact, kAligned, kGeneral };

/// Starts copying `bytes` (4 or 16) from `src` (global) to `dst` (shared),
/// filling with zeros past the first `valid` bytes (0 or `bytes`): a copy
/// with valid = 0 reads nothing, so `src` may then point anywhere.
/// (Compiled for the host, as the tests' CPU emulation is, it copies at once.)
template <int bytes>
__device__ void cp_async(float* dst, const float* src, int valid) {
#if defined(__CUDA_ARCH__)
  const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_shared), "l"(src),
                 "r"(valid)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_shared), "l"(src),
                 "r"(valid)
                 : "memory");
  }
#else
  // A cp.async whose addresses are not multiples of its size fails on a GPU.
  const auto misaligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % bytes; };
  if (misaligned(dst) || (valid > 0 && misaligned(src))) __builtin_trap();
  for (int i = 0; i < bytes / 4; ++i) dst[i] = 4 * i < valid ? src[i] : 0.0f;
#endif
}

/// Closes the group of copies this thread has started since its last commit.
__device__ void cp_async_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ void cp_async_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

/// Starts the copies of one stage: thread `tid`'s pieces of the A tile at
/// (block_row, tile_k) and of the B tile at (tile_k, block_col).
template <class T, Path P>
__device__ void copy_tiles_async(float* As, float* Bs, const ladder::Gemm& g, int block_row,
                                 int block_col, int tile_k, int tid) {
#pragma unroll
  for (int c = 0; c < T::A_COPIES; ++c) {
    const int piece = tid + c * T::NUM_THREADS;
    const int r = a_piece_row<T>(piece), k = a_piece_col<T>(piece);
    const int row = block_row + r, col = tile_k + k;
    float* dst = &As[as_index<T>(r, k)];
    if constexpr (P == Path::kExact) {
      cp_async<16>(dst, &g.A[row * g.K + col], 16);
    } else if constexpr (P == Path::kAligned) {
      const bool inside = row < g.M && col < g.K;
      cp_async<16>(dst, inside ? &g.A[row * g.K + col] : g.A, inside ? 16 : 0);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool inside = row < g.M && col + e < g.K;
        cp_async<4>(dst + e, inside ? &g.A[row * g.K + col + e] : g.A, inside ? 4 : 0);
      }
    }
  }
#pragma unroll
  for (int c = 0; c < T::B_COPIES; ++c) {
    const int piece = tid + c * T::NUM_THREADS;
    const int k = b_piece_row<T>(piece), n = b_piece_col<T>(piece);
    const int row = tile_k + k, col = block_col + n;
    float* dst = &Bs[bs_index<T>(k, n)];
    if constexpr (P == Path::kExact) {
      cp_async<16>(dst, &g.B[row * g.N + col], 16);
    } else if constexpr (P == Path::kAligned) {
      const bool inside = row < g.K && col < g.N;
      cp_async<16>(dst, inside ? &g.B[row * g.N + col] : g.B, inside ? 16 : 0);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool inside = row < g.K && col + e < g.N;
        cp_async<4>(dst + e, inside ? &g.B[row * g.N + col + e] : g.B, inside ? 4 : 0);
      }
    }
  }
}
// [end]

/// A NaN's quiet bit, the highest of FP32's mantissa; the tensor cores keep it.
constexpr uint32_t kQuietBit = 0x00400000u;

// [tf32]
/// x rounded to TF32, to nearest with ties away from zero: FP32's sign and
/// 8-bit exponent with 10 of its 23 mantissa bits, the low 13 bits zero.
/// The result is an FP32 bit pattern, what mma.sync's .tf32 operands take.
/// A NaN stays a NaN: one whose payload lies only in the low 13 bits (0x7f800001,
/// say) would read as an infinity once they are dropped, so its quiet bit,
/// bit 22, is set.
__device__ uint32_t to_tf32(float x) {
  uint32_t bits;
#if defined(__CUDA_ARCH__)
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(bits) : "f"(x));
#else  // on the host (the tests' CPU emulation), the same on the bits:
  bits = __float_as_uint(x);  // add half of bit 13's unit, drop the 13 bits
  if (isfinite(x)) bits = (bits + 0x1000u) & 0xffffe000u;
#endif
  if (isnan(x)) bits |= kQuietBit;
  return bits;
}
// [end]

// [split]
/// An FP32 value as TF32 values for three products: big is x rounded to
/// TF32 (truncated where rounding would overflow to infinity), small is what
/// that dropped, times kSmallScale, rounded to TF32 in turn; big + small /
/// kSmallScale is within one unit of x's last place (two where big is
/// truncated). The two correction products, small * big and big * small,
/// take `big_finite`, which is big for a finite x and 0 otherwise, and small
/// is 0 for a non-finite x: an infinity or NaN then reaches C through
/// big * big alone, as it would in FP32, and never as 0 * Inf = NaN from a
/// correction.
struct Split {
  uint32_t big;
  uint32_t small;
  uint32_t big_finite;
};
/// The largest float that rounds to a finite TF32 value (its bits): above
/// it, and below infinity, rounding to nearest carries into the exponent.
constexpr uint32_t kLastRoundable = 0x7f7fefffu;
/// What small is scaled by: 2^10. What big drops is below 2^-10 of x, so
/// small stays below x, and finite, for every finite x, even once rounded.
/// Unscaled, small sits 2^11 or more below x, and for x under 2^-113 its
/// last bits fall below 2^-136, the smallest bit the tensor cores' TF32
/// keeps: 3xTF32 would lose its accuracy on small values.
/// Scaled, small keeps every bit it has for |x| >= 2^-123. The corrections
/// then come out 2^10 too large, and multiply() scales them back
/// (kSmallUnscale).
constexpr float kSmallScale = 1024.0f;
constexpr float kSmallUnscale = 1.0f / kSmallScale;
__device__ Split split_tf32(float x) {
  const bool finite = isfinite(x);
  // A finite x is held to kLastRoundable first, which rounds down: beyond
  // it, big is x truncated, not infinity.
  const float held = copysignf(fminf(fabsf(x), __uint_as_float(kLastRoundable)), x);
  const uint32_t big = to_tf32(finite ? held : x);
  // x - big is exact (x and big are within a factor of 2), and so is its scaling.
  const uint32_t small = to_tf32(finite ? (x - __uint_as_float(big)) * kSmallScale : 0.0f);
  return {big, small, finite ? big : 0u};
}
// [end]

/// mma_tf32() in plain CUDA, what the tests' CPU emulation runs: lane (g, t)
/// computes its four elements of C itself, each row of A and column of B
/// gathered, element by element, from the lanes that hold them
/// ([fragments]), with the tensor cores' inputs (the low 13 bits ignored).
__device__ void mma_tf32_by_lanes(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  const int lane = threadIdx.x % 32;
  const auto tf32 = [](uint32_t bits) { return __uint_as_float(bits & 0xffffe000u); };
  for (int r = 0; r < 4; ++r) {
    const int row = c_frag_row(lane, r), col = c_frag_col(lane, r);  // row / 8 == r / 2
    float sum = 0.0f;
    for (int k = 0; k < 8; ++k) {
      // A(row, k) is register r / 2 + 2 (k / 4) of lane 4 (row % 8) + k % 4;
      // B(k, col) is register k / 4 of lane 4 col + k % 4.
      const uint32_t ak = __shfl_sync(0xffffffffu, a[r / 2 + 2 * (k / 4)], 4 * (row % 8) + k % 4);
      const uint32_t bk = __shfl_sync(0xffffffffu, b[k / 4], 4 * col + k % 4);
      sum += tf32(ak) * tf32(bk);
    }
    d[r] += sum;
  }
}

// [mma]
/// d += a * b on the tensor cores: one 16 x 8 x 8 product of TF32 inputs
/// with FP32 accumulators, by the whole warp. Each lane passes its four A
/// registers, two B registers and four accumulators (see [fragments]).
__device__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__)
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  mma_tf32_by_lanes(d, a, b);
#endif
}
// [end]

// [compute-tile]
/// One operand of an mma tile, as the lanes hold it: N registers of TF32
/// bit patterns, big parts and (PRODUCTS = 3 only) the rest of split_tf32().
template <int N>
struct Operand {
  uint32_t big[N];
  uint32_t small[N];
  uint32_t big_finite[N];
};

/// Reads one lane's operand registers from shared memory at `index(r)` and
/// rounds (PRODUCTS = 1) or splits (PRODUCTS = 3) them.
template <class T, int N, class Index>
__device__ Operand<N> load_operand(const float* smem, Index index) {
  Operand<N> op;
#pragma unroll
  for (int r = 0; r < N; ++r) {
    const float x = smem[index(r)];
    if constexpr (T::PRODUCTS == 1) {
      op.big[r] = to_tf32(x);
    } else {
      const Split s = split_tf32(x);
      op.big[r] = s.big;
      op.small[r] = s.small;
      op.big_finite[r] = s.big_finite;
    }
  }
  return op;
}

/// acc += a * b for one mma tile: one product, or three (the corrections
/// first, then big * big). The corrections come out 2^10 too large
/// (split_tf32()), so the tensor cores sum them from zero on their own and
/// an FFMA scales that back. With STEP_SUMS the tensor cores add this step's
/// big * big to that sum, and one FP32 addition per accumulator adds it in.
template <class T>
__device__ void multiply(float (&acc)[4], const Operand<4>& a, const Operand<2>& b) {
  float sum[4] = {};
  float(&d)[4] = T::STEP_SUMS ? sum : acc;
  if constexpr (T::PRODUCTS == 3) {
    float corrections[4] = {};
    mma_tf32(corrections, a.small, b.big_finite);
    mma_tf32(corrections, a.big_finite, b.small);
#pragma unroll
    for (int r = 0; r < 4; ++r) d[r] = fmaf(corrections[r], kSmallUnscale, d[r]);
  }
  mma_tf32(d, a.big, b.big);
  if constexpr (T::STEP_SUMS) {
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[r] += sum[r];
  }
}

/// Adds one stage's product, As (BM x BK) times Bs (BK x BN), to the warp's
/// accumulators: BK / 8 steps, each MI x NI mma tiles.
template <class T>
__device__ void compute_tile(float (&acc)[T::MI][T::NI][4], const float* As, const float* Bs,
                             int warp_m, int warp_n, int lane) {
#pragma unroll
  for (int kk = 0; kk < T::BK / T::MMA_K; ++kk) {
    Operand<4> a[T::MI];
    Operand<2> b[T::NI];
#pragma unroll
    for (int mi = 0; mi < T::MI; ++mi) {
      a[mi] =
          load_operand<T, 4>(As, [&](int r) { return a_frag_index<T>(warp_m, mi, kk, lane, r); });
    }
#pragma unroll
    for (int ni = 0; ni < T::NI; ++ni) {
      b[ni] =
          load_operand<T, 2>(Bs, [&](int r) { return b_frag_index<T>(warp_n, ni, kk, lane, r); });
    }
#pragma unroll
    for (int mi = 0; mi < T::MI; ++mi) {
#pragma unroll
      for (int ni = 0; ni < T::NI; ++ni) multiply<T>(acc[mi][ni], a[mi], b[ni]);
    }
  }
}
// [end]

// [not-finite]
/// FP32's own sum of row `row` of A (M x K) times column `col` of B (K x N),
/// over k_begin <= k < k_end: one fused multiply-add per k, in order of k.
/// Out of line (__noinline__): it is called only where a sum is not finite,
/// and inlined it would copy its loop once per accumulator. (`inline` is
/// C++'s leave to define it in a header, not a request to inline it.)
__device__ __noinline__ inline float fp32_dot(const float* A, const float* B, int N, int K, int row,
                                              int col, int k_begin, int k_end) {
  float sum = 0.0f;
  for (int k = k_begin; k < k_end; ++k) {
    sum = fmaf(A[static_cast<size_t>(row) * K + k], B[static_cast<size_t>(k) * N + col], sum);
  }
  return sum;
}

/// Each of a warp's sums that is not finite, computed again in FP32.
/// Rounding to TF32 can change a value's class: a value below 2^-137 rounds
/// to 0, so infinity times it gives NaN where FP32 gives an infinity, and a
/// value at or above 2^128 (1 - 2^-12) rounds to infinity. A sum that meets
/// either is not finite. Sums are almost always finite, so the common case
/// costs one test per sum and one branch. warp_row and warp_col are the
/// first row and column of the warp's part of C.
template <class T>
__device__ inline void fp32_where_not_finite(float (&acc)[T::MI][T::NI][4], const ladder::Gemm& g,
                                             int warp_row, int warp_col, int lane) {
  bool all_finite = true;
#pragma unroll
  for (int mi = 0; mi < T::MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < T::NI; ++ni) {
#pragma unroll
      for (int r = 0; r < 4; ++r) all_finite &= isfinite(acc[mi][ni][r]);
    }
  }
  if (all_finite) return;
#pragma unroll
  for (int mi = 0; mi < T::MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < T::NI; ++ni) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = warp_row + mi * T::MMA_M + c_frag_row(lane, r);
        const int col = warp_col + ni * T::MMA_N + c_frag_col(lane, r);
        if (!isfinite(acc[mi][ni][r]) && row < g.M && col < g.N) {
          acc[mi][ni][r] = fp32_dot(g.A, g.B, g.N, g.K, row, col, 0, g.K);
        }
      }
    }
  }
}
// [end]

// [kernel]
/// @brief C = alpha * A * B + beta * C on the tensor cores (mma.sync, TF32
/// inputs, FP32 accumulators), with a STAGES-deep cp.async pipeline.
///
/// Each block computes one BM x BN tile of C (block_tile()), each of its
/// warps a WM x WN part of it as MI x NI mma tiles.
///
/// @tparam T a Tiling.
/// @tparam P the edge checks (Path); kExact needs M % BM == N % BN == K % BK
///         == 0, kAligned needs K % 4 == N % 4 == 0.
/// @pre blockDim.x == T::NUM_THREADS, one block per tile of C, and
///      T::SMEM_BYTES of dynamic shared memory (see launch()).
template <class T, Path P>
__global__ void __launch_bounds__(T::NUM_THREADS) sgemm_mma(ladder::Gemm g) {
  extern __shared__ __align__(16) float smem[];
  const auto stage_as = [&](int s) { return smem + s * T::STAGE_FLOATS; };
  const auto stage_bs = [&](int s) { return smem + s * T::STAGE_FLOATS + T::A_STAGE_FLOATS; };

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / T::WARPS_N, warp_n = warp % T::WARPS_N;
  const int tiles_m = ladder::ceil_div(g.M, T::BM), tiles_n = ladder::ceil_div(g.N, T::BN);
  const TileCoord tile = block_tile<T>(blockIdx.x, tiles_m, tiles_n);
  const int block_row = tile.row * T::BM, block_col = tile.col * T::BN;
  const int k_tiles = ladder::ceil_div(g.K, T::BK);

  float acc[T::MI][T::NI][4] = {};

  // [pipeline]
  // Prologue: the first STAGES - 1 tiles start on their way. Every step
  // commits one group, empty or not, so that "group kt" is always tile kt's.
#pragma unroll
  for (int s = 0; s < T::STAGES - 1; ++s) {
    if (s < k_tiles) {
      copy_tiles_async<T, P>(stage_as(s), stage_bs(s), g, block_row, block_col, s * T::BK, tid);
    }
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Tile kt has landed (at most STAGES - 2 later groups are in flight),
    // and after the barrier every thread's part of it is visible, and every
    // thread is done with tile kt - 1, whose stage is refilled next.
    cp_async_wait<T::STAGES - 2>();
    __syncthreads();
    const int next = kt + T::STAGES - 1;
    if (next < k_tiles) {
      copy_tiles_async<T, P>(stage_as(next % T::STAGES), stage_bs(next % T::STAGES), g, block_row,
                             block_col, next * T::BK, tid);
    }
    cp_async_commit();
    compute_tile<T>(acc, stage_as(kt % T::STAGES), stage_bs(kt % T::STAGES), warp_m, warp_n, lane);
  }
  // [end pipeline]

  // [store-c]
  // A sum that is not finite is FP32's own ([not-finite]).
  fp32_where_not_finite<T>(acc, g, block_row + warp_m * T::WM, block_col + warp_n * T::WN, lane);
#pragma unroll
  for (int mi = 0; mi < T::MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < T::NI; ++ni) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // accumulators 0, 1 and then 2, 3: two rows
        const int r = 2 * half;
        const int row = block_row + warp_m * T::WM + mi * T::MMA_M + c_frag_row(lane, r);
        const int col = block_col + warp_n * T::WN + ni * T::MMA_N + c_frag_col(lane, r);
        const bool inside = row < g.M && col < g.N, next_inside = row < g.M && col + 1 < g.N;
        const float x = inside ? acc[mi][ni][r] : 0.0f;
        const float y = next_inside ? acc[mi][ni][r + 1] : 0.0f;
        float* out = &g.C[row * g.N + col];
        if constexpr (P == Path::kGeneral) {
          // Any N: the two columns may straddle the edge, and a float2 may be misaligned.
          if (inside) out[0] = g.alpha * x + (g.beta == 0.0f ? 0.0f : g.beta * out[0]);
          if (next_inside) {
            out[1] = g.alpha * y + (g.beta == 0.0f ? 0.0f : g.beta * out[1]);
          }
        } else if (P == Path::kExact || inside) {
          // N % 4 == 0 and col even: both columns are inside, 8-byte aligned.
          // BLAS semantics: with beta == 0, C is output only and is never read.
          const float2 c_in =
              g.beta == 0.0f ? make_float2(0.0f, 0.0f) : *reinterpret_cast<const float2*>(out);
          *reinterpret_cast<float2*>(out) =
              make_float2(g.alpha * x + g.beta * c_in.x, g.alpha * y + g.beta * c_in.y);
        }
      }
    }
  }
  // [end store-c]
}
// [end]

// [launch]
/// Whether `p` is a multiple of `bytes` (a power of two).
inline bool aligned_to(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/// The path that product `g` takes (see Path). The exact and aligned paths
/// copy 16-byte pieces of A and B and store pairs of C, so they also need A
/// and B 16-byte aligned and C 8-byte aligned, as cudaMalloc's are.
template <class T>
Path path_for(const ladder::Gemm& g) {
  if (!aligned_to(g.A, 16) || !aligned_to(g.B, 16) || !aligned_to(g.C, 8)) return Path::kGeneral;
  if (g.M % T::BM == 0 && g.N % T::BN == 0 && g.K % T::BK == 0) return Path::kExact;
  if (g.N % 4 == 0 && g.K % 4 == 0) return Path::kAligned;
  return Path::kGeneral;
}

/// Launches sgemm_mma<T, P> on one block per tile of C.
template <class T, Path P>
void launch_path(const ladder::Gemm& g, cudaStream_t stream) {
  static const bool smem_granted = ladder::allow_dynamic_smem(sgemm_mma<T, P>, T::SMEM_BYTES);
  (void)smem_granted;
  const int blocks = ladder::ceil_div(g.M, T::BM) * ladder::ceil_div(g.N, T::BN);
  sgemm_mma<T, P><<<blocks, T::NUM_THREADS, T::SMEM_BYTES, stream>>>(g);
}

/// @brief Launches the mma.sync kernel for any M, N, K on the path the size allows.
/// @tparam T a Tiling.
template <class T>
void launch(const ladder::Gemm& g, cudaStream_t stream) {
  switch (path_for<T>(g)) {
    case Path::kExact:
      return launch_path<T, Path::kExact>(g, stream);
    case Path::kAligned:
      return launch_path<T, Path::kAligned>(g, stream);
    case Path::kGeneral:
      return launch_path<T, Path::kGeneral>(g, stream);
  }
}
// [end]

// [fits]
/// Runs `chapter` on a variant that fits the GPU. The GPU a run asks for
/// (--device, or 0) gives a block a limit of shared memory: 227 KiB on an
/// H100, 99 KiB on an RTX 30, 40 or 50 (ladder/arch.hpp). A variant asked for
/// by name (--variant) that takes more is refused in one line, exit code 2.
/// Without --variant, where the chapter's own variant takes more, the first
/// of its variants that fits runs, and one line says so; where none fits, the
/// run is refused. --describe and --help, and a machine with no GPU, go
/// straight to the runner. `program_file` is the caller's __FILE__ (kernel.cu), which
/// --describe names. $LADDER_SMEM_PER_BLOCK, where it is lower than
/// the GPU's limit, stands in for it: a larger GPU then tries a smaller one's
/// choice (the GPU tests gpu.14-tf32.99kib*, gpu.15-3xtf32.99kib).
inline int run_fitting(const ladder::Chapter& chapter, int argc, char** argv,
                       const char* program_file) {
  int device = 0;
  const char* asked = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--describe" || arg == "--help")
      return ladder::run_chapter(chapter, argc, argv, program_file);
    if (arg == "--device" && i + 1 < argc) device = std::atoi(argv[i + 1]);
    if (arg == "--variant" && i + 1 < argc) asked = argv[i + 1];
  }
  int cc_major = 0, cc_minor = 0, smem = 0, threads = 0, registers = 0;
  if (cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&registers, cudaDevAttrMaxRegistersPerBlock, device) != cudaSuccess) {
    cudaGetLastError();  // no GPU: the runner reports it
    return ladder::run_chapter(chapter, argc, argv, program_file);
  }
  if (const char* lower = std::getenv("LADDER_SMEM_PER_BLOCK"))
    smem = std::min(smem, std::atoi(lower));
  const ladder::arch::Arch gpu =
      ladder::arch::with_limits(10 * cc_major + cc_minor, smem, threads, registers);
  auto fits = [&](const ladder::Variant& v) {
    return ladder::arch::why_not(gpu, v.kernel.dynamic_smem_bytes, v.kernel.threads_per_block) ==
           nullptr;
  };
  const ladder::Variant& own = chapter.variants.front();
  const std::string name = asked ? asked : own.name;
  for (const ladder::Variant& v : chapter.variants) {
    if (v.name != name || fits(v)) continue;
    if (asked) {
      std::fprintf(stderr,
                   "%s: variant %s takes %d bytes of shared memory a block; this GPU gives at "
                   "most %d\n",
                   chapter.slug.c_str(), name.c_str(), v.kernel.dynamic_smem_bytes, smem);
      return 2;
    }
    for (const ladder::Variant& other : chapter.variants) {
      if (!fits(other)) continue;
      std::fprintf(stderr,
                   "%s: this GPU gives a block at most %d bytes of shared memory and the "
                   "chapter's own variant takes %d; running the variant %s\n",
                   chapter.slug.c_str(), smem, own.kernel.dynamic_smem_bytes, other.name.c_str());
      std::string flag = "--variant", choice = other.name;
      std::vector<char*> args(argv, argv + argc);
      args.push_back(flag.data());
      args.push_back(choice.data());
      return ladder::run_chapter(chapter, static_cast<int>(args.size()), args.data(), program_file);
    }
    std::fprintf(stderr,
                 "%s: this GPU gives a block at most %d bytes of shared memory; no variant of "
                 "the chapter fits (the chapter's own takes %d)\n",
                 chapter.slug.c_str(), smem, own.kernel.dynamic_smem_bytes);
    return 2;
  }
  return ladder::run_chapter(chapter, argc, argv, program_file);
}
// [end]

// [describe]
/// The parameters of tiling `T` and every constant derived from them.
template <class T>
std::vector<ladder::Constant> constants() {
  return {{"BM", T::BM},
          {"BN", T::BN},
          {"BK", T::BK},
          {"WM", T::WM},
          {"WN", T::WN},
          {"STAGES", T::STAGES},
          {"PRODUCTS", T::PRODUCTS},
          {"GROUP_M", T::GROUP_M},
          {"STEP_SUMS", T::STEP_SUMS},
          {"LAYOUT", T::LAYOUT},
          {"WARP_SIZE", T::WARP_SIZE},
          {"MMA_M", T::MMA_M},
          {"MMA_N", T::MMA_N},
          {"MMA_K", T::MMA_K},
          {"WARPS_M", T::WARPS_M},
          {"WARPS_N", T::WARPS_N},
          {"NUM_THREADS", T::NUM_THREADS},
          {"MI", T::MI},
          {"NI", T::NI},
          {"A_PAD", T::A_PAD},
          {"B_PAD", T::B_PAD},
          {"A_STRIDE", T::A_STRIDE},
          {"B_STRIDE", T::B_STRIDE},
          {"A_STAGE_FLOATS", T::A_STAGE_FLOATS},
          {"STAGE_FLOATS", T::STAGE_FLOATS},
          {"SMEM_BYTES", T::SMEM_BYTES},
          {"A_COPIES", T::A_COPIES},
          {"B_COPIES", T::B_COPIES}};
}

/// Variant `name`: sgemm_mma<T> and its launcher. The exact path's kernel
/// stands for the three in the resource report.
template <class T>
ladder::Variant variant(const char* name, const char* title, ladder::Arithmetic arithmetic) {
  const ladder::KernelInfo kernel{reinterpret_cast<const void*>(sgemm_mma<T, Path::kExact>),
                                  T::NUM_THREADS, T::SMEM_BYTES};
  return {name, title, launch<T>, ladder::accepts_any_size, kernel, constants<T>(), arithmetic};
}

/// @brief This chapter as the runner and --describe see it: the TF32 kernel.
inline ladder::Chapter chapter() {
  return {"14-tf32",
          "TF32 on mma.sync",
          __FILE__,
          {variant<Chosen>(ladder::kDefaultVariant, "TF32 on mma.sync", ladder::Arithmetic::kTf32),
           variant<Unpadded>("unpadded", "TF32 on mma.sync, shared memory not padded",
                             ladder::Arithmetic::kTf32),
           variant<Swizzled>("swizzled", "TF32 on mma.sync, shared memory swizzled",
                             ladder::Arithmetic::kTf32)},
          true};
}
// [end]

}  // namespace ch14
