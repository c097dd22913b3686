// TensorRT compatibility: NvOnnxParser.h. Namespace nvonnxparser holds Kiln's ONNX parser names
// (kiln::onnx: IParser, createParser, ErrorCode, ...); link kiln::onnx_parser (libkiln_onnx.so).
#ifndef KILN_COMPAT_NV_ONNX_PARSER_H
#define KILN_COMPAT_NV_ONNX_PARSER_H

#include "../onnx_parser.h"
#include "NvInfer.h"

/// The ONNX parser's version, as TensorRT's header gives it: that of the TensorRT API mirrored.
#define NV_ONNX_PARSER_MAJOR NV_TENSORRT_MAJOR
#define NV_ONNX_PARSER_MINOR NV_TENSORRT_MINOR
#define NV_ONNX_PARSER_PATCH NV_TENSORRT_PATCH
#define NV_ONNX_PARSER_VERSION \
  ((NV_ONNX_PARSER_MAJOR * 10000) + (NV_ONNX_PARSER_MINOR * 100) + NV_ONNX_PARSER_PATCH)

/// TensorRT's ONNX parser namespace.
namespace nvonnxparser {
using namespace kiln::onnx;
}  // namespace nvonnxparser

#endif  // KILN_COMPAT_NV_ONNX_PARSER_H
