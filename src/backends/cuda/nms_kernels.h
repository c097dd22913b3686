// Launchers of the NMS kernels (nms.cu): greedy non-maximum suppression with one block per (batch, class), then
// a scan of the kept counts and the [K, 3] rows written once K is known on the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

struct NmsProblem {
  int64_t batches = 0, boxes = 0, classes = 0;
  bool perClassBoxes = false;  // boxes [B, N, C, 4] instead of [B, N, 4]
  bool centerSizes = false;    // (x, y, w, h) instead of corner pairs
  int64_t topkLimit = 0;
  int32_t boxType = 0, scoreType = 0;  // float, half or bf16
  void const* boxesData = nullptr;
  void const* scoresData = nullptr;
  void const* maxOut = nullptr;  // 0-D int32/int64 (maxOutType)
  int32_t maxOutType = 0;
  void const* iouThreshold = nullptr;  // 0-D float/half/bf16, or null (0)
  int32_t iouType = 0;
  void const* scoreThreshold = nullptr;  // 0-D float/half/bf16, or null (no threshold)
  int32_t scoreThresholdType = 0;
};

/// Scratch bytes of launchNmsSelect for a problem.
size_t nmsScratchBytes(NmsProblem const& p);

/// Runs the suppression of every (batch, class) into the scratch, then scans the kept counts: on return (once
/// the stream reaches it) *totalOnDevice holds K. batches * classes > 0, boxes > 0. Returns false for
/// unsupported types.
bool launchNmsSelect(NmsProblem const& p, void* scratch, int64_t** totalOnDevice, cudaStream_t stream);

/// Writes the rows (batch, class, box) into y [K, 3] (int64 when out64, else int32) and, when numSelected is
/// given, K into it (same type).
void launchNmsWrite(NmsProblem const& p, void const* scratch, void* y, void* numSelected, bool out64,
                    cudaStream_t stream);

}  // namespace kiln::cuda
