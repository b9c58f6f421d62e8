// Chapter 16's tensor maps: how the host describes a matrix to the copy
// engine (TMA), once per set of matrices, through the driver's
// cuTensorMapEncodeTiled. kernel.cuh's launch encodes them and passes them
// to the kernel as parameters.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (the driver is reached through the runtime)

#include <cstdio>
#include <cstdlib>
#include <ladder/cuda_check.hpp>

#include "tiling.cuh"

namespace ch16 {

// [maps]
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's cuTensorMapEncodeTiled, found through the runtime, so that
// the program needs no link to libcuda.
EncodeTiled encode_tiled() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "16-wgmma: the driver has no cuTensorMapEncodeTiled\n");
    std::exit(1);
  }
  return reinterpret_cast<EncodeTiled>(fn);
}

/// A map of a row-major float matrix of rows x columns, copied in boxes of
/// box_rows x BOX_COLUMNS floats (128 bytes wide) with the 128-byte swizzle.
/// Outside the matrix the copy fills zeros. The rows must be multiples of 16
/// bytes.
inline CUtensorMap row_major_map(EncodeTiled encode, const float* base, int rows, int columns,
                                 int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(columns) * sizeof(float)};  // per row
  const cuuint32_t box[2] = {BOX_COLUMNS, static_cast<cuuint32_t>(box_rows)};  // innermost first
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult rc =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    std::fprintf(stderr, "16-wgmma: cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(rc));
    std::exit(1);
  }
  return map;
}
// [end]

}  // namespace ch16
