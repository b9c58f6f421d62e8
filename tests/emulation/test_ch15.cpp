// Chapter 15 (15-3xtf32) on the CPU emulation: chapter 14's kernel with three
// products per multiply, with step sums (the chapter's) and without
// (in-core), run as test_ch14.cpp runs chapter 14. The chapter's kernel is
// held to FP32's tolerance, as on the GPU: a split that lost the small part
// would fail it.
#define LADDER_EMULATION_EXTERN_SHARED
#include "cuda_emulation.hpp"
// First the emulation, then the chapter: the stand-ins must precede it.
LADDER_EMULATION_DYNAMIC_SHARED(ch14, smem);
#include <cfloat>
#include <vector>

#include "chapters/15-3xtf32/kernel.cuh"
#include "emulated_gemm.hpp"

namespace {

// Two paths, M != N: exact, and general with partial tiles (test_ch14.cpp
// runs the aligned path of the same kernel; a shuffle costs 32 fibers'
// switches, so this test keeps to what chapter 15 adds).
const std::vector<emulated::Size> kSizes = {
    {128, 128, 128},
    {129, 67, 17},
};

}  // namespace

TEST(Emulated, Ch15ThreeProducts) {
  const ladder::Chapter chapter = ch15::chapter();
  ASSERT_EQ(chapter.variants.size(), 2u);
  ASSERT_EQ(chapter.variants[0].arithmetic, ladder::Arithmetic::kFp32);
  const int runs = emulated::check_chapter(chapter, kSizes);
  EXPECT_EQ(runs, int(chapter.variants.size() * kSizes.size() * emulated::kCalls.size()));
  // A size of the exact path, with A, B and C one float off 16-byte
  // alignment: the launcher must send it down the general path.
  const emulated::Call misaligned{0.75f, 0.5f, /*misaligned=*/true};
  emulated::check_chapter(chapter, {{128, 128, 32}}, {misaligned});
}

TEST(Emulated, Ch15SplitKeepsEveryFiniteValueFinite) {
  // big and small are TF32 (their low 13 bits zero), big + small / 2^10
  // (small is scaled by kSmallScale) is within one unit of x's last place
  // (chapter 15's bound, 2^-23 |x|), and big and small stay finite even
  // where rounding x to TF32 would overflow, within half a TF32 unit of the
  // largest float: there big is x truncated, and the bound is two units.
  const float near_max = std::nextafter(FLT_MAX, 0.0f);
  std::vector<float> values = {FLT_MAX, -FLT_MAX, near_max, 3.0e38f, 1.0f, -0.1f, 1.0e-30f};
  for (uint32_t i = 0; i < (1u << 16); ++i) {  // every 128th float in [1, 2)
    values.push_back(__uint_as_float(0x3f800000u + (i << 7)));
  }
  for (float x : values) {
    const ch14::Split s = ch14::split_tf32(x);
    const float big = __uint_as_float(s.big), small = __uint_as_float(s.small);
    EXPECT_TRUE(std::isfinite(big)) << x;
    EXPECT_TRUE(std::isfinite(small)) << x;
    EXPECT_EQ(s.big & 0x1fffu, 0u) << x;
    EXPECT_EQ(s.small & 0x1fffu, 0u) << x;
    EXPECT_EQ(s.big_finite, s.big) << x;
    const double unit = std::ldexp(1.0, std::ilogb(x) - 23);  // x's last place
    const double units = std::fabs(x) > __uint_as_float(ch14::kLastRoundable) ? 2.0 : 1.0;
    const double error = std::fabs(double(big) + double(small) / ch14::kSmallScale - double(x));
    EXPECT_LE(error, units * unit) << x;
  }
}

TEST(Emulated, Ch15NanPayloadsStayNaN) {
  // The exact path: one block tile, one step of K.
  for (const ladder::Variant& variant : ch15::chapter().variants)
    emulated::check_nan_payloads(variant, {128, 128, 32});
}

TEST(Emulated, Ch15SameAtEveryScale) {
  // A scaled to 2^-118 (B to 2^118) and the other way: 3xTF32's small parts,
  // scaled by 2^10, keep every bit, so C is the same bit for bit (the exact
  // path: one block tile, one step of K).
  for (const ladder::Variant& variant : ch15::chapter().variants)
    for (int s : {-118, 118}) emulated::check_scale_invariance(variant, {128, 128, 32}, s);
}

TEST(Emulated, Ch15KeepsFp32sClass) {
  // Infinity times a value whose TF32 parts are 0, and FLT_MAX: FP32's
  // answers, on the exact and the general path.
  for (const ladder::Variant& variant : ch15::chapter().variants)
    for (const emulated::Size& size : {emulated::Size{128, 128, 32}, {129, 67, 17}})
      // 3xTF32's sum of FLT_MAX times 2^-140 is finite but 5e-4 off FP32's
      // (FLT_MAX's big part is clamped, 2^-140's is 0): its class is kept,
      // its value not to FP32's accuracy. Checked to 2^-10 until that is fixed.
      emulated::check_class_kept(variant, size, 10);
}
