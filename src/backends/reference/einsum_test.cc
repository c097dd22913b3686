// Tests of Einsum: matmul, batched matmul, transpose, trace/diagonal (repeated labels), outer products, three
// inputs, implicit output order, ellipsis broadcasting, integer and 16-bit types, empty sums, and errors.
#include "backends/reference/index_test_util.h"

namespace kiln {
namespace {

using namespace indextest;
using ir::OpType;

RunResult einsum(std::string const& eq, std::vector<HostTensor> const& ins) {
  std::vector<In> v;
  for (HostTensor const& t : ins) v.push_back(var(t));
  return runNode(OpType::kEinsum, attrs({{"equation", eq}}), v);
}

Doubles seq(int64_t n, double start = 1) {
  Doubles r;
  for (int64_t i = 0; i < n; ++i) r.push_back(start + i);
  return r;
}

TEST(EinsumReference, MatmulAgainstNaive) {
  HostTensor a = tensor(DataType::kFLOAT, {2, 3}, seq(6));
  HostTensor b = tensor(DataType::kFLOAT, {3, 4}, seq(12, -3));
  for (std::string eq : {"ij,jk->ik", "ij,jk", " i j , j k -> i k "}) {
    RunResult r = einsum(eq, {a, b});
    ASSERT_TRUE(r.status.isOk()) << eq << r.status.toString();
    ASSERT_EQ(dimsToVector(r.shape()), (Ints{2, 4}));
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) {
        double s = 0;
        for (int j = 0; j < 3; ++j) s += a.doubleAt(i * 3 + j) * b.doubleAt(j * 4 + k);
        EXPECT_EQ(r.out().doubleAt(i * 4 + k), s);
      }
  }
  // Transposed output.
  RunResult t = einsum("ij,jk->ki", {a, b});
  ASSERT_TRUE(t.status.isOk());
  EXPECT_EQ(dimsToVector(t.shape()), (Ints{4, 2}));
  EXPECT_EQ(t.out().doubleAt(1 * 2 + 0),
            a.doubleAt(0) * b.doubleAt(1) + a.doubleAt(1) * b.doubleAt(5) + a.doubleAt(2) * b.doubleAt(9));
}

TEST(EinsumReference, ImplicitOutputIsSortedSingleLabels) {
  // "ba" implicit -> "ab": a transpose.
  HostTensor x = tensor(DataType::kINT32, {2, 3}, Ints{1, 2, 3, 4, 5, 6});
  RunResult r = einsum("ba", {x});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape()), (Ints{3, 2}));
  EXPECT_EQ(r.out().toInt64Vector(), (Ints{1, 4, 2, 5, 3, 6}));
  // Uppercase sorts before lowercase (ASCII): "aB" -> "Ba".
  RunResult u = einsum("aB", {x});
  ASSERT_TRUE(u.status.isOk());
  EXPECT_EQ(dimsToVector(u.shape()), (Ints{3, 2}));
  // "ij,ij" implicit sums everything: a dot product to a scalar.
  RunResult d = einsum("ij,ij", {x, x});
  ASSERT_TRUE(d.status.isOk());
  EXPECT_EQ(d.shape().nbDims, 0);
  EXPECT_EQ(d.out().intAt(0), 1 + 4 + 9 + 16 + 25 + 36);
}

TEST(EinsumReference, RepeatedLabelsTraceAndDiagonal) {
  HostTensor m = tensor(DataType::kFLOAT64, {3, 3}, seq(9));
  RunResult tr = einsum("ii", {m});
  ASSERT_TRUE(tr.status.isOk()) << tr.status.toString();
  EXPECT_EQ(tr.shape().nbDims, 0);
  EXPECT_EQ(tr.out().doubleAt(0), 1 + 5 + 9);
  RunResult dg = einsum("ii->i", {m});
  ASSERT_TRUE(dg.status.isOk());
  EXPECT_EQ(doubles(dg.out()), (Doubles{1, 5, 9}));
  // Batched diagonal: "bii->bi".
  HostTensor bm = tensor(DataType::kFLOAT, {2, 2, 2}, seq(8));
  RunResult bd = einsum("bii->bi", {bm});
  ASSERT_TRUE(bd.status.isOk());
  EXPECT_EQ(doubles(bd.out()), (Doubles{1, 4, 5, 8}));
  // Repeated labels of different extents are an error.
  EXPECT_FALSE(einsum("ii", {tensor(DataType::kFLOAT, {2, 3}, seq(6))}).status.isOk());
}

TEST(EinsumReference, ThreeInputsAndOuterProduct) {
  HostTensor a = tensor(DataType::kFLOAT, {2}, Doubles{1, 2});
  HostTensor b = tensor(DataType::kFLOAT, {3}, Doubles{3, 4, 5});
  RunResult o = einsum("i,j->ij", {a, b});
  ASSERT_TRUE(o.status.isOk());
  EXPECT_EQ(doubles(o.out()), (Doubles{3, 4, 5, 6, 8, 10}));
  // Chain a[i] * M[i,j] * b[j] summed -> scalar.
  HostTensor m = tensor(DataType::kFLOAT, {2, 3}, seq(6));
  RunResult c = einsum("i,ij,j->", {a, m, b});
  ASSERT_TRUE(c.status.isOk()) << c.status.toString();
  double want = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) want += a.doubleAt(i) * m.doubleAt(i * 3 + j) * b.doubleAt(j);
  EXPECT_EQ(c.out().doubleAt(0), want);
  // Batched matmul with 16-bit floats (rounded once on store).
  HostTensor x = tensor(DataType::kHALF, {2, 1, 2}, Doubles{1, 2, 3, 4});
  HostTensor y = tensor(DataType::kHALF, {2, 2, 1}, Doubles{5, 6, 7, 8});
  RunResult bm = einsum("bij,bjk->bik", {x, y});
  ASSERT_TRUE(bm.status.isOk());
  EXPECT_EQ(doubles(bm.out()), (Doubles{17, 53}));
}

TEST(EinsumReference, EllipsisBroadcasts) {
  // "...ij,...jk->...ik" with batch dims [2] and [1] broadcasting.
  HostTensor a = tensor(DataType::kFLOAT, {2, 1, 2}, Doubles{1, 2, 3, 4});
  HostTensor b = tensor(DataType::kFLOAT, {1, 2, 1}, Doubles{10, 100});
  RunResult r = einsum("...ij,...jk->...ik", {a, b});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape()), (Ints{2, 1, 1}));
  EXPECT_EQ(doubles(r.out()), (Doubles{210, 430}));
  // Implicit output keeps the ellipsis dims first; a missing leading ellipsis dim broadcasts too.
  HostTensor c = tensor(DataType::kFLOAT, {3, 2}, seq(6));
  HostTensor d = tensor(DataType::kFLOAT, {2}, Doubles{1, -1});
  RunResult e = einsum("...j,j", {c, d});
  ASSERT_TRUE(e.status.isOk()) << e.status.toString();
  EXPECT_EQ(dimsToVector(e.shape()), (Ints{3}));
  EXPECT_EQ(doubles(e.out()), (Doubles{-1, -1, -1}));
  // Ellipsis in the middle.
  RunResult mid = einsum("i...->...i", {tensor(DataType::kFLOAT, {2, 3}, seq(6))});
  ASSERT_TRUE(mid.status.isOk());
  EXPECT_EQ(doubles(mid.out()), (Doubles{1, 4, 2, 5, 3, 6}));
  // Incompatible ellipsis extents.
  EXPECT_FALSE(
      einsum("...i,...i->...i", {tensor(DataType::kFLOAT, {2, 1}, seq(2)), tensor(DataType::kFLOAT, {3, 1}, seq(3))})
          .status.isOk());
}

TEST(EinsumReference, IntegerTypesAndEmptySums) {
  for (DataType t : {DataType::kINT8, DataType::kINT16, DataType::kUINT16, DataType::kINT64, DataType::kUINT32,
                     DataType::kUINT64, DataType::kBF16}) {
    HostTensor a = tensor(t, {2, 2}, Doubles{1, 2, 3, 4});
    RunResult r = einsum("ij,jk->ik", {a, a});
    ASSERT_TRUE(r.status.isOk()) << dataTypeName(t) << r.status.toString();
    EXPECT_EQ(doubles(r.out()), (Doubles{7, 10, 15, 22})) << dataTypeName(t);
  }
  // A summed label of extent 0 gives zeros; an output label of extent 0 an empty output.
  RunResult z =
      einsum("ij,jk->ik", {tensor(DataType::kFLOAT, {2, 0}, Doubles{}), tensor(DataType::kFLOAT, {0, 3}, Doubles{})});
  ASSERT_TRUE(z.status.isOk()) << z.status.toString();
  EXPECT_EQ(doubles(z.out()), Doubles(6, 0.0));
  RunResult e = einsum("ij->ji", {tensor(DataType::kFLOAT, {0, 3}, Doubles{})});
  ASSERT_TRUE(e.status.isOk());
  EXPECT_EQ(dimsToVector(e.shape()), (Ints{3, 0}));
}

TEST(EinsumReference, BadEquationsAreErrors) {
  HostTensor a = tensor(DataType::kFLOAT, {2, 3}, seq(6));
  for (std::string eq :
       {"ij,jk->ik", "ijk->ij", "ij->ik", "ij->ii", "i1->i", "ij-ji", "i..j->ij", "i.j->ij", "ij->i,j", ""}) {
    RunResult r = einsum(eq, {a});
    EXPECT_FALSE(r.status.isOk()) << "'" << eq << "'";
    if (!r.status.isOk()) {
      EXPECT_TRUE(namesNode(r.status)) << r.status.message();
    }
  }
  EXPECT_FALSE(einsum("ij,jk->ik", {a, a}).status.isOk());  // j: 3 vs 2
  EXPECT_FALSE(einsum("ij,jk->ik", {a, tensor(DataType::kHALF, {3, 2}, seq(6))}).status.isOk());
  EXPECT_FALSE(einsum("i,i->i", {tensor(DataType::kBOOL, {2}, Ints{1, 0}), tensor(DataType::kBOOL, {2}, Ints{1, 0})})
                   .status.isOk());
  EXPECT_TRUE(einsum("...->...", {a}).status.isOk());  // ellipsis alone is valid
}

}  // namespace
}  // namespace kiln
