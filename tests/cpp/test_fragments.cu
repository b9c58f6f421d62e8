// CPU checks of chapter 14's fragment functions and of the shared-memory
// loads that feed them: the kernel's own constexpr functions, called on the
// host for every lane and register. Nothing here runs on a GPU; it is
// compiled by nvcc because it includes the chapter's kernel header.
//
//   * over the 32 lanes, the fragment functions give every element of the
//     16 x 8 A tile, the 8 x 8 B tile and the 16 x 8 C tile to exactly one
//     (lane, register), and a lane's accumulators 0, 1 (and 2, 3) are two
//     neighbouring columns of one row, as the float2 store of C needs;
//   * a_frag_index and b_frag_index read each element of a warp's part of As
//     and Bs exactly once per stage, at as_index and bs_index;
//   * the bank model finds every fragment load of Chosen (every warp, mma
//     tile, step and stage) conflict-free, and the same loads with unpadded
//     rows 8-way (A) and 4-way (B);
//   * the rule of the [strides] comment: an A load is conflict-free exactly
//     when A_STRIDE % 32 is 4, 12, 20 or 28, a B load exactly when
//     B_STRIDE % 32 is 8 or 24.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ladder/bank_model.hpp>
#include <utility>
#include <vector>

#include "chapters/14-tf32/kernel.cuh"

namespace {

constexpr int kWarp = 32;
using Chosen = ch14::Chosen;

/// Chosen with rows of As and Bs of other lengths: the layouts the padding
/// is compared against. Everything else is Chosen's.
template <class T, int A_STRIDE_, int B_STRIDE_>
struct WithStrides : T {
  static constexpr int A_STRIDE = A_STRIDE_;
  static constexpr int B_STRIDE = B_STRIDE_;
  static constexpr int A_STAGE_FLOATS = T::BM * A_STRIDE;
  static constexpr int STAGE_FLOATS = A_STAGE_FLOATS + T::BK * B_STRIDE;
};
using Unpadded = ch14::Unpadded;
using Swizzled = ch14::Swizzled;

// ------------------------------------------------------------------ the tiles

/// How many (lane, register) pairs hold each element of a rows x cols tile.
template <class Row, class Col>
std::vector<int> holders(int rows, int cols, int registers, Row row, Col col) {
  std::vector<int> count(rows * cols, 0);
  for (int lane = 0; lane < kWarp; ++lane) {
    for (int r = 0; r < registers; ++r) {
      const int m = row(lane, r), n = col(lane, r);
      EXPECT_TRUE(m >= 0 && m < rows && n >= 0 && n < cols)
          << "lane " << lane << " register " << r << " holds (" << m << ", " << n << ")";
      if (m >= 0 && m < rows && n >= 0 && n < cols) ++count[m * cols + n];
    }
  }
  return count;
}

TEST(Chapter14Fragments, EachElementOfEachTileHasOneHolder) {
  const std::vector<int> a = holders(16, 8, 4, ch14::a_frag_row, ch14::a_frag_col);
  const std::vector<int> b = holders(8, 8, 2, ch14::b_frag_row, ch14::b_frag_col);
  const std::vector<int> c = holders(16, 8, 4, ch14::c_frag_row, ch14::c_frag_col);
  for (int n : a) EXPECT_EQ(n, 1);
  for (int n : b) EXPECT_EQ(n, 1);
  for (int n : c) EXPECT_EQ(n, 1);
  static_assert(Chosen::MMA_M == 16 && Chosen::MMA_N == 8 && Chosen::MMA_K == 8);
}

TEST(Chapter14Fragments, AccumulatorPairsAreNeighboursInARow) {
  for (int lane = 0; lane < kWarp; ++lane) {
    for (int r = 0; r < 4; r += 2) {
      EXPECT_EQ(ch14::c_frag_row(lane, r), ch14::c_frag_row(lane, r + 1));
      EXPECT_EQ(ch14::c_frag_col(lane, r) % 2, 0) << "a float2 store needs an even column";
      EXPECT_EQ(ch14::c_frag_col(lane, r + 1), ch14::c_frag_col(lane, r) + 1);
    }
  }
}

// ------------------------------------------------------- the loads, by element

/// The fragment loads of warp row warp_m read each element of its WM rows of
/// As once per stage, where as_index puts it; likewise for Bs.
template <class T>
void check_fragments_cover_the_warps_tiles() {
  for (int warp_m = 0; warp_m < T::WARPS_M; ++warp_m) {
    std::vector<int> reads(T::BM * T::A_STRIDE, 0);
    for (int mi = 0; mi < T::MI; ++mi) {
      for (int kk = 0; kk < T::BK / T::MMA_K; ++kk) {
        for (int lane = 0; lane < kWarp; ++lane) {
          for (int r = 0; r < 4; ++r) {
            const int index = ch14::a_frag_index<T>(warp_m, mi, kk, lane, r);
            ASSERT_GE(index, 0);
            ASSERT_LT(index, T::A_STAGE_FLOATS);
            ++reads[index];
          }
        }
      }
    }
    for (int m = 0; m < T::BM; ++m) {
      const bool mine = m / T::WM == warp_m;
      for (int k = 0; k < T::BK; ++k) {
        EXPECT_EQ(reads[ch14::as_index<T>(m, k)], mine ? 1 : 0) << "As (" << m << ", " << k << ")";
      }
    }
  }
  for (int warp_n = 0; warp_n < T::WARPS_N; ++warp_n) {
    std::vector<int> reads(T::BK * T::B_STRIDE, 0);
    for (int ni = 0; ni < T::NI; ++ni) {
      for (int kk = 0; kk < T::BK / T::MMA_K; ++kk) {
        for (int lane = 0; lane < kWarp; ++lane) {
          for (int r = 0; r < 2; ++r) {
            const int index = ch14::b_frag_index<T>(warp_n, ni, kk, lane, r);
            ASSERT_GE(index, 0);
            ASSERT_LT(index, T::BK * T::B_STRIDE);
            ++reads[index];
          }
        }
      }
    }
    for (int k = 0; k < T::BK; ++k) {
      for (int n = 0; n < T::BN; ++n) {
        const bool mine = n / T::WN == warp_n;
        EXPECT_EQ(reads[ch14::bs_index<T>(k, n)], mine ? 1 : 0) << "Bs (" << k << ", " << n << ")";
      }
    }
  }
}

TEST(Chapter14Fragments, LoadsReadEachElementOfTheWarpsTilesOnce) {
  check_fragments_cover_the_warps_tiles<Chosen>();
  check_fragments_cover_the_warps_tiles<Unpadded>();
  check_fragments_cover_the_warps_tiles<Swizzled>();
}

// --------------------------------------------------------- the loads, in banks

/// Wavefronts of the 4-byte load of register r of every lane's A fragment
/// (mma tile row mi of warp row warp_m, step kk, in stage `stage`).
template <class T>
int a_wavefronts(int stage, int warp_m, int mi, int kk, int r) {
  std::vector<std::uint32_t> addresses(kWarp);
  for (int lane = 0; lane < kWarp; ++lane) {
    const int index = stage * T::STAGE_FLOATS + ch14::a_frag_index<T>(warp_m, mi, kk, lane, r);
    addresses[lane] = static_cast<std::uint32_t>(index * sizeof(float));
  }
  return ladder::bank::analyze(addresses, 4).wavefronts;
}

template <class T>
int b_wavefronts(int stage, int warp_n, int ni, int kk, int r) {
  std::vector<std::uint32_t> addresses(kWarp);
  for (int lane = 0; lane < kWarp; ++lane) {
    const int index = stage * T::STAGE_FLOATS + T::A_STAGE_FLOATS +
                      ch14::b_frag_index<T>(warp_n, ni, kk, lane, r);
    addresses[lane] = static_cast<std::uint32_t>(index * sizeof(float));
  }
  return ladder::bank::analyze(addresses, 4).wavefronts;
}

/// Every fragment load of tiling T, in every stage, takes `a` wavefronts
/// (the A loads) and `b` wavefronts (the B loads).
template <class T>
void check_every_load(int a, int b) {
  for (int stage = 0; stage < T::STAGES; ++stage) {
    for (int kk = 0; kk < T::BK / T::MMA_K; ++kk) {
      for (int warp_m = 0; warp_m < T::WARPS_M; ++warp_m) {
        for (int mi = 0; mi < T::MI; ++mi) {
          for (int r = 0; r < 4; ++r) {
            ASSERT_EQ(a_wavefronts<T>(stage, warp_m, mi, kk, r), a)
                << "A: stage " << stage << ", warp row " << warp_m << ", tile " << mi << ", step "
                << kk << ", register " << r;
          }
        }
      }
      for (int warp_n = 0; warp_n < T::WARPS_N; ++warp_n) {
        for (int ni = 0; ni < T::NI; ++ni) {
          for (int r = 0; r < 2; ++r) {
            ASSERT_EQ(b_wavefronts<T>(stage, warp_n, ni, kk, r), b)
                << "B: stage " << stage << ", warp column " << warp_n << ", tile " << ni
                << ", step " << kk << ", register " << r;
          }
        }
      }
    }
  }
}

TEST(Chapter14Banks, ChosenLoadsAreConflictFree) { check_every_load<Chosen>(1, 1); }

TEST(Chapter14Banks, UnpaddedLoadsAre8WayForAAnd4WayForB) {
  // A: the 8 groups g read rows g of 32 floats, all in the same 4 banks.
  // B: the 4 places t read rows t of 128 floats, all in the same 8 banks.
  check_every_load<Unpadded>(8, 4);
}

TEST(Chapter14Banks, SwizzledLoadsAreConflictFree) { check_every_load<Swizzled>(1, 1); }

/// The layout of tiling T puts every element of a stage's As and Bs at its
/// own index, inside the stage, and keeps each 16-byte piece that a copy
/// writes whole and aligned: 4 consecutive floats starting at a multiple of 4.
template <class T>
void check_layout_is_a_placement() {
  std::vector<int> used(T::STAGE_FLOATS, 0);
  for (int m = 0; m < T::BM; ++m) {
    for (int k = 0; k < T::BK; ++k) {
      const int i = ch14::as_index<T>(m, k);
      ASSERT_TRUE(i >= 0 && i < T::A_STAGE_FLOATS) << "As (" << m << ", " << k << ")";
      ++used[i];
      if (k % 4 == 0) {
        EXPECT_EQ(i % 4, 0) << "As piece at (" << m << ", " << k << ")";
      } else {
        EXPECT_EQ(i, ch14::as_index<T>(m, k - 1) + 1) << "As (" << m << ", " << k << ")";
      }
    }
  }
  for (int k = 0; k < T::BK; ++k) {
    for (int n = 0; n < T::BN; ++n) {
      const int i = T::A_STAGE_FLOATS + ch14::bs_index<T>(k, n);
      ASSERT_TRUE(i >= T::A_STAGE_FLOATS && i < T::STAGE_FLOATS) << "Bs (" << k << ", " << n << ")";
      ++used[i];
      if (n % 4 == 0) {
        EXPECT_EQ(i % 4, 0) << "Bs piece at (" << k << ", " << n << ")";
      } else {
        EXPECT_EQ(i, T::A_STAGE_FLOATS + ch14::bs_index<T>(k, n - 1) + 1)
            << "Bs (" << k << ", " << n << ")";
      }
    }
  }
  for (int i = 0; i < T::STAGE_FLOATS; ++i) ASSERT_LE(used[i], 1) << "word " << i;
}

TEST(Chapter14Banks, EveryLayoutPlacesEachElementOnceInWholePieces) {
  check_layout_is_a_placement<Chosen>();
  check_layout_is_a_placement<Unpadded>();
  check_layout_is_a_placement<Swizzled>();
}

// The [strides] rule, stride by stride over one period of 32 banks.
template <int... Pad>
void check_a_strides(std::integer_sequence<int, Pad...>) {
  const auto one = [](auto pad) {
    constexpr int stride = Chosen::BK + decltype(pad)::value;
    using T = WithStrides<Chosen, stride, Chosen::B_STRIDE>;
    const bool rule =
        stride % 32 == 4 || stride % 32 == 12 || stride % 32 == 20 || stride % 32 == 28;
    int worst = 0;
    for (int r = 0; r < 4; ++r) worst = std::max(worst, a_wavefronts<T>(0, 0, 0, 0, r));
    EXPECT_EQ(worst == 1, rule) << "A_STRIDE " << stride << ": " << worst << " wavefronts";
  };
  (one(std::integral_constant<int, Pad>{}), ...);
}

template <int... Pad>
void check_b_strides(std::integer_sequence<int, Pad...>) {
  const auto one = [](auto pad) {
    constexpr int stride = Chosen::BN + decltype(pad)::value;
    using T = WithStrides<Chosen, Chosen::A_STRIDE, stride>;
    const bool rule = stride % 32 == 8 || stride % 32 == 24;
    int worst = 0;
    for (int r = 0; r < 2; ++r) worst = std::max(worst, b_wavefronts<T>(0, 0, 0, 0, r));
    EXPECT_EQ(worst == 1, rule) << "B_STRIDE " << stride << ": " << worst << " wavefronts";
  };
  (one(std::integral_constant<int, Pad>{}), ...);
}

TEST(Chapter14Banks, TheStridesRuleHoldsForEveryPad) {
  check_a_strides(std::make_integer_sequence<int, 32>{});
  check_b_strides(std::make_integer_sequence<int, 32>{});
  // Chapter 10's pad of one float would leave the A loads 4-way conflicted.
  using PadOne = WithStrides<Chosen, Chosen::BK + 1, Chosen::B_STRIDE>;
  EXPECT_EQ(a_wavefronts<PadOne>(0, 0, 0, 0, 0), 4);
}

}  // namespace
