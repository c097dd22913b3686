// Launchers of the built-in plugins' CUDA kernels (the .cu files of this folder). Plain C++17 with no Kiln
// header, so nvcc compiles the kernels apart from the C++20 plugin code. Each launcher enqueues its work on
// `stream` and returns "" or the CUDA error it met.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

typedef struct CUstream_st* cudaStream_t;

namespace kiln::plugin::cuda {

/// Element-wise activations (the CUDA side of LReLU_TRT, Clip_TRT, CustomGeluPluginDynamic).
enum class Activation : int32_t {
  kLeakyRelu = 0,  ///< x >= 0 ? x : p0 * x
  kClip = 1,       ///< min(max(x, p0), p1)
  kGeluTanh = 2,   ///< GELU, tanh approximation, of x + bias[i % biasLength] (bias may be null)
};

/// out[i] = act(in[i]) for n elements of fp32 (half == false) or fp16 data; `bias` is device fp32.
std::string launchActivation(Activation act, float p0, float p1, float const* bias, int64_t biasLength,
                             void const* in, void* out, int64_t n, bool half, cudaStream_t stream);

/// Normalization over `segments` contiguous segments of `length` elements (instance, group and layer norm):
/// x = in + skip + preBias[i % length] (skip, preBias optional); y = (x - mean) / sqrt(var + eps);
/// channel c = (flatIndex / inner) % channels; y = y * gamma[c] + beta[c]; with `relu`, y < 0 becomes
/// alpha * y. `in`, `skip`, `out` are fp32 or fp16 (`half`); gamma/beta fp32 or fp16 (`affineHalf`);
/// preBias fp32. All device pointers.
struct SegmentNormArgs {
  void const* in = nullptr;
  void const* skip = nullptr;
  float const* preBias = nullptr;
  void const* gamma = nullptr;
  void const* beta = nullptr;
  void* out = nullptr;
  int64_t segments = 0;
  int64_t length = 0;
  int64_t inner = 1;
  int64_t channels = 1;
  float eps = 1e-5f;
  bool relu = false;
  float alpha = 0.f;
  bool half = false;
  bool affineHalf = false;
};
std::string launchSegmentNorm(SegmentNormArgs const& args, cudaStream_t stream);

/// ScatterND: out = data; then for each of `nUpdates` index tuples (k int32 components, checked against
/// `dataDims`), a slice of `sliceSize` elements of `elementBytes` bytes from updates. `dataStrides` are the
/// element strides of the first k data dims. An out-of-range index tuple leaves data unchanged (the device path
/// cannot report it without synchronizing; the host path refuses such indices).
std::string launchScatterNd(void const* data, int32_t const* indices, void const* updates, void* out,
                            int64_t dataVolume, int64_t nUpdates, int32_t k, int64_t const* dataDims,
                            int64_t const* dataStrides, int64_t sliceSize, int32_t elementBytes, cudaStream_t stream);

/// Nearest-neighbour resize of `planes` planes of inH x inW to outH x outW (fp32): source row
/// min(floor(y / scale), inH - 1), likewise columns.
std::string launchResizeNearest(float const* in, float* out, int64_t planes, int64_t inH, int64_t inW,
                                int64_t outH, int64_t outW, float scale, cudaStream_t stream);

/// Darknet reorg (Reorg_TRT): input [n, c, h, w] to output [n, c*s*s, h/s, w/s], fp32.
std::string launchReorg(float const* in, float* out, int64_t n, int64_t c, int64_t h, int64_t w, int32_t stride,
                        cudaStream_t stream);

/// EfficientNMS_TRT on the device (see efficient_nms.cc for the semantics). boxes [n, nb, 4] (or
/// [n, nb, nc, 4] with perClassBoxes), scores [n, nb, nc], anchors [anchorBatch, nb, 4] or null; `half` for fp16
/// tensors. Outputs: counts int32 [n], boxes [n, maxOut, 4], scores [n, maxOut], classes int32 [n, maxOut].
struct EfficientNmsArgs {
  void const* boxes = nullptr;
  void const* scores = nullptr;
  void const* anchors = nullptr;
  int64_t anchorBatch = 1;
  bool perClassBoxes = false;
  bool half = false;
  int64_t n = 0, nb = 0, nc = 0;
  float scoreThreshold = 0.f, iouThreshold = 0.f;
  int32_t maxOut = 0, background = -1;
  bool sigmoid = false, classAgnostic = false, centerSize = false;
  int32_t* outCounts = nullptr;
  void* outBoxes = nullptr;
  void* outScores = nullptr;
  int32_t* outClasses = nullptr;
};
/// Workspace bytes launchEfficientNms needs for these sizes (0 when CUDA cannot tell, see `error`).
size_t efficientNmsWorkspace(int64_t n, int64_t nb, int64_t nc, int32_t maxOut, std::string* error);
std::string launchEfficientNms(EfficientNmsArgs const& a, void* workspace, size_t workspaceBytes, cudaStream_t stream);

/// BatchedNMS(Dynamic)_TRT on the device (see batched_nms.cc). boxes [n, nb, 1 or nc, 4], scores [n, nb, nc].
/// Outputs: counts int32 [n], boxes [n, keepTopK, 4], scores and classes (float) [n, keepTopK].
struct BatchedNmsArgs {
  void const* boxes = nullptr;
  void const* scores = nullptr;
  bool half = false;
  bool shareLocation = true;
  int64_t n = 0, nb = 0, nc = 0;
  int32_t topK = 0, keepTopK = 0, background = -1;
  float scoreThreshold = 0.f, iouThreshold = 0.f;
  float offset = 0.f;  ///< 1 for unnormalized Caffe-semantics areas
  bool clip = false;
  bool strictThreshold = false;  ///< candidates need score > threshold (else >=)
  int32_t* outCounts = nullptr;
  void* outBoxes = nullptr;
  void* outScores = nullptr;
  void* outClasses = nullptr;
};
size_t batchedNmsWorkspace(int64_t n, int64_t nb, int64_t nc, int32_t topK, std::string* error);
std::string launchBatchedNms(BatchedNmsArgs const& a, void* workspace, size_t workspaceBytes, cudaStream_t stream);

/// ROIAlign_TRT (ONNX RoiAlign, see roi_align.cc): x [n, c, h, w], rois [numRois, 4] (x's type), batchIndices
/// int32 [numRois]; out [numRois, c, outH, outW]. An out-of-range batch index gives zeros (the host path
/// refuses it).
struct RoiAlignArgs {
  void const* x = nullptr;
  void const* rois = nullptr;
  int32_t const* batchIndices = nullptr;
  void* out = nullptr;
  int64_t n = 0, c = 0, h = 0, w = 0, numRois = 0;
  int32_t outH = 1, outW = 1, samplingRatio = 0;
  float spatialScale = 1.f;
  bool halfPixel = true, avg = true, half = false;
};
std::string launchRoiAlign(RoiAlignArgs const& a, cudaStream_t stream);

/// Normalize_TRT: y = x / sqrt(sum x^2 + eps) * weights[c or 0], sums over channels per position of
/// [n, c, hw] or (acrossSpatial) over each sample. fp32; weights on the device.
std::string launchL2Normalize(float const* in, float* out, float const* weights, int64_t n, int64_t c, int64_t hw,
                              bool acrossSpatial, bool channelShared, float eps, cudaStream_t stream);

/// Region_TRT: logistic of box x/y and objectness, softmax over classes, per anchor of [n, num*(coords+1+classes), hw].
std::string launchRegion(float const* in, float* out, int64_t n, int32_t num, int32_t coords, int32_t classes, int64_t hw,
                         cudaStream_t stream);

/// Device-to-device copy on `stream`.
std::string copyDeviceAsync(void* dst, void const* src, size_t bytes, cudaStream_t stream);

/// NMS_TRT (SSD DetectionOutput, see detection_output.cc): decode, per-class NMS, detections [n, 1, keepTopK, 7]
/// and keepCount [n] int32. fp32 device pointers.
struct DetectionOutputArgs {
  float const* loc = nullptr;
  float const* conf = nullptr;
  float const* priors = nullptr;
  int64_t n = 0, priorCount = 0, priorBatch = 1, nc = 0;
  bool shareLocation = true, varianceEncoded = false, sigmoid = false;
  int32_t codeType = 1, topK = 0, keepTopK = 0, background = 0;
  float threshold = 0.f, iouThreshold = 0.5f, offset = 0.f;
  float* detections = nullptr;
  int32_t* keepCount = nullptr;
};
size_t detectionOutputWorkspace(int64_t n, int64_t priors, int64_t nc, int64_t locClasses, int32_t topK,
                                int32_t keepTopK, std::string* error);
std::string launchDetectionOutput(DetectionOutputArgs const& a, void* workspace, size_t workspaceBytes,
                                  cudaStream_t stream);

/// ModulatedDeformConv2d (DCNv2, see deform_conv.cc): one type (fp32 or fp16) for every tensor; bias optional.
struct DeformConvArgs {
  void const *x = nullptr, *offset = nullptr, *mask = nullptr, *weight = nullptr, *bias = nullptr;
  void* out = nullptr;
  int64_t n = 0, cin = 0, h = 0, w = 0, cout = 0, kh = 0, kw = 0, ho = 0, wo = 0;
  int32_t strideH = 1, strideW = 1, padH = 0, padW = 0, dilH = 1, dilW = 1, group = 1, deformableGroup = 1;
  bool half = false;
};
std::string launchDeformConv(DeformConvArgs const& a, cudaStream_t stream);

/// RPROI_TRT (Faster R-CNN proposals + ROI max pooling, see rproi.cc): scores [n, 2a, h, w], deltas
/// [n, 4a, h, w], featureMap [n, c, h, w], imInfo [n, 3], anchors [a, 4] (centre x, centre y, width, height at
/// cell (0, 0)); outputs rois [n, nmsMaxOut, 4] and pooled [n, nmsMaxOut, c, poolingH, poolingW]. fp32 device
/// pointers; n * a * h * w below 2^31.
struct RproiArgs {
  float const* scores = nullptr;
  float const* deltas = nullptr;
  float const* featureMap = nullptr;
  float const* imInfo = nullptr;
  float const* anchors = nullptr;
  float* rois = nullptr;
  float* pooled = nullptr;
  int64_t n = 0, a = 0, c = 0, h = 0, w = 0;
  int32_t featureStride = 1, preNmsTop = 1, nmsMaxOut = 1, poolingH = 1, poolingW = 1;
  float iouThreshold = 0.f, minBoxSize = 0.f, spatialScale = 1.f;
};
/// Workspace bytes launchRproi needs for these sizes (0 when CUDA cannot tell, see `error`).
size_t rproiWorkspace(int64_t n, int64_t a, int64_t h, int64_t w, std::string* error);
std::string launchRproi(RproiArgs const& a, void* workspace, size_t workspaceBytes, cudaStream_t stream);

/// Device memory for plugin weights: copies `bytes` bytes from the host; nullptr with *error set on failure.
void* uploadToDevice(void const* host, size_t bytes, std::string* error);
/// Frees memory from uploadToDevice (nullptr is fine).
void freeDevice(void* p);

}  // namespace kiln::plugin::cuda
