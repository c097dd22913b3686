// ONNX Unique (all four outputs; sorted or in order of first occurrence; over the flattened input or slices
// along `axis`), composed from public layers with data-dependent extents through NonZero. The input is viewed
// as n rows of m elements (slices along the axis, or single elements); rows are compared lexicographically by
// cmp[i, j] = sum_e sign(x[i, e] - x[j, e]) * 2^(m-1-e) (float64: the first differing element dominates, exact
// for m <= 52); then, with eq = (cmp == 0) and lt = (cmp < 0):
//   first[i]   = no j < i with eq[i, j]                       (row i is the first of its kind)
//   rank[i]    = #{j : first[j] and lt[j, i]}                 (its place in sorted order)
//   order[i]   = #{j < first-of(i) : first[j]}                (its place in order of first occurrence)
//   indices    = NonZero(first), or for sorted output the columns of NonZero((arange(n)[:, None] == rank) & first)
//   counts[k]  = #{i : eq[i, indices[k]]},  inverse_indices = rank or order.
// Memory is O(n^2 m); meant for the moderate sizes Unique is used with.
#include <cstring>
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;
using Op = ElementWiseOperation;

constexpr int64_t kMaxRowElements = 52;

Result<ITensor*> reduce(ImportContext& ctx, Node const& node, ITensor* x, ReduceOperation op, int32_t axis) {
  IReduceLayer* l = ctx.network().addReduce(*x, op, 1U << static_cast<uint32_t>(axis), false);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "reduce"));
  return l->getOutput(0);
}

Result<ITensor*> gather(ImportContext& ctx, Node const& node, ITensor* x, ITensor* idx, int32_t axis) {
  IGatherLayer* g = ctx.network().addGather(*x, *idx, axis);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "gather"));
  return g->getOutput(0);
}

/// [n] -> [n, 1] or [1, n].
Result<ITensor*> column(ImportContext& ctx, Node const& node, ITensor* v) {
  return reshape(ctx, node, v, Dims{2, {-1, 1}});
}
Result<ITensor*> row(ImportContext& ctx, Node const& node, ITensor* v) {
  return reshape(ctx, node, v, Dims{2, {1, -1}});
}

Status importUnique(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t sorted, attrInt(node, "sorted", 1));
  Dims const d = x->getDimensions();
  bool const hasAxis = findAttr(node, "axis") != nullptr;
  int32_t axis = 0;
  ITensor* rows = nullptr;  // [n, m]
  int64_t m = 1;
  if (hasAxis) {
    KO_ASSIGN_OR_RETURN(int64_t a, attrInt(node, "axis", 0));
    KO_ASSIGN_OR_RETURN(axis, normalizeAxis(node, a, r));
    Permutation perm{};
    perm.order[0] = axis;
    for (int32_t i = 0, j = 1; i < r; ++i) {
      if (i != axis) {
        perm.order[j++] = i;
        if (d.d[i] < 0) {
          return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                          "needs static extents off the axis, got ", dimsString(d));
        }
        m *= d.d[i];
      }
    }
    IShuffleLayer* s = ctx.network().addShuffle(*x);
    KO_RETURN_IF_ERROR(ctx.check(s, node, "rows"));
    s->setFirstTranspose(perm);
    s->setReshapeDimensions(Dims{2, {-1, m}});
    s->setZeroIsPlaceholder(false);
    rows = s->getOutput(0);
  } else {
    KO_ASSIGN_OR_RETURN(x, reshape(ctx, node, x, Dims{1, {-1}}));
    KO_ASSIGN_OR_RETURN(rows, reshape(ctx, node, x, Dims{2, {-1, 1}}));
  }
  if (m > kMaxRowElements || m < 1) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "slices of ", m,
                                    " elements are not supported (1 to ", kMaxRowElements, ")");
  }
  // cmp[i, j]: lexicographic comparison of rows i and j.
  KO_ASSIGN_OR_RETURN(ITensor * r64, compose::cast(ctx, node, rows, DataType::kFLOAT64));
  KO_ASSIGN_OR_RETURN(ITensor * ri, reshape(ctx, node, r64, Dims{3, {-1, 1, m}}));
  KO_ASSIGN_OR_RETURN(ITensor * rj, reshape(ctx, node, r64, Dims{3, {1, -1, m}}));
  KO_ASSIGN_OR_RETURN(ITensor * diff, compose::binary(ctx, node, ri, rj, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * sign, compose::unary(ctx, node, diff, UnaryOperation::kSIGN));
  KO_ASSIGN_OR_RETURN(Constant * wc, ctx.newConstant(DataType::kFLOAT64, Dims{1, {m}}));
  for (int64_t e = 0; e < m; ++e) {
    double const w = static_cast<double>(int64_t{1} << (m - 1 - e));
    std::memcpy(wc->bytes.data() + e * 8, &w, 8);
  }
  KO_ASSIGN_OR_RETURN(ITensor * weights, ctx.constantTensor(wc, node.name() + "_weights"));
  KO_ASSIGN_OR_RETURN(ITensor * weighted, compose::binary(ctx, node, sign, weights, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * cmp, reduce(ctx, node, weighted, ReduceOperation::kSUM, 2));
  KO_ASSIGN_OR_RETURN(ITensor * zero64, compose::scalar(ctx, node, DataType::kFLOAT64, 0, "_zero"));
  KO_ASSIGN_OR_RETURN(ITensor * eq, compose::binary(ctx, node, cmp, zero64, Op::kEQUAL));
  KO_ASSIGN_OR_RETURN(ITensor * lt, compose::binary(ctx, node, cmp, zero64, Op::kLESS));

  // earlier[i, j] = j < i
  KO_ASSIGN_OR_RETURN(ITensor * extents, compose::lastTwoExtents(ctx, node, eq));
  KO_ASSIGN_OR_RETURN(ITensor * offsets, compose::diagonalOffsets(ctx, node, extents));
  KO_ASSIGN_OR_RETURN(ITensor * zeroI, compose::scalar(ctx, node, DataType::kINT64, 0, "_zero_i"));
  KO_ASSIGN_OR_RETURN(ITensor * earlier, compose::binary(ctx, node, offsets, zeroI, Op::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * dupEarlier, compose::binary(ctx, node, eq, earlier, Op::kAND));
  KO_ASSIGN_OR_RETURN(ITensor * dupCount, compose::cast(ctx, node, dupEarlier, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(dupCount, reduce(ctx, node, dupCount, ReduceOperation::kSUM, 1));
  KO_ASSIGN_OR_RETURN(ITensor * first, compose::binary(ctx, node, dupCount, zeroI, Op::kEQUAL));  // [n] bool
  KO_ASSIGN_OR_RETURN(ITensor * firstI, compose::cast(ctx, node, first, DataType::kINT64));

  // rank[i] = sum_j first[j] * lt[j, i]
  KO_ASSIGN_OR_RETURN(ITensor * ltI, compose::cast(ctx, node, lt, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * firstCol, column(ctx, node, firstI));
  KO_ASSIGN_OR_RETURN(ITensor * ltFirst, compose::binary(ctx, node, ltI, firstCol, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * rank, reduce(ctx, node, ltFirst, ReduceOperation::kSUM, 0));  // [n]

  ITensor* indices = nullptr;  // [u] int64
  ITensor* inverse = nullptr;  // [n] int64
  if (sorted != 0) {
    // arange(n)[:, None] == rank[None, :], restricted to first occurrences: one true per row k < u.
    KO_ASSIGN_OR_RETURN(ITensor * nExtent, reshape(ctx, node, extents, Dims{1, {2}}));
    KO_ASSIGN_OR_RETURN(ITensor * zeroIdx, ctx.int64Tensor({0}, node.name() + "_n_axis"));
    KO_ASSIGN_OR_RETURN(ITensor * n1, gather(ctx, node, nExtent, zeroIdx, 0));
    IFillLayer* ar = ctx.network().addFill(Dims{1, {0}}, FillOperation::kLINSPACE, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(ar, node, "arange"));
    KO_ASSIGN_OR_RETURN(ITensor * oneI, compose::scalar(ctx, node, DataType::kINT64, 1, "_one_i"));
    ar->setInput(0, *n1);
    ar->setInput(1, *zeroI);
    ar->setInput(2, *oneI);
    KO_ASSIGN_OR_RETURN(ITensor * kCol, column(ctx, node, ar->getOutput(0)));
    KO_ASSIGN_OR_RETURN(ITensor * rankRow, row(ctx, node, rank));
    KO_ASSIGN_OR_RETURN(ITensor * at, compose::binary(ctx, node, kCol, rankRow, Op::kEQUAL));
    KO_ASSIGN_OR_RETURN(ITensor * firstRow, row(ctx, node, first));
    KO_ASSIGN_OR_RETURN(at, compose::binary(ctx, node, at, firstRow, Op::kAND));
    INonZeroLayer* nz = ctx.network().addNonZero(*at, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(nz, node, "sorted_firsts"));
    KO_ASSIGN_OR_RETURN(ITensor * oneIdx, compose::scalar(ctx, node, DataType::kINT64, 1, "_column_row"));
    KO_ASSIGN_OR_RETURN(indices, gather(ctx, node, nz->getOutput(0), oneIdx, 0));
    inverse = rank;
  } else {
    INonZeroLayer* nz = ctx.network().addNonZero(*first, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(nz, node, "firsts"));
    KO_ASSIGN_OR_RETURN(indices, reshape(ctx, node, nz->getOutput(0), Dims{1, {-1}}));
    // order[j] = #{j' < j : first[j']}; inverse[i] = sum_j eq[i, j] * first[j] * order[j]
    KO_ASSIGN_OR_RETURN(ITensor * earlierI, compose::cast(ctx, node, earlier, DataType::kINT64));
    KO_ASSIGN_OR_RETURN(ITensor * firstRow, row(ctx, node, firstI));
    KO_ASSIGN_OR_RETURN(ITensor * before, compose::binary(ctx, node, earlierI, firstRow, Op::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * order, reduce(ctx, node, before, ReduceOperation::kSUM, 1));  // [n]
    KO_ASSIGN_OR_RETURN(ITensor * eqI, compose::cast(ctx, node, eq, DataType::kINT64));
    KO_ASSIGN_OR_RETURN(ITensor * w, compose::binary(ctx, node, firstI, order, Op::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * wRow, row(ctx, node, w));
    KO_ASSIGN_OR_RETURN(ITensor * picked, compose::binary(ctx, node, eqI, wRow, Op::kPROD));
    KO_ASSIGN_OR_RETURN(inverse, reduce(ctx, node, picked, ReduceOperation::kSUM, 1));
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, gather(ctx, node, x, indices, hasAxis ? axis : 0));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, y));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, indices));
  }
  if (node.output_size() > 2 && !node.output(2).empty()) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 2, inverse));
  }
  if (node.output_size() > 3 && !node.output(3).empty()) {
    KO_ASSIGN_OR_RETURN(ITensor * eqI, compose::cast(ctx, node, eq, DataType::kINT64));
    KO_ASSIGN_OR_RETURN(ITensor * perRow, reduce(ctx, node, eqI, ReduceOperation::kSUM, 0));  // [n]
    KO_ASSIGN_OR_RETURN(ITensor * counts, gather(ctx, node, perRow, indices, 0));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 3, counts));
  }
  return Status::success();
}

KILN_ONNX_REGISTER("", "Unique", importUnique);

}  // namespace
}  // namespace kiln::onnx
