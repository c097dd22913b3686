// Test harness of the oneDNN CPU tactics: one node in a one-node graph, run by the reference kernel
// (evaluateOnHost, fp64 accumulation) and by the named tactic on the same random inputs; norm-relative error.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/reference/kernel_test_util.h"
#include "core/thread_pool.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::cputest {

using ir::OpType;
using reftest::attrs;
using reftest::cst;
using reftest::In;
using reftest::none;
using reftest::var;

/// A float32 tensor of `shape` with values uniform in [-1, 1] (fixed seed per call site's `seed`).
inline HostTensor randomTensor(std::vector<int64_t> const& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v)
    f = dist(gen);
  return HostTensor::fromVector(DataType::kFLOAT, makeDims(shape), v);
}

/// One node built for a test: the graph owns it; infos are the inferred input/output types and shapes.
struct OneNode {
  std::unique_ptr<ir::Graph> graph = std::make_unique<ir::Graph>();
  ir::Node* node = nullptr;
  std::vector<backends::TensorInfo> in, out;
  std::vector<HostTensor const*> ptrs;
};

inline OneNode makeNode(OpType op, ir::Attributes const& a, std::vector<In> const& ins) {
  OneNode r;
  std::vector<ir::Value*> vals;
  for (size_t i = 0; i < ins.size(); ++i) {
    Dims unknown{};
    unknown.nbDims = -1;
    if (ins[i].absent) {
      vals.push_back(nullptr);
      r.ptrs.push_back(nullptr);
      r.in.push_back({DataType::kFLOAT, unknown});
      continue;
    }
    if (ins[i].constant)
      vals.push_back(r.graph->addConstant(strCat("c", i), ins[i].t)->output(0));
    else
      vals.push_back(*r.graph->addInput(strCat("x", i), ins[i].t.dtype(), ins[i].t.shape()));
    r.ptrs.push_back(&ins[i].t);
    r.in.push_back({ins[i].t.dtype(), ins[i].t.shape()});
  }
  r.node = r.graph->addNode(op, "node", vals);
  r.node->attrs = a;
  r.graph->markOutput(r.node->output(0));
  Status s = ir::inferGraphInPlace(*r.graph, nullptr);
  EXPECT_TRUE(s.isOk()) << s.toString();
  r.out.push_back({r.node->output(0)->dtype, r.node->output(0)->shape});
  return r;
}

/// True when the tactic named `tactic` supports the node.
inline bool tacticSupports(std::string const& tactic, OneNode const& n) {
  backends::Tactic const* t = backends::TacticRegistry::instance().find(tactic);
  EXPECT_NE(t, nullptr) << tactic;
  return t && t->supports(*n.node, n.in, n.out);
}

/// `t`'s values in `type` (rounded to nearest even where `type` is narrower), e.g. bf16 inputs for a bf16 tactic.
inline HostTensor convertType(HostTensor const& t, DataType type) {
  std::vector<double> v(static_cast<size_t>(t.count()));
  for (int64_t i = 0; i < t.count(); ++i) v[static_cast<size_t>(i)] = t.doubleAt(i);
  return HostTensor::fromVector(type, t.shape(), v);
}

/// Element offset of (n, c, h, w) of a [N, C, H, W] tensor stored in activation format `format` (0 plain, 1
/// channels-last, 8/16 nChw8c/nChw16c), written out here independently of oneDNN.
inline int64_t formatOffset(Dims const& s, int64_t format, int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t C = s.d[1], H = s.d[2], W = s.d[3];
  if (format == 1)
    return ((n * H + h) * W + w) * C + c;
  if (format == 8 || format == 16)
    return (((n * (C / format) + c / format) * H + h) * W + w) * format + c % format;
  return ((n * C + c) * H + h) * W + w;
}

/// A [N, C, H, W] tensor (any element type) rearranged from plain into `format` (toFormat) or back (fromFormat).
inline HostTensor convertFormat(HostTensor const& t, int64_t format, bool toFormat) {
  HostTensor r = *HostTensor::allocate(t.dtype(), t.shape(), "formatted");
  Dims const& s = t.shape();
  size_t const e = dataTypeSize(t.dtype());
  auto const* src = static_cast<unsigned char const*>(t.data());
  auto* dst = static_cast<unsigned char*>(r.mutableData());
  for (int64_t n = 0; n < s.d[0]; ++n)
    for (int64_t c = 0; c < s.d[1]; ++c)
      for (int64_t h = 0; h < s.d[2]; ++h)
        for (int64_t w = 0; w < s.d[3]; ++w) {
          int64_t plain = formatOffset(s, 0, n, c, h, w), f = formatOffset(s, format, n, c, h, w);
          if (toFormat)
            std::memcpy(dst + f * e, src + plain * e, e);
          else
            std::memcpy(dst + plain * e, src + f * e, e);
        }
  return r;
}

/// Runs the node with the reference and with `tactic` (on a pool of `threads`), expects the tactic to be the
/// level-0 choice among all CPU sources (or a candidate behind another library tactic, for timed alternatives), and
/// returns the norm-relative error ||y - ref|| / ||ref||. With `inFormats` / `outFormat` the tactic's node records
/// those activation formats (cpu_formats_in/out) and gets its rank-4 inputs (those with a non-zero entry) rearranged
/// into them; its output is rearranged back to compare. With `outputAt` >= 0 the output is written over input
/// `outputAt` (one buffer holding that input's data, as the builder places them for `Tactic::outputMayReuseInput`);
/// that input must have the output's size.
inline double compareWithReference(std::string const& tactic, OpType op, ir::Attributes const& a,
                                   std::vector<In> const& ins, int threads = 1,
                                   std::vector<int64_t> const& inFormats = {}, int64_t outFormat = 0,
                                   int outputAt = -1) {
  OneNode n = makeNode(op, a, ins);
  if (!dimsKnown(n.out[0].shape))
    return 1e30;
  auto cands = backends::TacticRegistry::instance().candidates(*n.node, n.in, n.out, DeviceType::kCPU, ~0u);
  EXPECT_FALSE(cands.empty());
  // The tactic runs the node: the level-0 choice, or (a timed alternative such as Winograd) a candidate behind
  // another library tactic.
  auto named = std::find_if(cands.begin(), cands.end(), [&](auto const* t) { return t->name == tactic; });
  if (named == cands.end() || (named != cands.begin() && cands.front()->source == TacticSource::kREFERENCE)) {
    ADD_FAILURE() << tactic << " is not the first candidate nor a library tactic's alternative";
    return 1e30;
  }
  std::vector<HostTensor> ref{*HostTensor::allocate(n.out[0].dtype, n.out[0].shape, "ref")};
  Status s = backends::evaluateOnHost(*n.node, n.ptrs, ref);
  EXPECT_TRUE(s.isOk()) << s.toString();

  bool formatted = !inFormats.empty() || outFormat != 0;
  if (formatted) {
    std::vector<int64_t> f = inFormats;
    f.resize(ins.size(), 0);
    n.node->attrs.setInts("cpu_formats_in", f);
    n.node->attrs.setInts("cpu_formats_out", {outFormat});
  }
  std::vector<HostTensor> formattedIns;
  formattedIns.reserve(ins.size());
  for (size_t i = 0; i < ins.size(); ++i) {
    int64_t f = i < inFormats.size() ? inFormats[i] : 0;
    if (f != 0 && n.ptrs[i]) {
      formattedIns.push_back(convertFormat(*n.ptrs[i], f, true));
      n.ptrs[i] = &formattedIns.back();
    }
  }
  Result<std::unique_ptr<backends::Kernel>> k = (*named)->create(*n.node);
  EXPECT_TRUE(k.isOk()) << k.status().toString();
  if (!k.isOk())
    return 1e30;
  HostTensor y = *HostTensor::allocate(n.out[0].dtype, n.out[0].shape, "y");
  backends::LaunchContext ctx;
  backends::CpuStream stream;
  ctx.stream = &stream;
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) {
    pool = std::make_unique<ThreadPool>(threads);
    ctx.pool = pool.get();
  }
  for (size_t i = 0; i < ins.size(); ++i)
    ctx.inputs.push_back({n.ptrs[i] ? const_cast<void*>(n.ptrs[i]->data()) : nullptr, n.in[i].dtype, n.in[i].shape});
  if (outputAt >= 0) {
    size_t at = static_cast<size_t>(outputAt);
    EXPECT_TRUE(at < ins.size() && n.ptrs[at] && n.ptrs[at]->bytes() == y.bytes());
    if (!(at < ins.size() && n.ptrs[at] && n.ptrs[at]->bytes() == y.bytes())) return 1e30;
    std::memcpy(y.mutableData(), n.ptrs[at]->data(), y.bytes());
    ctx.inputs[at].data = y.mutableData();
  }
  ctx.outputs.push_back({y.mutableData(), y.dtype(), y.shape()});
  s = (*k)->enqueue(ctx);
  EXPECT_TRUE(s.isOk()) << s.toString();
  if (outFormat != 0)
    y = convertFormat(y, outFormat, false);
  double num = 0, den = 0;
  for (int64_t i = 0; i < y.count(); ++i) {
    double d = y.doubleAt(i) - ref[0].doubleAt(i);
    num += d * d;
    den += ref[0].doubleAt(i) * ref[0].doubleAt(i);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace kiln::cputest
