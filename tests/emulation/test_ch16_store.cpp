// Chapter 16's stores of C on the CPU emulation. Its kernel needs wgmma and
// TMA, which the emulation does not run; but where each value lands is
// tiling.cuh's plain code: stored_values(), whose shuffle (spread columns) runs
// here as a rendezvous of the warp's 32 fibers, and c_store_col(). The
// kernel below is the epilogue's loop of sgemm_wgmma.cuh over 16 rows of
// the tile, for all 8 consumer warps.
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/16-wgmma/tiling.cuh"

namespace {

constexpr int kRowGroups = 2;  // j = 0 and 1: rows 0 to 15 of the tile
constexpr int kRows = 8 * kRowGroups;
constexpr int kConsumerWarps = ch16::CONSUMERS * ch16::WARPGROUP / 32;

// Each accumulator holds the index of the element of C it belongs to
// (c_row(), c_col()), so a store that puts a value anywhere else shows.
template <bool SPREAD>
__global__ void store_rows(float* tile) {
  const int consumer_warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float d[4 * kRowGroups];
  for (int j = 0; j < kRowGroups; ++j)
    for (int r = 0; r < 4; ++r)
      d[4 * j + r] = static_cast<float>(ch16::c_row(lane, j, r) * ch16::BN +
                                        ch16::c_col(consumer_warp, lane, r, SPREAD));
  for (int j = 0; j < kRowGroups; ++j) {
    float v[4];
    ch16::stored_values<SPREAD>(d, j, lane, v);
    for (int r = 0; r < 4; ++r)
      tile[ch16::c_row(lane, j, r) * ch16::BN + ch16::c_store_col(consumer_warp, lane, r, SPREAD)] =
          v[r];
  }
}

template <bool SPREAD>
void check_stores() {
  std::vector<float> tile(kRows * ch16::BN, NAN);  // an element never stored stays NaN
  ASSERT_NO_THROW(ladder_emulation::launch(store_rows<SPREAD>, dim3(1),
                                           dim3(kConsumerWarps * 32))(tile.data()));
  for (int i = 0; i < kRows * ch16::BN; ++i)
    EXPECT_EQ(tile[i], static_cast<float>(i)) << "spread " << SPREAD << ", element " << i;
}

}  // namespace

TEST(Emulated, Ch16StoresColumnsInOrder) { check_stores<false>(); }

TEST(Emulated, Ch16StoresSpreadColumnsAfterTheExchange) { check_stores<true>(); }
