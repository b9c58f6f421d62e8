// Chapter 13 (13-tail) on the CPU emulation: its own kernel and launchers,
// run as written on the CPU (see README.md in this folder), and its two ways
// of sharing a tile between blocks forced at sizes where the launcher would
// not pick them. The emulation runs blocks one after another, in the order
// of their index: a block that waited for a later block's turn would hang
// here, and the tests' time limit would fail it.
#define LADDER_EMULATION_EXTERN_SHARED
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
LADDER_EMULATION_DYNAMIC_SHARED(ch13, smem);
#include "chapters/13-tail/kernel.cuh"
#include "emulated_gemm.hpp"

namespace {

using ch13::Big;
using ch13::Small;

// Both tilings are chapter 12's; these sizes are chosen for their tiles.
static_assert(Big::BM == 128 && Big::BN == 256 && Big::BK == 16, "choose the sizes again");
static_assert(Small::BM == 64 && Small::BN == 128 && Small::BK == 16, "choose the sizes again");

// Every path: exact (the tiles divide M, N and K), aligned with edges, and
// general (N and K odd); M != N, so that a swap cannot pass unseen.
const std::vector<emulated::Size> kSizes = {
    {256, 512, 96},  // exact for both tilings: 6 steps of K
    {200, 300, 84},  // aligned, partial tiles on every side and a partial last step
    {130, 263, 77},  // general
};

// A variant that runs tiling T with a fixed schedule, made by `make`, with
// the workspace its slices need.
template <class T, ch13::Schedule (*make)(int, int, int, int), int COUNT>
ladder::Variant forced(const char* name) {
  const auto launch = [](const ladder::Gemm& g, cudaStream_t stream) {
    ch13::launch_tiling<T>(g, make(g.M, g.N, g.K, COUNT), stream);
  };
  const auto workspace = [](int M, int N, int K) -> long long {
    const ch13::Schedule s = make(M, N, K, COUNT);
    return s.stream_k ? 0 : s.slices * s.elements;
  };
  return {name, name, launch, ch12::accepts<T>, {}, {}, ladder::Arithmetic::kFp32, workspace};
}

// The same on packed copies of the matrices (ch13::launch_packed()): the
// schedule is of the packed sizes, and the workspace holds the copies first.
template <class T, ch13::Schedule (*make)(int, int, int, int), int COUNT>
ladder::Variant forced_packed(const char* name) {
  const auto launch = [](const ladder::Gemm& g, cudaStream_t stream) {
    const int Np = ch13::packed_row(g.N), Kp = ch13::packed_row(g.K);
    const ch13::Schedule s = make(g.M, Np, Kp, COUNT);
    ch13::launch_packed(
        g, stream, [&](const ladder::Gemm& packed) { ch13::launch_tiling<T>(packed, s, stream); });
  };
  const auto workspace = [](int M, int N, int K) -> long long {
    const ch13::Schedule s = make(M, ch13::packed_row(N), ch13::packed_row(K), COUNT);
    return ch13::packed_floats(M, N, K) + (s.stream_k ? 0 : s.slices * s.elements);
  };
  return {name, name, launch, ch12::accepts<T>, {}, {}, ladder::Arithmetic::kFp32, workspace};
}

}  // namespace

TEST(Emulated, Ch13Tail) {
  // The chapter's own variants, as the launchers pick with the emulation's
  // stand-in SM count and occupancy.
  const ladder::Chapter chapter = ch13::chapter();
  const int runs = emulated::check_chapter(chapter, kSizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * kSizes.size() * emulated::kCalls.size()));
}

TEST(Emulated, Ch13SplitAndStreamK) {
  // Split-K in 3 slices of 2 steps (1 at the general size's partial end);
  // stream-K in 5 and 7 sharing blocks, so that shares start and end inside
  // tiles, a block spans two tiles and a tile spans several blocks; and in
  // 2, where 200 x 300's 12 tiles of Small make 6 rounds: 8 tiles take a
  // block each, and 2 blocks share the last 4.
  ladder::Chapter forced_schedules{"13-tail", "forced", __FILE__, {}};
  forced_schedules.variants = {
      forced<Big, ch13::split_k<Big>, 3>("Big, split-K in 3"),
      forced<Small, ch13::split_k<Small>, 3>("Small, split-K in 3"),
      forced<Big, ch13::stream_k<Big>, 5>("Big, stream-K in 5 blocks"),
      forced<Small, ch13::stream_k<Small>, 7>("Small, stream-K in 7 blocks"),
      forced<Small, ch13::stream_k<Small>, 2>("Small, 2 rounds' worth shared by 2 blocks"),
      forced_packed<Big, ch13::split_k<Big>, 1>("Big on packed copies"),
      forced_packed<Small, ch13::split_k<Small>, 3>("Small on packed copies, split-K in 3"),
      forced_packed<Big, ch13::stream_k<Big>, 5>("Big on packed copies, stream-K in 5 blocks"),
  };
  std::vector<emulated::Call> calls = emulated::kCalls;
  calls.push_back({0.75f, 0.5f, /*misaligned=*/true});
  const int runs = emulated::check_chapter(forced_schedules, kSizes, calls);
  EXPECT_EQ(runs, int(forced_schedules.variants.size() * kSizes.size() * calls.size()));
}

TEST(Emulated, Ch13TurnsAreBackToZero) {
  // After a launch, every tile's counter is 0 again, ready for the next.
  ladder::Chapter one{"13-tail",
                      "forced",
                      __FILE__,
                      {forced<Small, ch13::stream_k<Small>, 7>("Small, stream-K in 7 blocks")}};
  emulated::check_chapter(one, {{200, 300, 84}});
  for (int tile = 0; tile < ch13::kMaxSharedTiles; ++tile) {
    ASSERT_EQ(ch13::tile_turns[tile], 0) << "tile " << tile;
  }
}
