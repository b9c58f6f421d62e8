// Chapter 10's transpose exercise on the CPU emulation: every variant its
// kVariants lists, through its own launcher, run as written on the CPU (see
// README.md in this folder).
#include "cuda_emulation.hpp"
// First the emulation, then the exercise: the stand-ins must precede it.
#include "chapters/10-padding/exercise/transpose.cuh"
#include "emulated_gemm.hpp"  // Guarded

namespace {

/// Runs `variant` on a rows x cols matrix and checks every element of its
/// output bit for bit: in[r][c] at out[c][r] (at out[r][c] for the copy).
void check_transpose(const transpose::Variant& variant, int rows, int cols, uint32_t seed) {
  SCOPED_TRACE(std::string(variant.name) + ", " + std::to_string(rows) + " x " +
               std::to_string(cols));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const size_t n = size_t(rows) * cols;
  emulated::Guarded in(n, false), out(n, false);
  for (size_t i = 0; i < n; ++i) {
    in.data()[i] = uniform(rng);
    out.data()[i] = std::numeric_limits<float>::quiet_NaN();  // an element not written stays NaN
  }
  ASSERT_NO_THROW(variant.launch(rows, cols, in.data(), out.data(), nullptr));

  size_t wrong = 0;
  std::string first;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const size_t at = variant.transposes ? size_t(c) * rows + r : size_t(r) * cols + c;
      const float want = in.data()[size_t(r) * cols + c];
      if (std::memcmp(&out.data()[at], &want, sizeof want) != 0) {
        if (wrong++ == 0) first = "in(" + std::to_string(r) + ", " + std::to_string(c) + ")";
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << "elements moved wrongly; the first: " << first;
  EXPECT_TRUE(out.guards_intact()) << "the kernel wrote outside its output";
}

}  // namespace

TEST(Emulated, TransposeExercise) {
  // One size with partial tiles on both sides, one of whole tiles; rows !=
  // cols, so that a transpose that mixes them up cannot pass.
  ASSERT_EQ(transpose::TILE, 32) << "the sizes below are chosen for 32 x 32 tiles: choose again";
  uint32_t seed = 10;
  int runs = 0;
  for (const transpose::Variant& variant : transpose::kVariants) {
    for (const auto& [rows, cols] : {std::pair{70, 45}, std::pair{64, 96}}) {
      check_transpose(variant, rows, cols, seed++);
      ++runs;
    }
  }
  EXPECT_EQ(runs, 2 * transpose::kVariantCount);
}
