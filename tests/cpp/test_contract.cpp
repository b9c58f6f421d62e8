// The harness's side of the kernels' contract: NaN and infinities in A and B
// must reach C exactly as in the reference, and the command line that asks
// for it. CPU only.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ladder/accuracy.hpp"
#include "ladder/options.hpp"

namespace {

const float kNaN = NAN;
const float kInf = INFINITY;

TEST(SpecialValues, MatchingNanAndInfinitiesPass) {
  const std::vector<float> ref{1.0f, kNaN, kInf, -kInf, 0.5f};
  const std::vector<float> out{1.0f, kNaN, kInf, -kInf, 0.5f};
  const auto a =
      ladder::compare(out.data(), ref.data(), ref.size(), 16, ladder::NonFinite::MatchReference);
  EXPECT_TRUE(a.correct);
  EXPECT_EQ(a.matched_specials, 3u);
  EXPECT_EQ(a.bad_values, 0u);
}

TEST(SpecialValues, WithFiniteInputsAnyNanFails) {
  const std::vector<float> ref{1.0f, kNaN};
  const std::vector<float> out{1.0f, kNaN};
  EXPECT_FALSE(ladder::compare(out.data(), ref.data(), ref.size(), 16).correct);
}

struct Mismatch {
  float out;
  float ref;
};

class SpecialMismatch : public ::testing::TestWithParam<Mismatch> {};

TEST_P(SpecialMismatch, Fails) {
  const std::vector<float> ref{1.0f, GetParam().ref, -2.0f};
  const std::vector<float> out{1.0f, GetParam().out, -2.0f};
  const auto a =
      ladder::compare(out.data(), ref.data(), ref.size(), 16, ladder::NonFinite::MatchReference);
  EXPECT_FALSE(a.correct);
  EXPECT_EQ(a.bad_values, 1u);
}

INSTANTIATE_TEST_SUITE_P(Accuracy, SpecialMismatch,
                         ::testing::Values(Mismatch{kNaN, 3.0f},    // a NaN invented
                                           Mismatch{3.0f, kNaN},    // a NaN dropped
                                           Mismatch{kInf, kNaN},    // Inf where NaN
                                           Mismatch{kInf, -kInf},   // the wrong infinity
                                           Mismatch{3.0f, kInf}));  // an infinity dropped

TEST(SpecialValues, FiniteElementsAreStillCompared) {
  const std::vector<float> ref{1.0f, kNaN, 2.0f};
  const std::vector<float> out{1.0f, kNaN, 2.5f};
  EXPECT_FALSE(
      ladder::compare(out.data(), ref.data(), ref.size(), 16, ladder::NonFinite::MatchReference)
          .correct);
}

TEST(Options, SpecialValuesImplyCheckOnly) {
  const char* argv[] = {"prog", "--special-values", "--sizes", "64"};
  const auto r = ladder::parse_options(4, argv);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.options.special_values);
  EXPECT_TRUE(r.options.check_only);
}

TEST(Options, ASizePastTwoToTheThirtyIsTooLarge) {
  const char* argv[] = {"prog", "--sizes", "64x1073741825x64"};
  const auto r = ladder::parse_options(3, argv);
  EXPECT_NE(r.error.find("1073741825 is too large"), std::string::npos) << r.error;
  const char* largest[] = {"prog", "--sizes", "64x1073741824x64"};
  EXPECT_TRUE(ladder::parse_options(3, largest).error.empty());
}

TEST(Options, ProgramNameDropsTheFolder) {
  EXPECT_EQ(ladder::program_name("/a/b/12-final"), "12-final");
  EXPECT_EQ(ladder::program_name("./naive"), "naive");
  EXPECT_EQ(ladder::program_name("naive"), "naive");
  EXPECT_NE(ladder::usage("naive").find("usage: naive [--sizes"), std::string::npos);
}

}  // namespace
