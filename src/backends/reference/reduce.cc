// Reference kernel of Reduce (sum, product, max, min, average over `axes` -- the attribute, or input 1 read at
// enqueue --, keeping the reduced dims as 1 or not): fp64 for float types; exact int64 arithmetic for
// int32/int64, where kAVG divides truncating toward zero; kMAX (any) and kMIN (all) on bool, false and true over
// an empty set.
#include <cmath>
#include <limits>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

struct ReduceParams {
  std::string who;
  ReduceOperation op = ReduceOperation::kSUM;
  std::vector<int64_t> axes;
};

// Walks the element offsets of x over the kept dims (select = false: the output's order) or the reduced dims
// (select = true), row-major over them, one step at a time: no table of offsets, whose 8 bytes per element could
// be several times the size of x itself.
class OffsetWalker {
 public:
  OffsetWalker(Dims const& shape, std::vector<int64_t> const& strides, std::vector<bool> const& reduced, bool select) {
    for (int32_t d = 0; d < shape.nbDims; ++d)
      if (reduced[d] == select) {
        extents_.push_back(shape.d[d]);
        strides_.push_back(strides[d]);
        count_ *= shape.d[d];
      }
    coord_.assign(extents_.size(), 0);
  }
  int64_t count() const { return count_; }
  int64_t offset() const { return offset_; }
  void reset() {
    std::fill(coord_.begin(), coord_.end(), 0);
    offset_ = 0;
  }
  void next() {
    for (size_t j = extents_.size(); j-- > 0;) {
      if (++coord_[j] < extents_[j]) {
        offset_ += strides_[j];
        return;
      }
      offset_ -= strides_[j] * (extents_[j] - 1);
      coord_[j] = 0;
    }
  }

 private:
  std::vector<int64_t> extents_, strides_, coord_;
  int64_t count_ = 1;
  int64_t offset_ = 0;
};

Status runReduce(ReduceParams const& rp, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  std::vector<bool> reduced(static_cast<size_t>(x.shape.nbDims), false);
  // Axes given as input 1 (known only now, possibly different on every run) replace the attribute.
  std::vector<int64_t> axes = rp.axes;
  if (ctx.inputs.size() > 1 && ctx.inputs[1].shape.nbDims >= 0) {
    TensorView const& a = ctx.inputs[1];
    if (!a.data && a.count() > 0)
      return invalidArgument(rp.who, ": the axes input has no data");
    axes.clear();
    for (int64_t i = 0; i < a.count(); ++i)
      axes.push_back(loadAsInt(a, i));
  }
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, x.shape.nbDims);
    if (!axis)
      return invalidArgument(rp.who, ": axis ", a, " is out of range for ", dimsToString(x.shape));
    if (reduced[*axis])
      return invalidArgument(rp.who, ": axis ", a, " is listed twice");
    reduced[*axis] = true;
  }
  std::vector<int64_t> const strides = rowMajorStrides(x.shape);
  OffsetWalker outer(x.shape, strides, reduced, false), inner(x.shape, strides, reduced, true);
  if (outer.count() != y.count())
    return invalidArgument(rp.who, ": y ", dimsToString(y.shape), " does not match the reduction of ",
                           dimsToString(x.shape));
  int64_t const n = inner.count();
  bool const isBool = x.dtype == DataType::kBOOL;
  bool isInt = x.dtype == DataType::kINT32 || x.dtype == DataType::kINT64 || isBool;
  for (int64_t o = 0; o < outer.count(); ++o, outer.next()) {
    int64_t const base = outer.offset();
    inner.reset();
    if (isInt) {
      int64_t acc = 0;
      switch (rp.op) {
        case ReduceOperation::kSUM:
        case ReduceOperation::kAVG:
          acc = 0;
          break;
        case ReduceOperation::kPROD:
          acc = 1;
          break;
        case ReduceOperation::kMAX:
          acc = isBool ? 0 : std::numeric_limits<int64_t>::min();
          break;
        case ReduceOperation::kMIN:
          acc = isBool ? 1 : std::numeric_limits<int64_t>::max();
          break;
      }
      for (int64_t i = 0; i < n; ++i, inner.next()) {
        int64_t v = loadAsInt(x, base + inner.offset());
        switch (rp.op) {
          case ReduceOperation::kSUM:
          case ReduceOperation::kAVG:
            acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
            break;
          case ReduceOperation::kPROD:
            acc = static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
            break;
          case ReduceOperation::kMAX:
            acc = std::max(acc, v);
            break;
          case ReduceOperation::kMIN:
            acc = std::min(acc, v);
            break;
        }
      }
      if (rp.op == ReduceOperation::kAVG)
        acc = n > 0 ? acc / n : 0;
      storeFromInt(y, o, acc);
    } else {
      double acc = 0.0;
      switch (rp.op) {
        case ReduceOperation::kSUM:
        case ReduceOperation::kAVG:
          acc = 0.0;
          break;
        case ReduceOperation::kPROD:
          acc = 1.0;
          break;
        case ReduceOperation::kMAX:
          acc = -INFINITY;
          break;
        case ReduceOperation::kMIN:
          acc = INFINITY;
          break;
      }
      for (int64_t i = 0; i < n; ++i, inner.next()) {
        double v = loadAsDouble(x, base + inner.offset());
        switch (rp.op) {
          case ReduceOperation::kSUM:
          case ReduceOperation::kAVG:
            acc += v;
            break;
          case ReduceOperation::kPROD:
            acc *= v;
            break;
          case ReduceOperation::kMAX:
            if ((v > acc || std::isnan(v)) && !std::isnan(acc))
              acc = v;
            break;
          case ReduceOperation::kMIN:
            if ((v < acc || std::isnan(v)) && !std::isnan(acc))
              acc = v;
            break;
        }
      }
      if (rp.op == ReduceOperation::kAVG)
        acc /= static_cast<double>(n);
      storeFromDouble(y, o, acc);
    }
  }
  return Status::ok();
}

Tactic reduceTactic() {
  return makeTactic(
      "reduce_reference", OpType::kReduce,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        ReduceParams rp;
        rp.who = node.describe();
        int64_t op = node.attrs.getInt("op", 0);
        if (op < 0 || op >= EnumMax<ReduceOperation>())
          return invalidGraph(node.describe(), ": unknown reduce op ", op);
        rp.op = static_cast<ReduceOperation>(op);
        rp.axes = node.attrs.getInts("axes");
        return makeKernel([rp](LaunchContext const& ctx) { return runReduce(rp, ctx); });
      },
      [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.empty() || in.size() > 2 || out.size() != 1)
          return false;
        if (in.size() == 2 && !typeIn(in[1].dtype, {DataType::kINT32, DataType::kINT64}))
          return false;
        if (in[0].dtype == DataType::kBOOL) {
          int64_t const op = node.attrs.getInt("op", 0);
          return out[0].dtype == DataType::kBOOL && (op == static_cast<int64_t>(ReduceOperation::kMAX) ||
                                                     op == static_cast<int64_t>(ReduceOperation::kMIN));
        }
        if (isComputeFloat(in[0].dtype))
          return isComputeFloat(out[0].dtype);
        return typeIn(in[0].dtype, {DataType::kINT32, DataType::kINT64, DataType::kINT16, DataType::kUINT16,
                                    DataType::kUINT32}) &&
               out[0].dtype == in[0].dtype;
      });
}

KILN_REGISTER_TACTIC(reduceTactic);

}  // namespace
}  // namespace kiln::backends::reference
