// Shared importer of ONNX Resize (opset 10+) and Upsample (7-9).
#pragma once

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

/// Imports Resize (`upsample` false) or Upsample: mode, coordinate transformation, nearest rounding, and scales
/// or sizes, constant or known only at run time (given scales, not out/in, drive the coordinate transform).
Status importResizeOrUpsample(ImportContext& ctx, ::onnx::NodeProto const& node, bool upsample);

}  // namespace kiln::onnx
