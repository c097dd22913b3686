// gpu tests of the CUDA Reformat against the reference kernel: every pair of kLINEAR, kHWC, kDHWC and the
// vectorized layouts, element sizes 1/2/4/8, odd channel counts, batches, 3-D and 5-D tensors; the output
// buffer is poisoned first, so padding must come out as zeros, and the input's padding holds garbage.
#include <cstring>
#include <limits>
#include <optional>

#include "backends/cuda/cuda_test_util.h"
#include "core/tensor_format.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr TensorFormat kFormats[] = {TensorFormat::kLINEAR, TensorFormat::kCHW2,  TensorFormat::kCHW4,
                                     TensorFormat::kCHW16,  TensorFormat::kCHW32, TensorFormat::kHWC8,
                                     TensorFormat::kHWC16,  TensorFormat::kHWC,   TensorFormat::kDHWC8,
                                     TensorFormat::kCDHW32, TensorFormat::kDHWC};

std::unique_ptr<ir::Node> reformatNode(TensorFormat from, TensorFormat to) {
  auto n = std::make_unique<ir::Node>();
  n->op = ir::OpType::kReformat;
  n->name = "reformat";
  n->attrs.setInt("from", static_cast<int64_t>(from));
  n->attrs.setInt("to", static_cast<int64_t>(to));
  return n;
}

// Runs `tactic` on host bytes; the output buffer (outBytes, of type `tOut`) starts as 0xAB bytes.
std::vector<uint8_t> runOnHost(std::string const& tactic, ir::Node const& n, DataType t, Dims const& shape,
                               std::vector<uint8_t> const& in, size_t outBytes, std::optional<DataType> tOut = {}) {
  backends::Tactic const* tr = backends::TacticRegistry::instance().find(tactic);
  EXPECT_NE(tr, nullptr);
  auto k = tr->create(n);
  EXPECT_TRUE(k.isOk()) << k.status().toString();
  std::vector<uint8_t> out(outBytes, 0xAB);
  backends::CpuStream stream;
  backends::LaunchContext ctx;
  ctx.stream = &stream;
  ctx.inputs.push_back({const_cast<uint8_t*>(in.data()), t, shape});
  ctx.outputs.push_back({out.data(), tOut.value_or(t), shape});
  Status s = (*k)->enqueue(ctx);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return out;
}

std::vector<uint8_t> runOnDevice(ir::Node const& n, DataType t, Dims const& shape, std::vector<uint8_t> const& in,
                                 size_t outBytes, std::optional<DataType> tOut = {}) {
  backends::DeviceBackend* dev = device();
  ir::TensorInfo info{t, shape}, outInfo{tOut.value_or(t), shape};
  auto cands = backends::TacticRegistry::instance().candidates(n, {info}, {outInfo}, DeviceType::kGPU, ~0u);
  backends::Tactic const* tactic = nullptr;
  for (auto const* c : cands)
    if (c->name == "reformat_cuda_strided") tactic = c;
  EXPECT_NE(tactic, nullptr) << "reformat_cuda_strided does not support " << n.describe();
  if (!tactic) return {};
  auto k = tactic->create(n);
  EXPECT_TRUE(k.isOk()) << k.status().toString();
  void* stream = *dev->createStream();
  auto bin = backends::DeviceBuffer::allocate(dev, std::max<size_t>(in.size(), 1), "test input");
  auto bout = backends::DeviceBuffer::allocate(dev, std::max<size_t>(outBytes, 1), "test output");
  EXPECT_TRUE(bin.isOk() && bout.isOk());
  std::vector<uint8_t> out(outBytes);
  EXPECT_TRUE(dev->copy(bin->data(), in.data(), in.size(), backends::CopyKind::kHostToDevice, stream).isOk());
  EXPECT_TRUE(dev->fill(bout->data(), 0xab, outBytes, stream).isOk());
  backends::DeviceStream ds(dev, stream);
  backends::LaunchContext ctx;
  ctx.stream = &ds;
  ctx.inputs.push_back({bin->data(), t, shape});
  ctx.outputs.push_back({bout->data(), tOut.value_or(t), shape});
  Status s = (*k)->enqueue(ctx);
  EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_TRUE(dev->copy(out.data(), bout->data(), outBytes, backends::CopyKind::kDeviceToHost, stream).isOk());
  EXPECT_TRUE(dev->synchronize(stream).isOk());
  dev->destroyStream(stream);
  return out;
}

TEST(CudaReformat, EveryLayoutPairMatchesTheReference) {
  KILN_REQUIRE_GPU();
  std::vector<std::vector<int64_t>> shapes = {{2, 3, 5, 7}, {1, 33, 3, 3},   {3, 5, 1, 9},
                                              {5, 2, 3},    {2, 5, 2, 3, 4}, {1, 17, 2, 1, 3}};
  for (DataType t : {DataType::kINT8, DataType::kHALF, DataType::kFLOAT, DataType::kINT64}) {
    size_t e = dataTypeSize(t);
    for (auto const& sv : shapes) {
      Dims shape = makeDims(sv);
      for (TensorFormat from : kFormats)
        for (TensorFormat to : kFormats) {
          auto lf = formatLayout(from, shape.nbDims), lt = formatLayout(to, shape.nbDims);
          if (!lf || !lt) continue;
          SCOPED_TRACE(
              strCat(dataTypeName(t), " ", dimsToString(shape), " ", formatName(from), " -> ", formatName(to)));
          size_t inBytes = static_cast<size_t>(*formatVolume(shape, *lf)) * e;
          size_t outBytes = static_cast<size_t>(*formatVolume(shape, *lt)) * e;
          std::vector<uint8_t> in(inBytes);
          for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 13 + 5);  // padding holds garbage
          auto n = reformatNode(from, to);
          std::vector<uint8_t> want = runOnHost("reformat_reference", *n, t, shape, in, outBytes);
          std::vector<uint8_t> got = runOnDevice(*n, t, shape, in, outBytes);
          ASSERT_EQ(got, want);
        }
    }
  }
}

TEST(CudaReformat, LargeTensorAndEmptyTensor) {
  KILN_REQUIRE_GPU();
  // More positions than one grid covers at once (grid-stride loop), fp16 kHWC8 <-> kLINEAR.
  Dims shape = makeDims({4, 37, 65, 67});
  size_t e = 2;
  auto l8 = *formatLayout(TensorFormat::kHWC8, 4);
  size_t count = static_cast<size_t>(volume(shape)), padded = static_cast<size_t>(*formatVolume(shape, l8));
  std::vector<uint8_t> in(count * e);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 31 + 7);
  auto to8 = reformatNode(TensorFormat::kLINEAR, TensorFormat::kHWC8);
  std::vector<uint8_t> packed = runOnDevice(*to8, DataType::kHALF, shape, in, padded * e);
  EXPECT_EQ(packed, runOnHost("reformat_reference", *to8, DataType::kHALF, shape, in, padded * e));
  auto back = reformatNode(TensorFormat::kHWC8, TensorFormat::kLINEAR);
  EXPECT_EQ(runOnDevice(*back, DataType::kHALF, shape, packed, count * e), in);
  Dims empty = makeDims({2, 0, 3, 3});
  EXPECT_TRUE(runOnDevice(*to8, DataType::kHALF, empty, {}, 0).empty());
}

// kLINEAR <-> kHWC as a batched transpose: partial 32 x 32 tiles, a short side of 1-8 on either side (the
// one-thread-per-element form), ResNet's 3-channel input, every element size.
TEST(CudaReformat, LinearChannelsLastTransposeShapes) {
  KILN_REQUIRE_GPU();
  std::vector<std::vector<int64_t>> shapes = {{3, 70, 9, 11}, {2, 3, 224, 224}, {2, 64, 1, 5},  {1, 8, 33, 1},
                                              {2, 9, 3, 3},   {1, 1, 40, 40},   {4, 33, 32, 1}, {1, 1000, 1, 1}};
  for (DataType t : {DataType::kINT8, DataType::kHALF, DataType::kFLOAT, DataType::kINT64})
    for (auto const& sv : shapes) {
      Dims shape = makeDims(sv);
      size_t bytes = static_cast<size_t>(volume(shape)) * dataTypeSize(t);
      std::vector<uint8_t> in(bytes);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 29 + 3);
      for (bool toHwc : {true, false}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " ", dimsToString(shape), toHwc ? " to kHWC" : " to kLINEAR"));
        auto n = toHwc ? reformatNode(TensorFormat::kLINEAR, TensorFormat::kHWC)
                       : reformatNode(TensorFormat::kHWC, TensorFormat::kLINEAR);
        ASSERT_EQ(runOnDevice(*n, t, shape, in, bytes), runOnHost("reformat_reference", *n, t, shape, in, bytes));
      }
    }
}

// Whether the float32/float16/bfloat16 element at `p` is a NaN (payloads differ between host and device).
bool isNanAt(DataType t, uint8_t const* p) {
  if (t == DataType::kFLOAT) {
    uint32_t b;
    std::memcpy(&b, p, 4);
    return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0;
  }
  uint16_t b;
  std::memcpy(&b, p, 2);
  if (t == DataType::kHALF) return (b & 0x7c00u) == 0x7c00u && (b & 0x03ffu) != 0;
  return (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0;
}

// The converting Reformat (a float Cast folded in): kLINEAR <-> kHWC between float32, float16 and bfloat16, bit
// for bit as the reference (round to nearest even, overflow to infinity; NaN stays NaN, of any payload), through the
// one-thread-per- element and the tiled transposes, and a batch whose tiles need more than one grid (launched in
// chunks). Other layout pairs are not taken.
TEST(CudaReformat, ConvertingTransposeMatchesTheReference) {
  KILN_REQUIRE_GPU();
  std::vector<std::vector<int64_t>> shapes = {{2, 3, 224, 224}, {3, 70, 9, 11}, {2, 9, 3, 3}, {33, 9, 256, 256}};
  DataType const types[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
  for (DataType tin : types)
    for (DataType tout : types) {
      if (tin == tout) continue;
      for (auto const& sv : shapes) {
        if (sv[0] == 33 && !(tin == DataType::kFLOAT && tout == DataType::kHALF)) continue;  // the big one once
        Dims shape = makeDims(sv);
        size_t count = static_cast<size_t>(volume(shape));
        std::vector<double> v(count);
        for (size_t i = 0; i < count; ++i)
          v[i] = static_cast<double>(static_cast<int64_t>(i * 7919 % 20011) - 10000) / 37.0;
        v[1] = 1e6;  // overflows float16
        v[2] = std::numeric_limits<double>::quiet_NaN();
        v[5] = 1e-9;
        HostTensor x = HostTensor::fromVector(tin, shape, v);
        std::vector<uint8_t> in(static_cast<uint8_t const*>(x.data()),
                                static_cast<uint8_t const*>(x.data()) + x.bytes());
        size_t outBytes = count * dataTypeSize(tout);
        for (bool toHwc : {true, false}) {
          SCOPED_TRACE(strCat(dataTypeName(tin), " -> ", dataTypeName(tout), " ", dimsToString(shape),
                              toHwc ? " to kHWC" : " to kLINEAR"));
          auto n = toHwc ? reformatNode(TensorFormat::kLINEAR, TensorFormat::kHWC)
                         : reformatNode(TensorFormat::kHWC, TensorFormat::kLINEAR);
          n->attrs.setInt("dtype", static_cast<int64_t>(tout));
          std::vector<uint8_t> got = runOnDevice(*n, tin, shape, in, outBytes, tout);
          std::vector<uint8_t> want = runOnHost("reformat_reference", *n, tin, shape, in, outBytes, tout);
          ASSERT_EQ(got.size(), want.size());
          size_t const e = dataTypeSize(tout);
          for (size_t i = 0; i < count; ++i) {
            bool const refNan = isNanAt(tout, want.data() + i * e);
            if (refNan) {
              ASSERT_TRUE(isNanAt(tout, got.data() + i * e)) << "position " << i;  // any NaN payload
            } else {
              ASSERT_EQ(std::memcmp(got.data() + i * e, want.data() + i * e, e), 0) << "position " << i;
            }
          }
        }
      }
    }
  // Only kLINEAR <-> kHWC converts on the device.
  auto n = reformatNode(TensorFormat::kLINEAR, TensorFormat::kHWC8);
  n->attrs.setInt("dtype", static_cast<int64_t>(DataType::kHALF));
  ir::TensorInfo in{DataType::kFLOAT, makeDims({1, 8, 4, 4})}, out{DataType::kHALF, makeDims({1, 8, 4, 4})};
  for (auto const* c : backends::TacticRegistry::instance().candidates(*n, {in}, {out}, DeviceType::kGPU, ~0u))
    EXPECT_NE(c->name, "reformat_cuda_strided");
}

TEST(CudaReformat, RefusesDlaFormats) {
  KILN_REQUIRE_GPU();
  ir::TensorInfo info{DataType::kHALF, makeDims({1, 3, 4, 4})};
  for (TensorFormat f : {TensorFormat::kDLA_LINEAR, TensorFormat::kDLA_HWC4}) {
    auto n = reformatNode(TensorFormat::kLINEAR, f);
    for (auto const* c : backends::TacticRegistry::instance().candidates(*n, {info}, {info}, DeviceType::kGPU, ~0u))
      EXPECT_TRUE(backends::isHostFallback(*c) || c->name != "reformat_cuda_strided") << c->name;
  }
}

}  // namespace
}  // namespace kiln
