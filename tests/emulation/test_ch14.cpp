// Chapter 14 (14-tf32) on the CPU emulation: its own kernel and launcher, in
// its three shared-memory layouts (padded, unpadded, swizzled). On the host
// the chapter's cp.async copies at once, cvt.rna rounds the bits by hand, and
// mma.sync is mma_tf32_by_lanes(): each lane gathers its row of A and column
// of B with __shfl_sync, which the emulation runs as a rendezvous of the
// warp. So the test checks the chapter's fragments, layouts, pipeline, edge
// paths and store of C; the product's rounding is TF32's, and the tolerance
// is too.
#define LADDER_EMULATION_EXTERN_SHARED
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
LADDER_EMULATION_DYNAMIC_SHARED(ch14, smem);
#include "chapters/14-tf32/kernel.cuh"
#include "emulated_gemm.hpp"

namespace {

static_assert(ch14::Chosen::BM == 128 && ch14::Chosen::BN == 128 && ch14::Chosen::BK == 32,
              "choose the sizes again");

// Every path, M != N: exact, aligned (N and K multiples of 4) and general
// (N and K odd).
const std::vector<emulated::Size> kSizes = {
    {128, 128, 128},  // exact: four steps of K, so the three stages wrap round
    {132, 68, 44},    // aligned: partial tiles down and across, a partial last step
    {129, 67, 17},    // general
};

}  // namespace

TEST(Emulated, Ch14Tf32) {
  const ladder::Chapter chapter = ch14::chapter();
  ASSERT_EQ(chapter.variants.size(), 3u);
  const int runs = emulated::check_chapter(chapter, kSizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * kSizes.size() * emulated::kCalls.size()));
  // A size of the exact path, with A, B and C one float off 16-byte
  // alignment: the launcher must send it down the general path.
  const emulated::Call misaligned{0.75f, 0.5f, /*misaligned=*/true};
  emulated::check_chapter(chapter, {{128, 128, 32}}, {misaligned});
}

TEST(Emulated, Ch14NanPayloadsStayNaN) {
  // The exact path: one block tile, one step of K.
  for (const ladder::Variant& variant : ch14::chapter().variants)
    emulated::check_nan_payloads(variant, {128, 128, 32});
}

TEST(Emulated, Ch14RoundingKeepsNanPayloads) {
  // The store would mend the infinity such a NaN became (it computes a sum
  // that is not finite again in FP32), so the product alone cannot show a
  // rounding that drops the payload: to_tf32() is checked on its own. A NaN
  // whose payload lies only in the 13 bits TF32 drops stays a NaN, its sign
  // kept, once the tensor cores have dropped those bits.
  for (uint32_t bits : {0x7f800001u, 0xff801fffu, 0x7f801000u, 0x7fc00000u}) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    const uint32_t rounded = ch14::to_tf32(x), read = rounded & 0xffffe000u;
    float y;
    std::memcpy(&y, &read, sizeof y);
    EXPECT_TRUE(std::isnan(y)) << std::hex << bits << " became " << rounded;
    EXPECT_EQ(rounded >> 31, bits >> 31) << std::hex << bits;
  }
}

TEST(Emulated, Ch14KeepsFp32sClass) {
  // Infinity times a value TF32 rounds to 0, and FLT_MAX, which it rounds to
  // infinity: FP32's answers, on every path.
  for (const ladder::Variant& variant : ch14::chapter().variants)
    for (const emulated::Size& size : kSizes) emulated::check_class_kept(variant, size);
}
