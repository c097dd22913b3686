// Tests of the Reformat reference kernel: kLINEAR <-> kHWC by hand-computed positions, and for every layout
// (kHWC, kDHWC, kCHW2/4/16/32, kHWC8/16, kDHWC8, kCDHW32) and element size (1, 2, 4, 8 bytes) over odd channel
// counts, batches and 5-D tensors: the packed buffer against an independent decoding of each memory position,
// zeroed padding, round trips, direct moves between two vectorized layouts, and refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "backends/reference/kernel_test_util.h"
#include "core/tensor_format.h"

namespace kiln {
namespace {

using namespace reftest;

ir::Attributes formats(TensorFormat from, TensorFormat to) {
  return attrs({{"from", static_cast<int64_t>(from)}, {"to", static_cast<int64_t>(to)}});
}

TEST(ReformatReference, LinearToHwcAndBack) {
  // x[n][c][h][w] = 1000n + 100c + 10h + w, N=2, C=3, H=2, W=2.
  std::vector<double> v;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 2; ++w) v.push_back(1000 * n + 100 * c + 10 * h + w);
  HostTensor x = tensor(DataType::kFLOAT, {2, 3, 2, 2}, v);
  RunResult hwc = runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kHWC), {var(x)});
  ASSERT_TRUE(hwc.status.isOk()) << hwc.status.toString();
  EXPECT_EQ(dimsToVector(hwc.shape), (std::vector<int64_t>{2, 3, 2, 2}));  // the logical shape is kept
  std::vector<double> got = doubles(hwc.out), want;
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 2; ++w)
        for (int c = 0; c < 3; ++c) want.push_back(1000 * n + 100 * c + 10 * h + w);
  EXPECT_EQ(got, want);
  RunResult back = runNode(OpType::kReformat, formats(TensorFormat::kHWC, TensorFormat::kLINEAR), {var(hwc.out)});
  ASSERT_TRUE(back.status.isOk()) << back.status.toString();
  EXPECT_EQ(doubles(back.out), v);
}

// A converting Reformat (a float Cast the builder folded in) equals the Cast followed by the Reformat, bit for
// bit: rounding to nearest even, overflow to infinity, NaN kept; other element types are refused.
TEST(ReformatReference, ConvertingReformatEqualsCastThenReformat) {
  std::vector<double> v;
  for (int i = 0; i < 2 * 5 * 3 * 4; ++i) v.push_back((i - 50) / 3.0 + (i % 7) * 1e-4);
  v[3] = 70000.0;  // past float16's largest finite value
  v[8] = -1e-9;
  v[13] = std::numeric_limits<double>::quiet_NaN();
  HostTensor x = tensor(DataType::kFLOAT, {2, 5, 3, 4}, v);
  for (DataType to : {DataType::kHALF, DataType::kBF16}) {
    for (auto [from, into] :
         {std::pair{TensorFormat::kLINEAR, TensorFormat::kHWC}, {TensorFormat::kHWC, TensorFormat::kLINEAR}}) {
      SCOPED_TRACE(std::string(dataTypeName(to)) + (from == TensorFormat::kLINEAR ? " to kHWC" : " to kLINEAR"));
      ir::Attributes a = formats(from, into);
      a.setInt("dtype", static_cast<int64_t>(to));
      RunResult conv = runNode(OpType::kReformat, a, {var(x)});
      ASSERT_TRUE(conv.status.isOk()) << conv.status.toString();
      EXPECT_EQ(conv.dtype, to);
      RunResult cast = runNode(OpType::kCast, attrs({{"to", static_cast<int64_t>(to)}}), {var(x)});
      ASSERT_TRUE(cast.status.isOk()) << cast.status.toString();
      RunResult moved = runNode(OpType::kReformat, formats(from, into), {var(cast.out)});
      ASSERT_TRUE(moved.status.isOk()) << moved.status.toString();
      ASSERT_EQ(conv.out.bytes(), moved.out.bytes());
      EXPECT_EQ(std::memcmp(conv.out.data(), moved.out.data(), conv.out.bytes()), 0);
    }
  }
  HostTensor i = tensor(DataType::kINT32, {1, 2, 2, 2}, std::vector<double>(8, 1.0));
  ir::Attributes a = formats(TensorFormat::kLINEAR, TensorFormat::kHWC);
  a.setInt("dtype", static_cast<int64_t>(DataType::kHALF));
  RunResult bad = runNode(OpType::kReformat, a, {var(i)});
  EXPECT_FALSE(bad.status.isOk());
  EXPECT_NE(bad.status.message().find("float32, float16 and bfloat16 only"), std::string::npos)
      << bad.status.toString();
}

// The layouts as the test knows them: the vectorized dim counted from the last, V, and vector-minor.
struct Layout {
  TensorFormat f;
  int32_t fromLast;
  int64_t v;
  bool minor;
};
constexpr Layout kLayouts[] = {
    {TensorFormat::kCHW2, 3, 2, false},   {TensorFormat::kCHW4, 3, 4, false}, {TensorFormat::kCHW16, 3, 16, false},
    {TensorFormat::kCHW32, 3, 32, false}, {TensorFormat::kHWC8, 3, 8, true},  {TensorFormat::kHWC16, 3, 16, true},
    {TensorFormat::kHWC, 3, 1, true},     {TensorFormat::kDHWC8, 4, 8, true}, {TensorFormat::kCDHW32, 4, 32, false},
    {TensorFormat::kDHWC, 4, 1, true},
};

// Memory positions of `layout` over `shape`, each decoded into the row-major index of its logical element (-1 for
// a padding channel): the inverse of what the kernel computes, written from the memory side.
std::vector<int64_t> decode(Layout const& l, std::vector<int64_t> const& shape) {
  int32_t r = static_cast<int32_t>(shape.size()), k = r - l.fromLast;
  int64_t cp = (shape[k] + l.v - 1) / l.v * l.v;
  std::vector<int64_t> mem;  // memory axes, innermost last
  for (int32_t i = 0; i < r; ++i)
    if (!l.minor || i != k) mem.push_back(i == k ? cp / l.v : shape[i]);
  mem.push_back(l.minor ? cp : l.v);
  int64_t total = 1;
  for (int64_t m : mem) total *= m;
  std::vector<int64_t> out(static_cast<size_t>(total));
  for (int64_t p = 0; p < total; ++p) {
    std::vector<int64_t> idx(mem.size());
    int64_t rest = p;
    for (size_t a = mem.size(); a-- > 0;) {
      idx[a] = rest % mem[a];
      rest /= mem[a];
    }
    std::vector<int64_t> coord(static_cast<size_t>(r));
    size_t a = 0;
    for (int32_t i = 0; i < r; ++i) {
      if (l.minor && i == k) continue;
      coord[static_cast<size_t>(i)] = idx[a++];
    }
    coord[static_cast<size_t>(k)] = l.minor ? idx.back() : coord[static_cast<size_t>(k)] * l.v + idx.back();
    int64_t lin = 0;
    for (int32_t i = 0; i < r; ++i) lin = lin * shape[static_cast<size_t>(i)] + coord[static_cast<size_t>(i)];
    out[static_cast<size_t>(p)] = coord[static_cast<size_t>(k)] < shape[static_cast<size_t>(k)] ? lin : -1;
  }
  return out;
}

// Runs the reference Reformat on raw bytes; `out` is poisoned (0xAB) before the run.
Status reformat(DataType t, std::vector<int64_t> const& shape, TensorFormat from, TensorFormat to,
                std::vector<uint8_t> const& in, std::vector<uint8_t>& out, size_t outBytes) {
  backends::Tactic const* tactic = backends::TacticRegistry::instance().find("reformat_reference");
  if (!tactic) return internalError("no reformat_reference tactic");
  ir::Node n;
  n.op = OpType::kReformat;
  n.name = "reformat";
  n.attrs = formats(from, to);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<backends::Kernel> k, tactic->create(n));
  out.assign(outBytes, 0xAB);
  Dims d = makeDims(shape);
  backends::CpuStream stream;
  backends::LaunchContext ctx;
  ctx.stream = &stream;
  ctx.inputs.push_back({const_cast<uint8_t*>(in.data()), t, d});
  ctx.outputs.push_back({out.data(), t, d});
  return k->enqueue(ctx);
}

TEST(ReformatReference, EveryLayoutAndElementSize) {
  std::vector<std::vector<int64_t>> shapes = {{2, 3, 5, 7},    {1, 5, 3, 3},     {2, 33, 2, 3}, {4, 1, 1},
                                              {2, 5, 2, 3, 4}, {1, 17, 1, 2, 3}, {2, 0, 2, 2}};
  for (DataType t : {DataType::kINT8, DataType::kHALF, DataType::kFLOAT, DataType::kINT64}) {
    size_t e = dataTypeSize(t);
    for (Layout const& l : kLayouts)
      for (auto const& shape : shapes) {
        if (static_cast<int32_t>(shape.size()) < l.fromLast) continue;
        SCOPED_TRACE(strCat(dataTypeName(t), " ", formatName(l.f), " ", dimsToString(makeDims(shape))));
        int64_t count = volume(makeDims(shape));
        std::vector<uint8_t> lin(static_cast<size_t>(count) * e);
        for (size_t i = 0; i < lin.size(); ++i) lin[i] = static_cast<uint8_t>(i * 7 + 1);  // distinct per byte
        std::vector<int64_t> pos = decode(l, shape);
        std::vector<uint8_t> packed;
        Status s = reformat(t, shape, TensorFormat::kLINEAR, l.f, lin, packed, pos.size() * e);
        ASSERT_TRUE(s.isOk()) << s.toString();
        for (size_t p = 0; p < pos.size(); ++p)
          for (size_t b = 0; b < e; ++b)
            ASSERT_EQ(packed[p * e + b], pos[p] < 0 ? 0 : lin[static_cast<size_t>(pos[p]) * e + b])
                << "memory position " << p << (pos[p] < 0 ? " (padding)" : "");
        std::vector<uint8_t> back;
        s = reformat(t, shape, l.f, TensorFormat::kLINEAR, packed, back, lin.size());
        ASSERT_TRUE(s.isOk()) << s.toString();
        EXPECT_EQ(back, lin);
        // Directly into every other layout of this rank equals going through kLINEAR.
        for (Layout const& m : kLayouts) {
          if (static_cast<int32_t>(shape.size()) < m.fromLast || m.f == l.f) continue;
          std::vector<int64_t> mpos = decode(m, shape);
          std::vector<uint8_t> direct, viaLinear;
          ASSERT_TRUE(reformat(t, shape, l.f, m.f, packed, direct, mpos.size() * e).isOk()) << formatName(m.f);
          ASSERT_TRUE(reformat(t, shape, TensorFormat::kLINEAR, m.f, lin, viaLinear, mpos.size() * e).isOk());
          EXPECT_EQ(direct, viaLinear) << formatName(l.f) << " -> " << formatName(m.f);
        }
      }
  }
}

TEST(ReformatReference, PaddingInTheInputIsIgnored) {
  std::vector<int64_t> shape = {1, 3, 2, 2};
  std::vector<uint8_t> lin(12 * 2);
  for (size_t i = 0; i < lin.size(); ++i) lin[i] = static_cast<uint8_t>(i + 1);
  std::vector<uint8_t> packed, back;
  ASSERT_TRUE(reformat(DataType::kHALF, shape, TensorFormat::kLINEAR, TensorFormat::kHWC8, lin, packed, 32 * 2).isOk());
  for (size_t p = 0; p < packed.size(); ++p)
    if ((p / 2) % 8 >= 3) packed[p] = 0x5A;  // garbage in the padding channels
  ASSERT_TRUE(
      reformat(DataType::kHALF, shape, TensorFormat::kHWC8, TensorFormat::kLINEAR, packed, back, lin.size()).isOk());
  EXPECT_EQ(back, lin);
}

TEST(ReformatReference, EveryTypeRoundTripsThroughHwc) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kINT32,
                     DataType::kINT64, DataType::kBOOL, DataType::kUINT8}) {
    std::vector<double> v;
    for (int i = 0; i < 1 * 5 * 3 * 1; ++i) v.push_back(t == DataType::kBOOL ? i % 2 : i % 7);
    HostTensor x = tensor(t, {1, 5, 3, 1}, v);
    RunResult hwc = runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kHWC), {var(x)});
    ASSERT_TRUE(hwc.status.isOk()) << dataTypeName(t);
    RunResult back = runNode(OpType::kReformat, formats(TensorFormat::kHWC, TensorFormat::kLINEAR), {var(hwc.out)});
    ASSERT_TRUE(back.status.isOk()) << dataTypeName(t);
    EXPECT_TRUE(back.out.sameContents(x)) << dataTypeName(t);
    RunResult same = runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kLINEAR), {var(x)});
    ASSERT_TRUE(same.status.isOk()) << dataTypeName(t);
    EXPECT_TRUE(same.out.sameContents(x)) << dataTypeName(t);
  }
}

TEST(ReformatReference, Refusals) {
  // Rank below what the layout needs.
  HostTensor x2 = tensor(DataType::kFLOAT, {3, 4}, std::vector<double>(12, 1.0));
  EXPECT_FALSE(runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kHWC), {var(x2)}).status.isOk());
  std::vector<uint8_t> in(2 * 3 * 4 * 2), out;
  EXPECT_FALSE(reformat(DataType::kHALF, {2, 3, 4}, TensorFormat::kLINEAR, TensorFormat::kDHWC8, in, out, 64).isOk());
  // DLA layouts: there is no DLA.
  Status dla = reformat(DataType::kHALF, {1, 3, 2, 2}, TensorFormat::kLINEAR, TensorFormat::kDLA_HWC4, in, out, 64);
  ASSERT_FALSE(dla.isOk());
  EXPECT_NE(dla.message().find("DLA"), std::string::npos) << dla.toString();
  EXPECT_FALSE(
      reformat(DataType::kHALF, {1, 3, 2, 2}, TensorFormat::kDLA_LINEAR, TensorFormat::kLINEAR, in, out, 64).isOk());
  // Outside the enum.
  EXPECT_FALSE(
      reformat(DataType::kHALF, {1, 3, 2, 2}, static_cast<TensorFormat>(40), TensorFormat::kLINEAR, in, out, 64)
          .isOk());
}

}  // namespace
}  // namespace kiln
