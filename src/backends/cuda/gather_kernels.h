// Device launchers of Gather (kDEFAULT, kELEMENT, kND modes): elements move as raw bytes (1/2/4/8), indices are
// int32 or int64 with negative ones counting from the end. An index out of range writes zero bytes (the host
// reference reports an error; a device kernel cannot).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// kDEFAULT: y[o, j, i] = data[o, idx(o, j), i] over outer x nIdx x inner; with one element-wise dim the indices
/// of output row o start at (o / perLead) * nIdx, else at 0.
struct GatherDefaultPlan {
  int64_t outer = 0, nIdx = 0, inner = 0, axisDim = 0, perLead = 1;
  int32_t elementwise = 0;
};

/// kELEMENT: y[p] = data[p with p[axis] = indices[p]] over the indices' shape.
struct GatherElementPlan {
  int32_t rank = 0;
  int64_t dims[8] = {};         // the indices' (and output's) shape
  int64_t dataStrides[8] = {};  // the data's row-major strides, 0 on the axis
  int64_t axisStride = 0, axisDim = 0;
};

/// kND with `batchDims` batch dims: y[batch, j, e] = data[batch, tuple(batch, j), e]; tuples of `tupleLen`.
struct GatherNdPlan {
  int64_t batch = 0, perBatch = 0, slab = 0, dataBatch = 0;
  int32_t tupleLen = 0;
  int64_t tupleDims[8] = {};     // data dims indexed by the tuple
  int64_t tupleStrides[8] = {};  // their row-major strides in data
};

/// Each launcher: elemSize 1/2/4/8, indices64 picks int64 over int32 indices; nothing runs for an empty output.
cudaError_t launchGatherDefault(void const* data, void const* indices, bool indices64, void* out, int32_t elemSize,
                                GatherDefaultPlan const& plan, cudaStream_t stream);
cudaError_t launchGatherElement(void const* data, void const* indices, bool indices64, void* out, int32_t elemSize,
                                GatherElementPlan const& plan, cudaStream_t stream);
cudaError_t launchGatherNd(void const* data, void const* indices, bool indices64, void* out, int32_t elemSize,
                           GatherNdPlan const& plan, cudaStream_t stream);

}  // namespace kiln::cuda
