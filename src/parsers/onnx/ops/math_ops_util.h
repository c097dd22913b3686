// Helpers shared by the ONNX importers split out of the former math_ops.cc (one file per importer).
#pragma once

#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx::math_ops_detail {

using Node = ::onnx::NodeProto;

using compose::matmul;

}  // namespace kiln::onnx::math_ops_detail
