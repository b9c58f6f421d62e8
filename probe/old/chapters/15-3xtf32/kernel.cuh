// Chapter 15's kernel: chapter 14's, with PRODUCTS = 3. Everything but
// main(), which is in kernel.cu.
#pragma once

#include "../14-tf32/kernel.cuh"

namespace ch15 {

// [chosen]
/// The configuration this chapter runs: chapter 14's block tile, three
/// products per multiply (ch14::split_tf32() and ch14::multiply()), each
/// step's products summed from zero and added in FP32 (STEP_SUMS). A split
/// operand takes three registers, so the warp tile is 64 x 32, with eight
/// warps, to stay within 255 registers.
using Chosen = ch14::Tiling<128, 128, 32, 64, 32, 3, 3, 8, 1>;
// [end]

/// Chosen with the tensor cores adding every product into the accumulators
/// (STEP_SUMS = 0), as chapter 14 does: what its error grows from. Its error
/// grows like K and passes FP32's tolerance by K = 8192, so it promises only
/// what TF32 does (Arithmetic::kTf32).
using InCore = ch14::Tiling<128, 128, 32, 64, 32, 3, 3, 8, 0>;

/// @brief This chapter as the runner and --describe see it: the 3xTF32
/// kernel, which promises FP32's accuracy.
inline ladder::Chapter chapter() {
  return {"15-3xtf32",
          "3xTF32",
          __FILE__,
          {ch14::variant<Chosen>(ladder::kDefaultVariant, "3xTF32 on mma.sync",
                                 ladder::Arithmetic::kFp32),
           ch14::variant<InCore>("in-core", "3xTF32, sums in the tensor cores",
                                 ladder::Arithmetic::kTf32)},
          true};
}

}  // namespace ch15
