// CUDA C source for a PointwiseFused program (compiled at run time by NVRTC, pointwise_fused.cc): the program as
// straight-line fp32 code over the inputs' concrete storage types, in three kernels sharing one parameter block.
#pragma once

#include <string>
#include <vector>

#include "ir/pointwise_program.h"

namespace kiln::cuda::pwgen {

/// Most dims of the general broadcast kernels (after merging; more are refused by the tactic).
inline constexpr int kMaxRank = 8;
/// Threads per block of every generated kernel.
inline constexpr int kThreads = 256;

/// The kernels' parameter block, laid out as the generated `PwParams` (kept in sync by generateSource, which
/// writes the struct from these constants). `in` and `strides` hold p.numInputs used entries.
struct Params {
  void const* in[ir::kPointwiseMaxInputs];
  void* out;
  long long n;                                           // output elements
  long long dims[kMaxRank];                              // merged output dims (general kernels)
  long long strides[ir::kPointwiseMaxInputs][kMaxRank];  // elements; 0 along broadcast dims
  int rank;
  unsigned scalarMask;  // vector kernel: bit k set when input k has one element
};

/// Names of the kernels in the generated source (extern "C").
inline constexpr char kVectorKernel[] = "kiln_pw_vec";
inline constexpr char kBroadcast32Kernel[] = "kiln_pw_bcast32";
inline constexpr char kBroadcast64Kernel[] = "kiln_pw_bcast64";

/// Output elements each thread of the vector kernel takes per step (16 bytes of fp32 output, 8 elements of
/// 2-byte or bool output).
int vectorWidth(DataType outType);

/// The CUDA C source (no includes: NVRTC compiles it alone). Deterministic: the same program and types give the
/// same text, which keys the process-wide module cache.
std::string generateSource(ir::PointwiseProgram const& p, std::vector<DataType> const& inTypes, DataType outType);

}  // namespace kiln::cuda::pwgen
