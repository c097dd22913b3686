// Launchers of the convolution family's own CUDA kernels (conv.cu): direct convolution and transposed
// convolution, the bias/residual/activation epilogue that follows a cuDNN convolution, and the zero-padding and
// cropping copies that let cuDNN (symmetric pads only) run asymmetric geometries. Plain signatures: no Kiln headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace kiln::cuda {

/// N-D (up to 3 spatial dims) window geometry; fewer spatial dims are given as leading dims of extent 1
/// (kernel 1, stride 1, dilation 1, pad 0), so linear spatial indices are unchanged.
struct ConvGeom {
  int64_t n = 0;  // batch
  int64_t c = 0;  // input channels
  int64_t k = 0;  // output channels
  int64_t groups = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dil[3] = {1, 1, 1};
  int64_t padBegin[3] = {0, 0, 0};  // effective (already resolved for the SAME modes)
};

/// What follows the convolution sum: y = act(sum + bias[channel] + residual[i]); absent pieces are null / -1.
/// `activation` is the ActivationType integer (-1 none) with TensorRT's alpha/beta meanings.
struct Epilogue {
  void const* bias = nullptr;      // [k], the output's type
  void const* residual = nullptr;  // y's shape and type
  int32_t activation = -1;
  float alpha = 0.f;
  float beta = 0.f;
};

/// Direct convolution of x [n, c, in...] with w [k, c/groups, kernel...] into y [n, k, out...] with the epilogue
/// fused; fp32 accumulation. `dtype` (float, half, bf16 code) is the type of x, w, bias, residual and y.
/// Returns false for an unsupported dtype; launch errors are left for launchStatus.
bool launchConvDirect(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                      cudaStream_t stream);

/// Channels-last (x [n, in..., c], y [n, out..., k] in memory) depthwise 2-D convolution, groups == c == k, w
/// [c, 1, kh, kw], epilogue fused; fp32 accumulation. False for other types, geometries, or 2^31 elements or more.
bool launchDepthwiseHwc(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                        cudaStream_t stream);

/// The vectorized form of launchDepthwiseHwc (conv_depthwise.cu): each thread takes one 16-byte vector of channels
/// (depthwiseHwcVecWidth: 8 fp16/bf16, 4 fp32) and up to four output pixels along W; weights w [c][kh][kw] are
/// staged per block in shared memory. 3x3 and 5x5 with equal strides 1 or 2 and no dilation are unrolled; any
/// other 2-D geometry runs a generic loop. False (nothing launched) where it cannot run: another type, c not a
/// multiple of the width, x, y, bias or residual not 16-byte aligned, an empty x, 2^31 elements or more.
bool launchDepthwiseHwcVec(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                           cudaStream_t stream);

/// The shared-memory-tiled form of launchDepthwiseHwcVec (conv_depthwise_tiled.cu): a block computes 8x8 output
/// pixels of one image for 1, 2 or 4 channel vectors (depthwiseHwcVecWidth channels each), staging the tiles' input
/// window (halo included) once with 16-byte loads and the weights as fp32; any 2-D geometry. False (nothing
/// launched) where it cannot run: another type, c not a multiple of the width, x, y, bias or residual not 16-byte
/// aligned, a window of one vector and its weights over 48 KiB (depthwiseHwcTiledFits), an empty x, 2^31 elements
/// or more.
bool launchDepthwiseHwcTiled(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep,
                             void* y, cudaStream_t stream);

/// True when launchDepthwiseHwcTiled's shared memory holds one channel vector's window and weights for this
/// kernel, stride and dilation (2-D; entries [1] and [2] of the geometry's arrays) and dtype code.
bool depthwiseHwcTiledFits(int32_t dtype, ConvGeom const& g);

/// The pipelined form (conv_depthwise_pipe.cu) for 3x3 kernels with equal strides 1 or 2 and no dilation: persistent
/// blocks of 1, 2 or 4 channel vectors loop over 8x16 output tiles, the next tile's input window (halo included,
/// zeros in the padding) copied into shared memory by cp.async while the current one is computed; each thread
/// computes two neighbouring output pixels. False (nothing launched) where it cannot run: another type or geometry,
/// c not a multiple of the width, x, y, bias or residual not 16-byte aligned, an empty x, 2^31 elements or more.
bool launchDepthwiseHwcPipe(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                            cudaStream_t stream);

/// True when launchDepthwiseHwcPipe takes this geometry (2-D; entries [1] and [2]) for the dtype code: 3x3, equal
/// strides 1 or 2, dilation 1, and one channel vector's two window stages and weights within its shared memory.
bool depthwiseHwcPipeFits(int32_t dtype, ConvGeom const& g);

/// For tests: at most `blocks` blocks per channel chunk in launchDepthwiseHwcPipe (each then loops over more tiles,
/// through both window buffers many times); 0 (the default) sizes the grid by occupancy. Process-wide.
void setDepthwiseHwcPipeBlocksForTesting(int blocks);

/// For tests: makes launchDepthwiseHwcVec run one kernel variant whatever the size: 1 pixel per thread, or 4 the
/// several pixels per thread of its stride (4 at stride 1, 2 at stride 2), in the unrolled kernel where the
/// geometry has one, else the generic loop; -1 the generic loop; 0 (the default) chooses by geometry and size.
/// Process-wide.
void setDepthwiseHwcVecTileForTesting(int mode);

/// Channels per thread of launchDepthwiseHwcVec for the dtype code (0: not supported).
int depthwiseHwcVecWidth(int32_t dtype);

/// Direct transposed convolution of x [n, c, in...] with w [c, k/groups, kernel...] (+ bias [k]) into
/// y [n, k, out...], gathered per output element; fp32 accumulation.
bool launchDeconvDirect(int32_t dtype, ConvGeom const& g, void const* x, void const* w, void const* bias, void* y,
                        cudaStream_t stream);

/// In place on y [n, k, spatial]: y = act(y + bias[channel] + residual).
bool launchEpilogue(int32_t dtype, int64_t n, int64_t k, int64_t spatial, Epilogue const& ep, void* y,
                    cudaStream_t stream);

/// launchEpilogue with 16-byte loads and stores (conv_pointwise.cu, through gemm_epilogue.cu's launchGemmEpilogue
/// with one vector of 8 fp16/bf16 or 4 fp32 elements per thread).
/// `spatial` == 1 is channels-last (y [n, k] with the channel fastest; k must be a multiple of the width), larger
/// row-major (y [n, k, spatial]; spatial a multiple of the width). False (nothing launched) where it cannot run:
/// another type, those multiples, y, the residual or (channels-last) the bias not 16-byte aligned, an empty y or
/// 2^31 elements or more; the caller then runs launchEpilogue.
bool launchEpilogueVec(int32_t dtype, int64_t n, int64_t k, int64_t spatial, Epilogue const& ep, void* y,
                       cudaStream_t stream);

/// The channels-last pointwise convolution y [m, n] = x [m, k] * w [n, k]^T (m pixels, k input and n output
/// channels) on tensor cores (wmma, fp32 accumulation; conv_pointwise.cu) with the epilogue (bias, residual, any
/// activation) fused, so y is written once. False (nothing launched) for another type than fp16/bf16, an empty
/// problem, n or k not a multiple of 8, or x, w, y, bias or residual not 16-byte aligned. The residual may be y.
bool launchPointwiseWmma(int32_t dtype, int64_t m, int64_t n, int64_t k, void const* x, void const* w,
                         Epilogue const& ep, void* y, cudaStream_t stream);

/// The channels-last pointwise convolution y [m, cout] = x [m, cin] * w [cout, cin]^T for few input channels
/// (conv_pointwise_small.cu; MobileNetV2's expansions): one pass reading x once and writing y once, weights and
/// bias staged in shared memory, fp32 accumulation (fp16/bf16 on mma.sync tensor cores, fp32 on FMA), bias,
/// residual (may be y) and any activation fused. 16-byte loads and stores where cin and cout allow them and the
/// pointers are aligned, element by element otherwise. False (nothing launched) for another type, an empty
/// problem, or weights that do not fit its shared memory (smallPointwiseFits).
bool launchSmallPointwise(int32_t dtype, int64_t m, int64_t cin, int64_t cout, void const* x, void const* w,
                          Epilogue const& ep, void* y, cudaStream_t stream);

/// Whether launchSmallPointwise's shared memory holds the staged weights of cin x cout for the dtype code.
bool smallPointwiseFits(int32_t dtype, int64_t cin, int64_t cout);

/// launchSmallPointwise's tensor-core kernel on a channels-last 2-D convolution whose window holds at most 32 values
/// (c * kh * kw: a network's first layer, 3 channels and 3x3): each output pixel's window gathered from x [n, ih,
/// iw, c] as one row of 32 (zeros in the padding and past the window), w [k][kh][kw][c] (the builder's
/// channels-last weights), y [n, oh, ow, k], any strides, dilations and padding, bias, residual (may be y) and any
/// activation fused. fp16/bf16 only. False (nothing launched) for another type, groups, a larger window, an empty
/// output, sizes past its 32-bit index math, or weights that do not fit its shared memory.
bool launchSmallWindowConv(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                           cudaStream_t stream);

/// Whether launchSmallWindowConv takes g (its geometry; the batch is not checked) for the dtype code.
bool smallWindowConvFits(int32_t dtype, ConvGeom const& g);

/// The patch matrix of a convolution whose stride equals its kernel (no padding, dilation 1, one group; conv_patch.cu):
/// p [n * out0 * out1 * out2, c * kernel0 * kernel1 * kernel2] row-major, row (image, output pixel), its columns in the
/// order of the weights' memory: (c, k0, k1, k2) for row-major x [n, c, in...], (k0, k1, k2, c) for channels-last x
/// [n, in..., c]. Input rows and columns past out * kernel are not read. Byte moves of `elementSize` (1, 2, 4 or 8)
/// byte elements in words of patchWordBytes. False (nothing launched) for another element size, a geometry that is
/// not such a convolution (stride != kernel, dilation, padding, groups, out * kernel > in), an empty x or pointers
/// not aligned to their elements; launch errors are left for launchStatus.
bool launchPatchify(int64_t elementSize, ConvGeom const& g, bool channelsLast, void const* x, void* p,
                    cudaStream_t stream);

/// The word launchPatchify moves (16, 8, 4, 2 or 1 bytes): the largest power of two up to 16 dividing the bytes of a
/// contiguous run (kernel2 elements row-major, kernel2 * c channels-last), every stride and both pointers.
int patchWordBytes(int64_t elementSize, ConvGeom const& g, bool channelsLast, void const* x, void const* p);

/// For tests, on the host: for each word of p (patchWordBytes bytes), the index of the word of x that
/// launchPatchify copies there, computed by the kernel's own index math with 64-bit (`wideIndex`) or 32-bit
/// indices; empty where launchPatchify would refuse.
std::vector<int64_t> patchSourceWordsForTesting(int64_t elementSize, ConvGeom const& g, bool channelsLast,
                                                void const* x, void const* p, bool wideIndex);

/// dst [planes, dstExt...] = src [planes, srcExt...] shifted by `offset` per dim: dst[j] = src[j - offset] where
/// inside src, else 0 (zero padding when offset >= 0, cropping when offset <= 0), then + bias[plane % channels]
/// when bias is given. Extents are 3-D with leading 1s.
bool launchShiftCopy(int32_t dtype, int64_t planes, int64_t const srcExt[3], int64_t const dstExt[3],
                     int64_t const offset[3], void const* src, void* dst, void const* bias, int64_t channels,
                     cudaStream_t stream);

}  // namespace kiln::cuda
