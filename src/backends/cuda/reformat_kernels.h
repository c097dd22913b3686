// The Reformat family's vectorized-layout kernel: any two of kLINEAR, kHWC, kDHWC and the vectorized TensorFormat
// layouts (core/tensor_format.h) over elements of 1/2/4/8 bytes. Plain signatures, so both nvcc and the host
// compiler include this header.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

constexpr int32_t kReformatMaxRank = 8;

/// One side's layout: vecDim -1 is row-major (kLINEAR); else `components` channels of dim `vecDim` per vector,
/// vector-major ([..][ceil(C/V)][..][V]) or, with `minor`, vector-minor ([..][..][ceil(C/V)*V]).
struct ReformatSide {
  int32_t vecDim = -1;
  int32_t components = 1;
  int32_t minor = 0;
};

/// Writes every position of the output layout (padding included, as zeros) from the input layout: one thread
/// per output position, so the writes are coalesced.
struct ReformatPlan {
  int32_t rank = 0;
  int64_t dims[kReformatMaxRank] = {};
  ReformatSide in, out;
  int64_t outCount = 0;  // output positions (padded)
};

/// Launches the reformat on `stream`; returns the launch error (cudaSuccess with nothing launched when outCount
/// is 0; cudaErrorInvalidValue for another element size).
cudaError_t launchReformat(void const* in, void* out, int32_t elemSize, ReformatPlan const& plan, cudaStream_t stream);

/// True when launchBatchedTranspose takes these sizes (the tiled form's grid limits).
bool batchedTransposeFits(int64_t n, int64_t r, int64_t s);

/// Batched 2-D transpose of elements of `elemSize` bytes: in [n][r][s] -> out [n][s][r] (NCHW -> NHWC is r = C,
/// s = H * W; NHWC -> NCHW is r = H * W, s = C). Shared-memory tiles, or one thread per element of the long side
/// when a side is at most 8 long. Returns the launch error.
cudaError_t launchBatchedTranspose(void const* in, void* out, int32_t elemSize, int64_t n, int64_t r, int64_t s,
                                   cudaStream_t stream);

/// The same transpose converting the elements between float types (`inType`, `outType`: float, half or bf16
/// codes of device_types.cuh; round to nearest even, as Cast): the converting Reformat, a float Cast folded in.
/// Any batch (the tiled grid goes in chunks of images). cudaErrorInvalidValue for another type.
cudaError_t launchBatchedTransposeConvert(void const* in, int32_t inType, void* out, int32_t outType, int64_t n,
                                          int64_t r, int64_t s, cudaStream_t stream);

}  // namespace kiln::cuda
