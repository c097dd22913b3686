// The CPU block interpreter of PointwiseFused against the reference (fp64) on every admitted operation, every float
// storage type, full, one-element and general broadcast inputs, sizes around the 256-element block, and threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/cpu_test_util.h"
#include "backends/pointwise_test_programs.h"
#include "core/thread_pool.h"

namespace kiln {
namespace {

using reftest::var;

constexpr DataType kFloatTypes[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

// Values uniform in [-2, 2), so that logs, roots and inverse trigonometry see both their domains.
HostTensor random(DataType t, std::vector<int64_t> const& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-2, 2);
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return HostTensor::fromVector(t, makeDims(shape), v);
}

// Norm-relative error; NaN where the reference has NaN, infinities equal.
double error(HostTensor const& a, HostTensor const& ref) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.count(); ++i) {
    double r = ref.doubleAt(i), x = a.doubleAt(i);
    if (std::isnan(r) || std::isinf(r)) {
      if (!(std::isnan(r) ? std::isnan(x) : x == r)) return INFINITY;
      continue;
    }
    num += (x - r) * (x - r);
    den += r * r;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

double tolerance(DataType t) { return t == DataType::kFLOAT ? 1e-5 : t == DataType::kHALF ? 5e-3 : 2e-2; }

// Runs the CPU tactic (on `threads`) and the reference on the same inputs; returns the error.
double run(ir::PointwiseProgram const& p, DataType out, std::vector<HostTensor> const& ins, int threads = 1) {
  std::vector<reftest::In> in;
  for (auto const& h : ins) in.push_back(var(h));
  cputest::OneNode n = cputest::makeNode(ir::OpType::kPointwiseFused, pwtest::programAttrs(p, out), in);
  backends::Tactic const* t = backends::TacticRegistry::instance().find("pointwisefused_cpu_block");
  EXPECT_NE(t, nullptr);
  if (!t) return INFINITY;
  EXPECT_TRUE(t->supports(*n.node, n.in, n.out));
  std::vector<HostTensor> ref{*HostTensor::allocate(n.out[0].dtype, n.out[0].shape, "ref")};
  Status s = backends::evaluateOnHost(*n.node, n.ptrs, ref);
  EXPECT_TRUE(s.isOk()) << s.toString();
  auto k = t->create(*n.node);
  EXPECT_TRUE(k.isOk()) << k.status().toString();
  if (!k.isOk()) return INFINITY;
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
    ctx.inputs.push_back({const_cast<void*>(ins[i].data()), ins[i].dtype(), ins[i].shape()});
  ctx.outputs.push_back({y.mutableData(), y.dtype(), y.shape()});
  s = (*k)->enqueue(ctx);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return error(y, ref[0]);
}

TEST(CpuPointwiseFused, EveryOperationEveryFloatType) {
  uint32_t seed = 1;
  for (auto const& np : pwtest::perOperationPrograms())
    for (DataType t : kFloatTypes) {
      SCOPED_TRACE(np.name + " " + dataTypeName(t));
      EXPECT_LE(run(np.program, t, {random(t, {3, 19}, seed), random(t, {19}, seed + 1)}), tolerance(t));
      seed += 2;
    }
}

TEST(CpuPointwiseFused, FullOneElementAndBroadcastInputsAroundTheBlock) {
  uint32_t seed = 100;
  for (DataType t : kFloatTypes)
    for (int64_t n : {1, 255, 256, 257, 1000}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " n=", n));
      auto p = pwtest::richProgram(DataType::kFLOAT);
      EXPECT_LE(run(p, t, {random(t, {n}, seed), random(t, {n}, seed + 1), random(t, {n}, seed + 2)}), tolerance(t));
      EXPECT_LE(run(p, t, {random(t, {2, n}, seed), random(t, {1}, seed + 1), random(t, {}, seed + 2)}), tolerance(t));
      EXPECT_LE(run(p, t, {random(t, {3, 1, n}, seed), random(t, {4, 1}, seed + 1), random(t, {1, n}, seed + 2)}),
                tolerance(t));
      seed += 3;
    }
}

TEST(CpuPointwiseFused, CastsInsideMixedStorageAndBoolOutput) {
  for (DataType mid : kFloatTypes) {
    auto p = pwtest::richProgram(mid);
    // Inputs of three storage types; fp32 output (the Cast's rounding is the same in both, up to values the fp32
    // and fp64 evaluations put on either side of a rounding boundary).
    HostTensor a = random(DataType::kHALF, {5, 33}, 1), b = random(DataType::kBF16, {33}, 2),
               c = random(DataType::kFLOAT, {5, 1}, 3);
    EXPECT_LE(run(p, DataType::kFLOAT, {a, b, c}), mid == DataType::kFLOAT ? 1e-5 : 1e-2);
  }
  ir::PointwiseProgram cmp;
  cmp.numInputs = 2;
  cmp.instructions = {pwtest::instr(ir::PwOpcode::kElementWise, static_cast<int32_t>(ElementWiseOperation::kLESS),
                                    {pwtest::in(0), pwtest::in(1)})};
  EXPECT_EQ(run(cmp, DataType::kBOOL, {random(DataType::kFLOAT, {300}, 4), random(DataType::kFLOAT, {300}, 5)}), 0);
}

TEST(CpuPointwiseFused, LargeInputsOnTwoThreads) {
  auto p = pwtest::richProgram(DataType::kHALF);
  std::vector<HostTensor> ins = {random(DataType::kFLOAT, {40000}, 7), random(DataType::kFLOAT, {40000}, 8),
                                 random(DataType::kFLOAT, {1}, 9)};
  EXPECT_LE(run(p, DataType::kFLOAT, ins, 2), 1e-2);
  EXPECT_LE(run(pwtest::richProgram(DataType::kFLOAT), DataType::kFLOAT, ins, 2), 1e-5);
}

}  // namespace
}  // namespace kiln
