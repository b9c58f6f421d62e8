// CPU checks of the index arithmetic of chapters 10 to 13 and 16: the kernels'
// own constexpr index functions, called on the host for every thread of a
// block. Nothing here runs on a GPU; it is compiled by nvcc because it
// includes the chapters' kernel headers.
//
// For each tiling checked:
//   * the A tile's stores put every element of the BM x BK tile in its own
//     place of As, inside As, where the compute loop's reads expect it;
//   * the compute loop's A reads are four consecutive floats, aligned for the
//     access width the layout allows;
//   * the B tile's 16-byte stores cover the BK x BN tile exactly once;
//   * the threads' result blocks cover the BM x BN tile of C exactly once;
//   * the bank model finds every warp's A store conflict-free (one wavefront)
//     in both layouts, and (BK / 4)-way conflicted without padding;
//   * chapter 12's raster order visits every tile of C exactly once;
//   * chapter 13's schedules give every step of every tile of C to exactly
//     one block, number a tile's slices or turns in K's order so that no
//     stream-K block waits for more than a block's first segment, and its
//     count picks as the chapter derives.
// Whether the kernels compute the right product, edges included, is checked
// by running their own code on the CPU (tests/emulation), not here.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ladder/bank_model.hpp>
#include <set>
#include <vector>

#include "chapters/09-autotuning/kernel.cuh"
#include "chapters/10-padding/kernel.cuh"
#include "chapters/11-double-buffering/kernel.cuh"
#include "chapters/12-final/kernel.cuh"
#include "chapters/13-tail/kernel.cuh"
#include "chapters/16-wgmma/counts.cuh"

namespace {

constexpr int kWarp = 32;

// ---------------------------------------------------------------- the checks

/// Every A store: in bounds, each (m, k) written once, and at as_index(m, k),
/// which is where a_load_index() reads it.
template <class T, class AsIndex, class StoreIndex>
void check_a_stores(AsIndex as_index, StoreIndex a_store_index) {
  std::vector<int> writes(T::BK * T::A_STRIDE, 0);
  for (int tid = 0; tid < T::NUM_THREADS; ++tid) {
    for (int c = 0; c < T::A_COPIES; ++c) {
      for (int e = 0; e < 4; ++e) {
        const int index = a_store_index(tid, c, e);
        ASSERT_GE(index, 0);
        ASSERT_LT(index, T::BK * T::A_STRIDE);
        ++writes[index];
      }
    }
  }
  int written = 0;
  for (int count : writes) {
    ASSERT_LE(count, 1) << "an element of As is written twice";
    written += count;
  }
  EXPECT_EQ(written, T::BM * T::BK) << "the stores must cover the BM x BK tile";
  // Each element of the tile is reachable through as_index, and distinct.
  std::vector<int> seen(T::BK * T::A_STRIDE, 0);
  for (int m = 0; m < T::BM; ++m) {
    for (int k = 0; k < T::BK; ++k) {
      const int index = as_index(m, k);
      ASSERT_GE(index, 0);
      ASSERT_LT(index, T::BK * T::A_STRIDE);
      ASSERT_EQ(seen[index]++, 0);
      ASSERT_EQ(writes[index], 1) << "element (" << m << ", " << k << ") is never stored";
    }
  }
}

/// The compute loop's A reads: four consecutive floats at as_index(row, dot),
/// aligned to the width load_a_operands() uses for this stride.
template <class T, class AsIndex, class LoadIndex, class ThreadRow>
void check_a_loads(AsIndex as_index, LoadIndex a_load_index, ThreadRow thread_row) {
  const int alignment = T::A_STRIDE % 4 == 0 ? 4 : (T::A_STRIDE % 2 == 0 ? 2 : 1);
  for (int tid = 0; tid < T::NUM_THREADS; ++tid) {
    for (int dot = 0; dot < T::BK; ++dot) {
      for (int wm = 0; wm < T::WMITER; ++wm) {
        for (int i = 0; i < T::TM; i += 4) {
          const int index = a_load_index(tid, dot, wm, i);
          ASSERT_EQ(index % alignment, 0);
          for (int j = 0; j < 4; ++j) {
            ASSERT_EQ(index + j, as_index(thread_row(tid, wm) + i + j, dot));
          }
        }
      }
    }
  }
}

/// B stores (16 bytes each) cover the BK x BN tile once; C blocks cover the
/// BM x BN tile once.
template <class T, class BStore, class ThreadRow, class ThreadCol>
void check_b_and_c(BStore b_store_index, ThreadRow thread_row, ThreadCol thread_col) {
  std::vector<int> b(T::BK * T::BN, 0);
  for (int tid = 0; tid < T::NUM_THREADS; ++tid) {
    for (int c = 0; c < T::B_COPIES; ++c) {
      const int index = b_store_index(tid, c);
      ASSERT_EQ(index % 4, 0);
      for (int e = 0; e < 4; ++e) ++b[index + e];
    }
  }
  for (int count : b) ASSERT_EQ(count, 1);
  std::vector<int> c(T::BM * T::BN, 0);
  for (int tid = 0; tid < T::NUM_THREADS; ++tid) {
    for (int wm = 0; wm < T::WMITER; ++wm) {
      for (int i = 0; i < T::TM; ++i) {
        for (int wn = 0; wn < T::WNITER; ++wn) {
          for (int j = 0; j < T::TN; ++j) {
            ++c[(thread_row(tid, wm) + i) * T::BN + thread_col(tid, wn) + j];
          }
        }
      }
    }
  }
  for (int count : c) ASSERT_EQ(count, 1);
}

/// The largest number of wavefronts any warp's 4-byte A store takes.
template <class T, class StoreIndex>
int worst_a_store_wavefronts(StoreIndex a_store_index) {
  int worst = 0;
  for (int warp = 0; warp < T::NUM_THREADS / kWarp; ++warp) {
    for (int c = 0; c < T::A_COPIES; ++c) {
      for (int e = 0; e < 4; ++e) {
        std::vector<std::uint32_t> addresses(kWarp);
        for (int lane = 0; lane < kWarp; ++lane) {
          addresses[lane] = a_store_index(warp * kWarp + lane, c, e) * sizeof(float);
        }
        const int wavefronts = ladder::bank::analyze(addresses, 4).wavefronts;
        if (wavefronts > worst) worst = wavefronts;
      }
    }
  }
  return worst;
}

// Chapter by chapter: the same checks through each chapter's functions.
#define LADDER_CHECK_TILING(ns, T)                                                                 \
  do {                                                                                             \
    check_a_stores<T>([](int m, int k) { return ns::as_index<T>(m, k); },                          \
                      [](int t, int c, int e) { return ns::a_store_index<T>(t, c, e); });          \
    check_a_loads<T>([](int m, int k) { return ns::as_index<T>(m, k); },                           \
                     [](int t, int d, int wm, int i) { return ns::a_load_index<T>(t, d, wm, i); }, \
                     [](int t, int wm) { return ns::thread_row<T>(t, wm); });                      \
    check_b_and_c<T>([](int t, int c) { return ns::b_store_index<T>(t, c); },                      \
                     [](int t, int wm) { return ns::thread_row<T>(t, wm); },                       \
                     [](int t, int wn) { return ns::thread_col<T>(t, wn); });                      \
    EXPECT_EQ(worst_a_store_wavefronts<T>(                                                         \
                  [](int t, int c, int e) { return ns::a_store_index<T>(t, c, e); }),              \
              1)                                                                                   \
        << "an A store is bank-conflicted";                                                        \
  } while (0)

// ---------------------------------------------------------------- chapter 10

TEST(Chapter10, ChosenPadded) { LADDER_CHECK_TILING(ch10, ch10::Chosen); }

TEST(Chapter10, ChosenSwizzled) {
  using T = ch10::WithALayout<ch10::Chosen, ch10::ALayout::kSwizzled>;
  LADDER_CHECK_TILING(ch10, T);
}

TEST(Chapter10, PaddingByBK) {
  // BK = 8 pads by 4 (rows stay 16-byte aligned), BK = 16 by 2, BK = 32 by 1.
  using BK8 = ch10::Tiling<64, 128, 8, 32, 64, 2, 8, 4, 128>;
  using BK32 = ch10::Tiling<64, 128, 32, 32, 64, 2, 8, 4, 128>;
  static_assert(BK8::A_STRIDE == 68 && ch10::Chosen::A_STRIDE == 66 && BK32::A_STRIDE == 65);
  LADDER_CHECK_TILING(ch10, BK8);
  LADDER_CHECK_TILING(ch10, BK32);
  using BK32Swizzled = ch10::WithALayout<BK32, ch10::ALayout::kSwizzled>;
  LADDER_CHECK_TILING(ch10, BK32Swizzled);
}

TEST(Chapter10, UnpaddedStoreIsBK4Way) {
  // Chapter 09's layout (stride BM) through the same store mapping: a warp
  // covers 32 / (BK / 4) rows, so each store is (BK / 4)-way conflicted.
  using T = ch09::Chosen;
  const int wavefronts = worst_a_store_wavefronts<T>(
      [](int t, int c, int e) { return ch09::a_store_index<T>(t, c, e); });
  EXPECT_EQ(wavefronts, T::BK / 4);
}

// ---------------------------------------------------------------- chapter 11

TEST(Chapter11, Chosen) {
  LADDER_CHECK_TILING(ch11, ch11::Chosen);
  // Two stages, each As then Bs, every one 16-byte aligned.
  static_assert(ch11::Chosen::A_STAGE_FLOATS % 4 == 0 && ch11::Chosen::STAGE_FLOATS % 4 == 0);
}

// ---------------------------------------------------------------- chapter 12

/// Raster groups of 8 tile rows (chapter 12's choice before its sweep).
using Ch12Group8 = ch12::Tiling<128, 128, 8, 32, 64, 2, 8, 4, 256, 2, 8>;

using Ch12Bk16 = ch12::Tiling<128, 128, 16, 64, 32, 2, 8, 4, 256, 2, 8>;
using Ch12Wide = ch12::Tiling<128, 256, 8, 64, 64, 2, 8, 4, 256, 1, 16>;
using Ch12Small = ch12::Tiling<64, 64, 8, 32, 32, 2, 4, 4, 128, 2, 3>;

TEST(Chapter12, Tilings) {
  LADDER_CHECK_TILING(ch12, ch12::Chosen);
  LADDER_CHECK_TILING(ch12, Ch12Bk16);
  LADDER_CHECK_TILING(ch12, Ch12Wide);
  LADDER_CHECK_TILING(ch12, Ch12Small);
  using Swizzled = ch12::WithALayout<Ch12Bk16, ch12::ALayout::kSwizzled>;
  LADDER_CHECK_TILING(ch12, Swizzled);
  // The padded layout keeps rows of As 16-byte aligned only when the pad,
  // 32 / BK floats, is a multiple of 4: at BK = 8, not at BK = 16.
  static_assert(Ch12Group8::A_STRIDE % 4 == 0, "BK = 8 keeps 16-byte A reads");
  static_assert(Ch12Bk16::A_STRIDE % 4 != 0, "BK = 16 padding breaks 16-byte alignment");
}

template <class T>
void check_raster(int tiles_m, int tiles_n) {
  std::vector<int> visits(tiles_m * tiles_n, 0);
  for (int block = 0; block < tiles_m * tiles_n; ++block) {
    const ch12::TileCoord t = ch12::block_tile<T>(block, tiles_m, tiles_n);
    ASSERT_GE(t.row, 0);
    ASSERT_LT(t.row, tiles_m);
    ASSERT_GE(t.col, 0);
    ASSERT_LT(t.col, tiles_n);
    ++visits[t.row * tiles_n + t.col];
  }
  for (int v : visits) ASSERT_EQ(v, 1) << tiles_m << " x " << tiles_n;
}

TEST(Chapter12, RasterVisitsEveryTileOnce) {
  for (int tiles_m : {1, 2, 7, 8, 9, 32, 33}) {
    for (int tiles_n : {1, 3, 8, 32}) {
      check_raster<ch12::Chosen>(tiles_m, tiles_n);  // whatever the sweep chose
      check_raster<Ch12Group8>(tiles_m, tiles_n);    // GROUP_M = 8
      check_raster<Ch12Wide>(tiles_m, tiles_n);      // GROUP_M = 16
      check_raster<Ch12Small>(tiles_m, tiles_n);     // GROUP_M = 3
    }
  }
  // GROUP_M = 8: the first blocks walk down the first column of 8 tiles.
  const ch12::TileCoord ninth = ch12::block_tile<Ch12Group8>(8, 32, 32);
  EXPECT_EQ(ninth.row, 0);
  EXPECT_EQ(ninth.col, 1);
}

}  // namespace

// ------------------------------------------------------ chapter 13, the tail

namespace {

/// One segment as a block computes it: the block and its place in the
/// block's own order of segments.
struct Placed {
  ch13::Segment seg;
  long long block;  // linear launch index: x + y * gridDim.x
  int order;        // 0 for the block's first segment
};

/// Every segment of schedule `s`, as the kernel's blocks walk them.
std::vector<Placed> segments_of(const ch13::Schedule& s) {
  std::vector<Placed> out;
  const int tiles = s.tiles_m * s.tiles_n;
  if (!s.stream_k) {
    for (int y = 0; y < s.slices; ++y) {
      for (int x = 0; x < tiles; ++x) {
        out.push_back({ch13::split_k_segment(s, x, y), 1ll * y * tiles + x, 0});
      }
    }
    return out;
  }
  for (int b = 0; b < s.dp_tiles; ++b) out.push_back({{b, 0, s.steps, 0, 1, 0}, b, 0});
  for (int b = 0; b < s.blocks; ++b) {
    const long long begin = ch13::stream_k_begin(s, b);
    int order = 0;
    for (long long end = ch13::stream_k_begin(s, b + 1); end > begin; ++order) {
      const ch13::Segment seg = ch13::stream_k_segment(s, b, begin, end);
      out.push_back({seg, s.dp_tiles + b, order});
      end -= seg.end_step - seg.first_step;
    }
  }
  return out;
}

/// Checks that the segments of `s` cover each tile's steps exactly once, in
/// turns 0 .. turns - 1 that follow K, and that turn t + 1 waits only for a
/// segment that cannot be waiting behind it.
void check_schedule(const ch13::Schedule& s) {
  SCOPED_TRACE("tiles " + std::to_string(s.tiles_m) + " x " + std::to_string(s.tiles_n) +
               ", steps " + std::to_string(s.steps) +
               (s.stream_k ? ", stream-K blocks " : ", slices ") +
               std::to_string(s.stream_k ? s.blocks : s.slices));
  const int tiles = s.tiles_m * s.tiles_n;
  std::vector<std::vector<Placed>> by_tile(tiles);
  for (const Placed& p : segments_of(s)) {
    ASSERT_GE(p.seg.tile, 0);
    ASSERT_LT(p.seg.tile, tiles);
    ASSERT_LT(p.seg.first_step, p.seg.end_step) << "an empty segment";
    by_tile[p.seg.tile].push_back(p);
  }
  for (int tile = 0; tile < tiles; ++tile) {
    std::vector<Placed>& segs = by_tile[tile];
    std::sort(segs.begin(), segs.end(),
              [](const Placed& a, const Placed& b) { return a.seg.turn < b.seg.turn; });
    ASSERT_FALSE(segs.empty()) << "tile " << tile << " has no segment";
    int next_step = 0;
    for (size_t t = 0; t < segs.size(); ++t) {
      const Placed& p = segs[t];
      if (segs.size() > 1) {
        // A shared tile's counter is its own among the tiles shared.
        EXPECT_GE(p.seg.counter, 0);
        EXPECT_LT(p.seg.counter, ch13::kMaxSharedTiles);
        EXPECT_EQ(p.seg.counter, s.stream_k ? tile - s.dp_tiles : tile);
      }
      EXPECT_EQ(p.seg.turn, int(t)) << "tile " << tile;
      EXPECT_EQ(p.seg.turns, int(segs.size())) << "tile " << tile;
      EXPECT_EQ(p.seg.first_step, next_step) << "tile " << tile << ": a gap or an overlap in K";
      next_step = p.seg.end_step;
      if (t > 0 && s.stream_k) {
        // All blocks are resident: the turn before is its block's first
        // segment, which waits for nothing this block holds. (Split-K's
        // slices wait for no one: a second pass adds them.)
        const Placed& before = segs[t - 1];
        EXPECT_EQ(before.order, 0) << "tile " << tile << ", turn " << t;
        EXPECT_LT(before.block, p.block);
      }
    }
    EXPECT_EQ(next_step, s.steps) << "tile " << tile << " misses steps at its end";
  }
}

}  // namespace

TEST(Chapter13Tail, SchedulesCoverEveryStepOnceInKOrder) {
  using ch13::Big;
  using ch13::Small;
  for (const auto& [M, N, K] : std::vector<std::array<int, 3>>{{1, 1, 1},
                                                               {128, 256, 16},
                                                               {200, 300, 84},
                                                               {1024, 1024, 1024},
                                                               {4097, 4097, 4097},
                                                               {512, 512, 16384},
                                                               {1280, 1280, 1280}}) {
    for (int slices : {1, 2, 3, 7, 16}) {
      check_schedule(ch13::split_k<Big>(M, N, K, slices));
      check_schedule(ch13::split_k<Small>(M, N, K, slices));
    }
    for (int blocks : {1, 2, 5, 7, 132, 396, 1000}) {
      check_schedule(ch13::stream_k<Big>(M, N, K, blocks));
      check_schedule(ch13::stream_k<Small>(M, N, K, blocks));
    }
  }
}

TEST(Chapter13Tail, CountsAsTheChapterDoes) {
  using ch13::Small;
  // 1024: 16 x 8 = 128 tiles of 64 x 128, 64 steps. In 3 slices of 22
  // steps (the last 20), 384 blocks fit the 396 slots of 132 SMs x 3: one
  // round, 3 blocks on the busiest SM, each 22 steps plus 2. The second
  // pass moves 3 + 2 floats per element of C, spread over 132 SMs.
  const double second_pass = ch13::kFloatSteps * 1024 * 1024 / 132;
  const ch13::Schedule s = ch13::split_k<Small>(1024, 1024, 1024, 3);
  EXPECT_EQ(s.steps_per_slice, 22);
  EXPECT_EQ(s.elements, 1024 * 1024);
  EXPECT_DOUBLE_EQ(ch13::cost<Small>(s, 132, 3), 3.0 * 64 * 128 * (22 + 2) + (3 + 2) * second_pass);
  // One slice: 128 blocks, one on each of 128 SMs. A lone block's step is
  // priced as 1 + kFixedBlocks blocks' work of the SM's 3 + kFixedBlocks.
  const ch13::Schedule one = ch13::split_k<Small>(1024, 1024, 1024, 1);
  const double lone = 3.0 * (1 + ch13::kFixedBlocks) / (3 + ch13::kFixedBlocks);
  EXPECT_DOUBLE_EQ(ch13::cost<Small>(one, 132, 3), lone * 64 * 128 * (64 + 2));
  // Two slices: 256 blocks, two on the busiest SM, each 32 steps plus 2,
  // and the second pass.
  const ch13::Schedule two = ch13::split_k<Small>(1024, 1024, 1024, 2);
  const double pair = 3.0 * (2 + ch13::kFixedBlocks) / (3 + ch13::kFixedBlocks);
  EXPECT_DOUBLE_EQ(ch13::cost<Small>(two, 132, 3),
                   pair * 64 * 128 * (32 + 2) + (2 + 2) * second_pass);
  // More blocks than slots: 2048 tiles of Small at 4096 put 16 on the
  // busiest SM, five full rounds of 3 and a lone block.
  const ch13::Schedule many = ch13::split_k<Small>(4096, 4096, 4096, 1);
  EXPECT_DOUBLE_EQ(ch13::cost<Small>(many, 132, 3), (15 + lone) * 64 * 128 * (256 + 2));
  // Stream-K at 1024 over 396 blocks: 8192 iterations, a share of 21, which
  // spans at most 2 tiles (21 / 64 + 2) and a tile at most 5 shares.
  const ch13::Schedule k = ch13::stream_k<Small>(1024, 1024, 1024, 396);
  EXPECT_DOUBLE_EQ(ch13::cost<Small>(k, 132, 3), 3.0 * 64 * 128 * (21 + 2 * (2 + 5 - 1)));
}

// Chapter 13's page: at 2047 Big's 128 tiles fill one round, as at 2048,
// and the count adds only the copies, 0.13 of 2048's count.
TEST(Chapter13Tail, At2047TheCountAddsOnlyTheCopies) {
  const ch13::Plan odd = ch13::plan(2047, 2047, 2047, 132, 1, 3, {true, true}, /*aligned=*/false);
  const ch13::Plan even = ch13::plan(2048, 2048, 2048, 132, 1, 3, {true, true});
  EXPECT_TRUE(odd.packed);
  EXPECT_FALSE(odd.small);
  EXPECT_FALSE(even.small);
  EXPECT_EQ(odd.schedule.tiles_m * odd.schedule.tiles_n, 128);
  EXPECT_EQ(even.schedule.tiles_m * even.schedule.tiles_n, 128);
  EXPECT_EQ(odd.schedule.steps, even.schedule.steps);
  EXPECT_EQ(odd.schedule.slices, 1);
  EXPECT_EQ(even.schedule.slices, 1);
  EXPECT_NEAR(odd.cost / even.cost - 1.0, 0.13, 0.005);
}

TEST(Chapter13Tail, PacksWhenTheCopiesCostLessThanTheGeneralPath) {
  const auto plan = [](int M, int N, int K, long long workspace) {
    return ch13::plan(M, N, K, 132, 1, 3, {true, true}, /*aligned=*/false, workspace);
  };
  // 4097: the copies move about 6 floats per element of C, 12 K-steps of
  // one element, against 258 steps of the product: packed, whatever the
  // schedule. The workspace holds the copies and then the schedule's slices.
  const ch13::Plan odd = plan(4097, 4097, 4097, ch13::kMaxWorkspaceFloats);
  EXPECT_TRUE(odd.packed);
  // Rows padded to whole 128-byte lines: 4097 floats become 4128.
  EXPECT_EQ(ch13::packed_row(4097), 4128);
  EXPECT_EQ(ch13::packed_row(4096), 4096);
  EXPECT_EQ(ch13::packed_row(1), 32);
  EXPECT_EQ(odd.schedule.steps, 4128 / 16);
  EXPECT_EQ(odd.schedule.elements, 4097ll * 4128);
  const long long slices = odd.schedule.stream_k ? 0 : odd.schedule.slices * odd.schedule.elements;
  EXPECT_EQ(odd.workspace, ch13::packed_floats(4097, 4097, 4097) + slices);
  // A as 4097 x 4128, B as 4128 x 4128, C as 4097 x 4128.
  EXPECT_EQ(ch13::packed_floats(4097, 4097, 4097), 2 * 4097ll * 4128 + 4128ll * 4128);
  // Without room for the copies: the general path.
  const ch13::Plan cramped = plan(4097, 4097, 4097, ch13::packed_floats(4097, 4097, 4097) - 1);
  EXPECT_FALSE(cramped.packed);
  // A thin product: copying B (4097 x 4096) for a C of 128 x 4096 moves
  // about 65 floats per element of C, 130 K-steps of one, more than the
  // quarter that the general path adds: not packed.
  EXPECT_FALSE(plan(128, 4096, 4097, ch13::kMaxWorkspaceFloats).packed);
  // The two products kCopyFixedSteps is fitted to: 1001 packed, 513 not,
  // its copies' fixed costs outweighing what they save.
  EXPECT_TRUE(plan(1001, 1001, 1001, ch13::kMaxWorkspaceFloats).packed);
  EXPECT_FALSE(plan(513, 513, 513, ch13::kMaxWorkspaceFloats).packed);
  EXPECT_TRUE(plan(2049, 2049, 2049, ch13::kMaxWorkspaceFloats).packed);
  // Rows of K floats (A's) and N floats (B's, C's) on the 16-byte grid.
  EXPECT_TRUE(ch13::rows_on_16_bytes(4096, 1024));
  EXPECT_FALSE(ch13::rows_on_16_bytes(4097, 4096));
  EXPECT_FALSE(ch13::rows_on_16_bytes(4096, 4097));
  // Aligned rows are never packed.
  EXPECT_FALSE(ch13::plan(1000, 1000, 1000, 132, 1, 3, {true, true}).packed);
}

TEST(Chapter13Tail, PicksAsTheCountSays) {
  // On an H200 (132 SMs), with the blocks per SM of the two tilings there.
  const auto plan = [](int M, int N, int K) {
    return ch13::plan(M, N, K, 132, 1, 3, {true, true});
  };
  // 2048: 128 tiles of Big, one round with 4 of 132 SMs idle: too little
  // to gain for a segment's fixed cost; chapter 12's launch.
  const ch13::Plan at_2048 = plan(2048, 2048, 2048);
  EXPECT_FALSE(at_2048.small);
  EXPECT_FALSE(at_2048.schedule.stream_k);
  EXPECT_EQ(at_2048.schedule.slices, 1);
  // 4096 and 8192: many rounds of Big's tiles, the last one part-empty.
  // Big's tiles stay, a block each, but for the last two rounds' worth,
  // which the blocks share.
  for (int n : {4096, 8192}) {
    const ch13::Plan p = plan(n, n, n);
    EXPECT_FALSE(p.small) << n;
    EXPECT_TRUE(p.schedule.stream_k) << n;
    const int tiles = p.schedule.tiles_m * p.schedule.tiles_n;
    EXPECT_GE(tiles - p.schedule.dp_tiles, 132) << n;
    EXPECT_LT(tiles - p.schedule.dp_tiles, 2 * 132) << n;
  }
  // Too few tiles for the SMs: K is divided, by one way or the other.
  for (const auto& [M, N, K] : std::vector<std::array<int, 3>>{
           {512, 512, 512}, {1024, 1024, 1024}, {512, 512, 16384}, {128, 4096, 4096}}) {
    const ch13::Plan p = plan(M, N, K);
    EXPECT_TRUE(p.schedule.stream_k || p.schedule.slices > 1) << M << " x " << N << " x " << K;
  }
  // Slices that would not fit in the most workspace the launcher asks for
  // (kMaxWorkspaceFloats): never split, whatever the count.
  const ch13::Plan huge = plan(32768, 32768, 64);
  EXPECT_FALSE(huge.schedule.stream_k);
  EXPECT_EQ(huge.schedule.slices, 1);
  // The plan is never dearer than Big's plain tiles, and Small is picked
  // only when its count, slowed down, is the cheaper.
  for (int n = 256; n <= 8192; n += 256) {
    const ch13::Plan p = plan(n, n, n);
    const double plain = ch13::cost<ch13::Big>(ch13::split_k<ch13::Big>(n, n, n, 1), 132, 1);
    EXPECT_LE(p.small ? ch13::kSmallSlowdown * p.cost : p.cost, plain) << n;
  }
  // Stream-K keeps all but the last one or two rounds of tiles a block each:
  // 8192 has 2048 tiles of 128 x 256, 15 full rounds of 132 and 68 more.
  const ch13::Schedule big = ch13::stream_k<ch13::Big>(8192, 8192, 8192, 132);
  EXPECT_EQ(big.dp_tiles, 14 * 132);
  EXPECT_EQ(ch13::stream_k_total(big), (2048 - 14 * 132) * 512ll);
}

// Chapter 16: where the copy engine's 128-byte swizzle puts B's floats
// (b_tile_index), as the page derives it.
TEST(Chapter16Swizzle, EveryFloatOfTheTileHasItsOwnPlace) {
  std::vector<int> seen(ch16::BK * ch16::BN, 0);
  for (int k = 0; k < ch16::BK; ++k)
    for (int n = 0; n < ch16::BN; ++n) {
      const int i = ch16::b_tile_index(k, n);
      ASSERT_GE(i, 0);
      ASSERT_LT(i, ch16::BK * ch16::BN);
      ++seen[i];
    }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), ch16::BK * ch16::BN);
}

TEST(Chapter16Swizzle, EightRowsPutOnePieceOnAllThirtyTwoBanks) {
  // Piece p (4 floats, 16 bytes) of rows 8r .. 8r + 7 of a box: p ^ (k % 8)
  // takes each of the eight values once, so the 32 floats fall in 32 banks.
  for (int box = 0; box < ch16::BN / ch16::BOX_COLUMNS; ++box)
    for (int p = 0; p < ch16::BOX_COLUMNS / 4; ++p)
      for (int first = 0; first < ch16::BK; first += 8) {
        std::vector<int> banks;
        for (int k = first; k < first + 8; ++k)
          for (int f = 0; f < 4; ++f)
            banks.push_back(ch16::b_tile_index(k, box * ch16::BOX_COLUMNS + 4 * p + f) % 32);
        std::sort(banks.begin(), banks.end());
        for (int b = 0; b < 32; ++b) EXPECT_EQ(banks[b], b) << "box " << box << ", piece " << p;
      }
}

TEST(Chapter16Swizzle, TheFirstRowIsNotMoved) {
  // Row 0 of each box: p ^ 0 = p, the floats in order.
  for (int n = 0; n < ch16::BN; ++n)
    EXPECT_EQ(ch16::b_tile_index(0, n),
              n / ch16::BOX_COLUMNS * ch16::BK * ch16::BOX_COLUMNS + n % ch16::BOX_COLUMNS);
}

// Chapter 16: which columns of B each consumer warp multiplies (c_col()).
// Both maps must place every accumulator of the block's tile once; spread,
// every load of B^T's fragments must take one wavefront, in order two.
namespace {
int bt_load_wavefronts(int consumer_warp, int step, int reg, bool spread) {
  std::vector<std::uint32_t> addresses;
  for (int lane = 0; lane < 32; ++lane) {
    const int k = 8 * step + lane % 4 + 4 * (reg / 2);  // load_bt_fragment()'s b[reg]
    const int n = ch16::c_col(consumer_warp, lane, 2 * (reg % 2), spread);
    addresses.push_back(static_cast<std::uint32_t>(4 * ch16::b_tile_index(k, n)));
  }
  return ladder::bank::analyze(addresses).wavefronts;
}
}  // namespace

TEST(Chapter16Columns, EachMapPlacesEveryAccumulatorOnce) {
  for (const bool spread : {false, true}) {
    std::vector<int> seen(ch16::BN * 8, 0);  // the first 8 rows of the tile
    for (int w = 0; w < 8; ++w)
      for (int lane = 0; lane < 32; ++lane)
        for (int r = 0; r < 4; ++r) {
          const int row = ch16::c_row(lane, 0, r), col = ch16::c_col(w, lane, r, spread);
          ASSERT_GE(col, 0);
          ASSERT_LT(col, ch16::BN);
          ++seen[row * ch16::BN + col];
        }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), ch16::BN * 8) << "spread " << spread;
  }
}

TEST(Chapter16Columns, SpreadColumnsLoadBtWithoutConflicts) {
  for (int w = 0; w < 8; ++w)
    for (int step = 0; step < ch16::BK / 8; ++step)
      for (int reg = 0; reg < 4; ++reg) {
        EXPECT_EQ(bt_load_wavefronts(w, step, reg, true), 1) << w << " " << step << " " << reg;
        EXPECT_EQ(bt_load_wavefronts(w, step, reg, false), 2) << w << " " << step << " " << reg;
      }
}

TEST(Chapter16Columns, SpreadWarpsPairUpInACopyBox) {
  // Warps 2i and 2i + 1 take the 32 columns of box i between them.
  for (int w = 0; w < 8; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int r = 0; r < 4; ++r)
        EXPECT_EQ(ch16::c_col(w, lane, r, true) / ch16::BOX_COLUMNS, w / 2);
}

// Each store writes the accumulator it should: the value r a lane holds
// after stored_values()'s exchange (its own, or the one lane XOR 16 sent,
// sent_half()) belongs at row c_row() and column c_store_col().
TEST(Chapter16Columns, StoresWriteEachAccumulatorWhereItBelongs) {
  for (const bool spread : {false, true})
    for (int w = 0; w < 8; ++w)
      for (int lane = 0; lane < 32; ++lane)
        for (int r = 0; r < 4; ++r) {
          const bool swapped = ch16::store_swaps(lane, r / 2, spread);
          const int from = swapped ? (lane ^ 16) : lane;
          const int reg = swapped ? r % 2 + 2 * ch16::sent_half(from) : r;
          EXPECT_EQ(ch16::c_col(w, from, reg, spread), ch16::c_store_col(w, lane, r, spread))
              << spread << " " << w << " " << lane << " " << r;
          EXPECT_EQ(ch16::c_row(from, 0, reg), ch16::c_row(lane, 0, r));
        }
}

// The 32-byte sectors one store instruction (r, every lane) writes: its four
// rows (t) times the sectors of each row's eight columns; one each, with
// every column once (the test above), is a whole sector per row. With the columns
// stored in place, 4 in order and 8 spread (ncu at 4096 counted 4 and 8 per
// request); after stored_values()'s exchange, 4 spread too.
TEST(Chapter16Columns, SectorsPerStoreInstruction) {
  const auto sectors = [](int w, int r, bool spread, bool exchanged) {
    std::set<std::pair<int, int>> touched;  // (row, sector)
    for (int lane = 0; lane < 32; ++lane) {
      const int col =
          exchanged ? ch16::c_store_col(w, lane, r, spread) : ch16::c_col(w, lane, r, spread);
      touched.insert({ch16::c_row(lane, 0, r), col / 8});
    }
    return static_cast<int>(touched.size());
  };
  for (int w = 0; w < 8; ++w)
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(sectors(w, r, false, false), 4);
      EXPECT_EQ(sectors(w, r, true, false), 8);
      EXPECT_EQ(sectors(w, r, false, true), 4);
      EXPECT_EQ(sectors(w, r, true, true), 4);
    }
}

// Chapter 16's own launcher picks its tile by copy_rounds(), as the page
// derives: rounds of blocks times the floats a block copies per K-step.
TEST(Chapter16Pick, CountsRoundsOfCopies) {
  // 4096 on 132 SMs: 1024 blocks of 128 x 128 in 8 rounds, each step
  // (128 + 128) * 32 floats; 512 of 256 x 128 in 4 rounds, (256 + 128) * 32.
  EXPECT_EQ(ch16::copy_rounds<ch16::Chosen>(4096, 4096, 132), 8ll * 256 * 32);
  EXPECT_EQ(ch16::copy_rounds<ch16::Wide>(4096, 4096, 132), 4ll * 384 * 32);
  // Partial tiles count as blocks: 1000 x 1000 is 8 x 8 blocks of 128.
  EXPECT_EQ(ch16::copy_rounds<ch16::Chosen>(1000, 1000, 132), 1ll * 256 * 32);
  // One round either way: the smaller tile copies less. The 64 x 128 tile
  // too: at 1024, 128 blocks of (64 + 128) * 32 floats in one round.
  EXPECT_EQ(ch16::copy_rounds<ch16::Narrow>(1024, 1024, 132), 1ll * 192 * 32);
  for (int n : {256, 512, 1000, 1024}) {
    EXPECT_LT(ch16::copy_rounds<ch16::Chosen>(n, n, 132), ch16::copy_rounds<ch16::Wide>(n, n, 132))
        << n;
    EXPECT_LT(ch16::copy_rounds<ch16::Narrow>(n, n, 132),
              ch16::copy_rounds<ch16::Chosen>(n, n, 132))
        << n;
  }
  // 1280: 200 blocks of 64 rows take two rounds, 100 of 128 rows one.
  EXPECT_LT(ch16::copy_rounds<ch16::Chosen>(1280, 1280, 132),
            ch16::copy_rounds<ch16::Narrow>(1280, 1280, 132));
  // From 1536 on the wide tile needs enough fewer rounds to win.
  for (int n = 1536; n <= 8192; n += 512)
    EXPECT_LT(ch16::copy_rounds<ch16::Wide>(n, n, 132), ch16::copy_rounds<ch16::Chosen>(n, n, 132))
        << n;
}

// Chapter 16's last round: where the tiles leave it part-filled, its tiles
// are cut into slices along K, as many as fill the SMs.
TEST(Chapter16LastRound, CutsOnlyAPartFilledLastRound) {
  // 4096 on 132 SMs: 1024 tiles; the last round's 100 tiles leave 32 SMs
  // idle, too few for a second slice each: nothing is cut.
  const ch16::LastRound whole = ch16::last_round<ch16::Split>(4096, 4096, 4096, 132);
  EXPECT_EQ(whole.slices, 1);
  EXPECT_EQ(whole.whole_tiles, 1024);
  EXPECT_EQ(ch16::last_round_blocks(whole), 1024);
  // 1536: 144 tiles of 48 steps. 132 whole; the last 12 tiles take
  // 132 / 12 = 11 slices at most, of ceil(48 / 11) = 5 steps, so 10 slices
  // (the last of 3 steps) and 120 blocks in the last round.
  const ch16::LastRound r = ch16::last_round<ch16::Split>(1536, 1536, 1536, 132);
  EXPECT_EQ(r.whole_tiles, 132);
  EXPECT_EQ(r.slices, 10);
  EXPECT_EQ(r.steps_per_slice, 5);
  EXPECT_EQ(ch16::last_round_blocks(r), 132 + 12 * 10);
  // Fewer tiles than SMs: all of them are cut, no more slices than steps.
  const ch16::LastRound tiny = ch16::last_round<ch16::Split>(256, 256, 256, 132);
  EXPECT_EQ(tiny.whole_tiles, 0);
  EXPECT_EQ(tiny.slices, 8);
  EXPECT_EQ(tiny.steps_per_slice, 1);
}

// Every K-step of every tile belongs to exactly one block, and the slices
// of a cut tile are numbered apart, so that no two blocks write the same
// matrix of the workspace.
TEST(Chapter16LastRound, BlocksCoverEveryStepOnce) {
  for (const auto& mnk : std::vector<std::array<int, 3>>{{1536, 1536, 1536},
                                                         {1530, 1660, 200},
                                                         {200, 260, 44},
                                                         {8192, 8192, 8192},
                                                         {2560, 2560, 2560},
                                                         {1024, 1024, 1000}}) {
    const ch16::LastRound r = ch16::last_round<ch16::Split>(mnk[0], mnk[1], mnk[2], 132);
    std::vector<int> covered(static_cast<size_t>(r.tiles) * r.steps, 0);
    std::vector<int> slice_seen((r.tiles - r.whole_tiles) * r.slices, 0);
    for (int b = 0; b < ch16::last_round_blocks(r); ++b) {
      const ch16::BlockWork w = ch16::block_work(r, b);
      ASSERT_LT(w.first_step, w.end_step) << "block " << b << " has no step";
      for (int k = w.first_step; k < w.end_step; ++k) ++covered[size_t(w.tile) * r.steps + k];
      if (w.slice >= 0) ++slice_seen[w.slice];
      EXPECT_EQ(w.slice < 0, w.tile < r.whole_tiles) << b;
    }
    EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), r.tiles * r.steps) << mnk[0];
    EXPECT_EQ(std::count(slice_seen.begin(), slice_seen.end(), 1),
              static_cast<long>(slice_seen.size()))
        << mnk[0];
  }
}

// The variant "cut" picks its tile by cut_copies(): the floats the busiest
// SM copies with the last round cut, as chapter 17's page derives.
TEST(Chapter16Pick, CutCountsTheBusiestSmsCopies) {
  // 256 x 256 x 65536: 2048 K-steps. Uncut, the 64-row tile's 8 blocks
  // copy least per round; cut, the 256-row tile's 2 tiles take 64 slices of
  // 32 steps, and its busiest SM copies a 32nd of what the 64-row tile's did.
  EXPECT_EQ(
      (ch16::picked_rows<ch16::Chosen, ch16::Wide, ch16::Narrow, false>(256, 256, 65536, 132)), 64);
  EXPECT_EQ((ch16::picked_rows<ch16::Chosen, ch16::Wide, ch16::Narrow, true>(256, 256, 65536, 132)),
            256);
  const ch16::LastRound wide = ch16::last_round<ch16::Wide>(256, 256, 65536, 132);
  EXPECT_EQ(wide.slices, 64);
  EXPECT_EQ(wide.steps_per_slice, 32);
  EXPECT_EQ(ch16::busiest_steps(wide, 132), 32);
  EXPECT_EQ(ch16::cut_copies<ch16::Wide>(256, 256, 65536, 132) * 32, 2048ll * (64 + 128) * 32);
  // Uncut, the busiest SM runs every round's steps: 4096 in 8 rounds.
  EXPECT_EQ(ch16::busiest_steps(ch16::uncut<ch16::Chosen>(4096, 4096, 4096), 132), 8 * 128);
  // 4260 x 208 x 62020: the 256-row tile's 34 tiles take at most
  // 132 / 34 = 3 slices each: 102 blocks, and the cut still wins.
  const ch16::LastRound thin = ch16::last_round<ch16::Wide>(4260, 208, 62020, 132);
  EXPECT_EQ(ch16::last_round_blocks(thin), 102);
  EXPECT_EQ(
      (ch16::picked_rows<ch16::Chosen, ch16::Wide, ch16::Narrow, true>(4260, 208, 62020, 132)),
      256);
  // Where nothing is cut the two counts pick the same tile.
  for (int n : {2048, 4096, 8192})
    EXPECT_EQ((ch16::picked_rows<ch16::Chosen, ch16::Wide, ch16::Narrow, true>(n, n, n, 132)),
              (ch16::picked_rows<ch16::Chosen, ch16::Wide, ch16::Narrow, false>(n, n, n, 132)))
        << n;
}

// 3xTF32 picks its tile by split_steps(): the busiest SM's K-steps, the
// 64-row tile's step kNarrowSplitStep of the 128-row tile's.
TEST(Chapter16Pick, SplitCountsStepsOfTheBusiestSm) {
  // 4096 on 132 SMs: 1024 blocks of 128 rows in 8 rounds of 128 steps;
  // 2048 of 64 rows in 16 rounds, each step kNarrowSplitStep long.
  EXPECT_DOUBLE_EQ(ch16::split_steps<ch16::Split>(4096, 4096, 4096, 132), 8.0 * 128);
  EXPECT_DOUBLE_EQ(ch16::split_steps<ch16::SplitNarrow>(4096, 4096, 4096, 132),
                   16 * 128 * ch16::kNarrowSplitStep);
  // 1536: one whole round of 48 steps and a cut one of 5.
  EXPECT_DOUBLE_EQ(ch16::split_steps<ch16::Split>(1536, 1536, 1536, 132), 48 + 5);
  // 256: 4 tiles of 128 rows or 8 of 64, each cut into 8 slices of one
  // step; the shorter step wins.
  EXPECT_LT(ch16::split_steps<ch16::SplitNarrow>(256, 256, 256, 132),
            ch16::split_steps<ch16::Split>(256, 256, 256, 132));
  // From 512 on the 128-row tile wins: 1024 cuts its 64 tiles in two
  // (16 steps) where the 64-row tile's 128 fill the SMs uncut (32 steps of
  // kNarrowSplitStep).
  EXPECT_DOUBLE_EQ(ch16::split_steps<ch16::Split>(1024, 1024, 1024, 132), 16.0);
  for (int n = 512; n <= 8192; n += 256)
    EXPECT_LT(ch16::split_steps<ch16::Split>(n, n, n, 132),
              ch16::split_steps<ch16::SplitNarrow>(n, n, n, 132))
        << n;
}

// Chapter 16's 3xTF32: A's parts. Big is what wgmma reads of x (truncated():
// its low 13 bits dropped), small what that drops times 2^10 (kSmallScale,
// truncated_small()); big + small / 2^10 is exactly x.
TEST(Chapter16Split, BigAndSmallAddUpToTheFloatExactly) {
  uint32_t state = 12345u;  // a linear congruential generator: bit patterns of every exponent
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    float x;
    std::memcpy(&x, &state, sizeof x);
    if (!std::isfinite(x)) continue;
    const float small = ch16::truncated_small(x), big = ch16::truncated(x);
    uint32_t big_bits;
    std::memcpy(&big_bits, &big, sizeof big_bits);
    EXPECT_EQ(big_bits & 0x1fffu, 0u) << x;              // TF32: the low 13 bits are zero
    EXPECT_EQ(big + small / ch16::kSmallScale, x) << x;  // nothing is lost
    EXPECT_TRUE(small == 0.0f || std::signbit(small) == std::signbit(x)) << x;  // truncated
    if (std::fpclassify(x) == FP_NORMAL)  // scaled, still below x's own exponent
      EXPECT_LT(std::fabs(small), std::ldexp(1.0f, std::ilogb(x))) << x;
    ++checked;
  }
  EXPECT_GT(checked, 190000);
}

// What wgmma reads of small (its low 13 bits dropped) keeps every bit of
// what big dropped for |x| >= 2^-123, subnormal or not: scaling x by a power
// of two scales what wgmma reads of its parts by the same, as long as x
// stays above 2^-123. Unscaled, the small part of x near 2^-118 would lose
// its bits below 2^-136.
TEST(Chapter16Split, WhatWgmmaReadsScalesWithX) {
  const auto read = [](float v) {  // what wgmma reads of v
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= 0xffffe000u;
    float r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
  };
  uint32_t state = 54321u;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float x = std::ldexp(1.0f + float(state >> 9) / float(1u << 23), 0);  // [1, 2)
    const float small = ch16::truncated_small(x), big = ch16::truncated(x);
    for (int s : {-123, -118, -100, 100, 126}) {
      const float scaled_small = ch16::truncated_small(std::ldexp(x, s));
      const float scaled_big = ch16::truncated(std::ldexp(x, s));
      ASSERT_EQ(read(scaled_small), std::ldexp(read(small), s)) << x << " at 2^" << s;
      ASSERT_EQ(scaled_big, std::ldexp(big, s)) << x << " at 2^" << s;
    }
  }
}

// An infinity or NaN has no small part: it reaches C through big * big
// (what wgmma reads of it, not finite), and such a sum keeps no correction.
TEST(Chapter16Split, ANonFiniteValueHasNoSmallPart) {
  for (uint32_t bits : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xff801fffu}) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    EXPECT_EQ(ch16::truncated_small(x), 0.0f) << std::hex << bits;
    EXPECT_FALSE(std::isfinite(ch16::truncated(x))) << std::hex << bits;
  }
}

// Bᵀ's fragments reach wgmma through truncated_operand(): a NaN must stay a
// NaN once wgmma drops the low 13 bits, and every other value pass as it is.
TEST(Chapter16Split, TruncatedOperandKeepsNaNsAndNothingElseChanges) {
  for (uint32_t nan_bits : {0x7fc00000u, 0x7f800001u, 0xff801fffu, 0x7fbfffffu}) {
    float x;
    std::memcpy(&x, &nan_bits, sizeof x);
    const uint32_t read_bits = ch16::truncated_operand(x) & 0xffffe000u;  // what wgmma reads
    float read;
    std::memcpy(&read, &read_bits, sizeof read);
    EXPECT_TRUE(std::isnan(read)) << std::hex << nan_bits;
  }
  for (float x : {0.0f, -1.5f, 3.0e38f, INFINITY, -INFINITY, 1.0e-40f}) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    EXPECT_EQ(ch16::truncated_operand(x), bits) << x;
  }
}
