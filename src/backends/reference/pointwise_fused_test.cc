// Reference kernel of PointwiseFused: programs evaluated as their layers would be (broadcasts, immediates, bool
// values, rounding at Casts and at the store), and every kind of malformed program refused by name.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/pointwise_test_programs.h"
#include "backends/reference/kernel_test_util.h"

namespace kiln {
namespace {

using namespace reftest;
using ir::PwOpcode;
using pwtest::imm;
using pwtest::in;
using pwtest::instr;
using pwtest::tmp;

int32_t ew(ElementWiseOperation o) { return static_cast<int32_t>(o); }

TEST(ReferencePointwiseFused, BroadcastImmediatesAndActivation) {
  // relu((x0 - x1) * 2) with x0 [2, 3], x1 [3].
  ir::PointwiseProgram p;
  p.numInputs = 2;
  p.immediates = {2.0f};
  p.instructions = {instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kSUB), {in(0), in(1)}),
                    instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kPROD), {tmp(0), imm(0)}),
                    instr(PwOpcode::kActivation, static_cast<int32_t>(ActivationType::kRELU), {tmp(1)})};
  auto r = runNode(OpType::kPointwiseFused, pwtest::programAttrs(p, DataType::kFLOAT),
                   {var(tensor(DataType::kFLOAT, {2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6})),
                    var(tensor(DataType::kFLOAT, {3}, std::vector<double>{2, 2, 2}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToString(r.shape), "[2,3]");
  EXPECT_EQ(doubles(r.out), (std::vector<double>{0, 0, 2, 4, 6, 8}));
}

TEST(ReferencePointwiseFused, CastsRoundWhereTheUnfusedCastWould) {
  // x - float(half(x)): 1 + 2^-12 is not a float16, so the difference is the rounding the Cast made.
  ir::PointwiseProgram p;
  p.numInputs = 1;
  p.instructions = {instr(PwOpcode::kCast, static_cast<int32_t>(DataType::kHALF), {in(0)}),
                    instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kSUB), {in(0), tmp(0)})};
  double const x = 1.0 + std::ldexp(1.0, -12);
  auto r = runNode(OpType::kPointwiseFused, pwtest::programAttrs(p, DataType::kFLOAT),
                   {var(tensor(DataType::kFLOAT, {2}, std::vector<double>{x, 2.0}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out), (std::vector<double>{std::ldexp(1.0, -12), 0.0}));
  // bf16 keeps 8 significant bits: 1 + 2^-9 rounds to 1 (ties to even).
  p.instructions[0].param = static_cast<int32_t>(DataType::kBF16);
  auto r2 = runNode(OpType::kPointwiseFused, pwtest::programAttrs(p, DataType::kFLOAT),
                    {var(tensor(DataType::kFLOAT, {1}, std::vector<double>{1.0 + std::ldexp(1.0, -9)}))});
  ASSERT_TRUE(r2.status.isOk());
  EXPECT_EQ(r2.out.doubleAt(0), std::ldexp(1.0, -9));
}

TEST(ReferencePointwiseFused, BoolValuesSelectAndBoolOutput) {
  // y = (x0 > 0) and not isnan(x1) -> bool; z = select(that, x0, x1) as float16.
  ir::PointwiseProgram p;
  p.numInputs = 2;
  p.immediates = {0.0f};
  p.instructions = {instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kGREATER), {in(0), imm(0)}),
                    instr(PwOpcode::kUnary, static_cast<int32_t>(UnaryOperation::kISNAN), {in(1)}),
                    instr(PwOpcode::kUnary, static_cast<int32_t>(UnaryOperation::kNOT), {tmp(1)}),
                    instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kAND), {tmp(0), tmp(2)})};
  std::vector<In> ins = {var(tensor(DataType::kFLOAT, {4}, std::vector<double>{1, -1, 2, 3})),
                         var(tensor(DataType::kFLOAT, {4}, std::vector<double>{0, 0, NAN, 5}))};
  auto r = runNode(OpType::kPointwiseFused, pwtest::programAttrs(p, DataType::kBOOL), ins);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.dtype, DataType::kBOOL);
  EXPECT_EQ(doubles(r.out), (std::vector<double>{1, 0, 0, 1}));
  p.instructions.push_back(instr(PwOpcode::kSelect, 0, {tmp(3), in(0), in(1)}));
  auto r2 = runNode(OpType::kPointwiseFused, pwtest::programAttrs(p, DataType::kHALF), ins);
  ASSERT_TRUE(r2.status.isOk()) << r2.status.toString();
  std::vector<double> const z = doubles(r2.out);
  ASSERT_EQ(z.size(), 4u);
  EXPECT_EQ(z[0], 1);
  EXPECT_EQ(z[1], 0);
  EXPECT_TRUE(std::isnan(z[2]));
  EXPECT_EQ(z[3], 3);
}

TEST(ReferencePointwiseFused, ZeroSizeOutput) {
  auto p = pwtest::richProgram(DataType::kFLOAT);
  auto r = runNode(OpType::kPointwiseFused, pwtest::programAttrs(p, DataType::kFLOAT),
                   {var(tensor(DataType::kFLOAT, {0, 3}, std::vector<double>{})),
                    var(tensor(DataType::kFLOAT, {3}, std::vector<double>{1, 2, 3})),
                    var(tensor(DataType::kFLOAT, {1}, std::vector<double>{1}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToString(r.shape), "[0,3]");
}

// Every malformed program is refused by shape inference (so by plan loading) with a message saying what is wrong.
TEST(ReferencePointwiseFused, MalformedProgramsAreRefusedByName) {
  ir::Attributes const good = pwtest::programAttrs(pwtest::richProgram(DataType::kHALF), DataType::kFLOAT);
  std::vector<In> ins = {var(tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2})),
                         var(tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2})),
                         var(tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2}))};
  ASSERT_TRUE(runNode(OpType::kPointwiseFused, good, ins).status.isOk());
  std::vector<int64_t> const code = good.getInts("program");
  // Field f of instruction i lives at 2 + 5 i + f.
  struct Case {
    std::string name;
    size_t at;
    int64_t value;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"version", 0, 7, "version 7"},
      {"count", 1, 0, "instruction count 0"},
      {"count too large", 1, 100000, "instruction count 100000"},
      {"opcode", 2 + 5 * 2, 9, "instruction 2: unknown opcode 9"},
      {"forward reference", 2 + 5 * 1 + 2, 3 + 5, "instruction 1: operand 0 code 8"},
      {"self reference", 2 + 5 * 1 + 2, 3 + 1, "instruction 1: operand 0 code 4"},
      {"immediate out of range", 2 + 5 * 1 + 3, -50, "code -50"},
      {"unused operand set", 2 + 5 * 2 + 3, 0, "operand 1 is 0, not -1"},
      {"elementwise op", 2 + 5 * 0 + 1, 77, "invalid elementwise operation 77"},
      {"bitwise on floats", 2 + 5 * 0 + 1, 100, "not admitted"},
      {"unary op", 2 + 5 * 6 + 1, 100, "not admitted"},
      {"activation", 2 + 5 * 2 + 1, 15, "invalid activation type 15"},
      {"cast type", 2 + 5 * 3 + 1, static_cast<int64_t>(DataType::kINT32), "cast to type"},
      {"select condition float", 2 + 5 * 7 + 2, 0, "condition is not bool"},
  };
  for (auto const& c : cases) {
    SCOPED_TRACE(c.name);
    ir::Attributes a = good;
    std::vector<int64_t> bad = code;
    bad[c.at] = c.value;
    a.setInts("program", bad);
    auto r = runNode(OpType::kPointwiseFused, a, ins, false);
    ASSERT_FALSE(r.status.isOk());
    EXPECT_NE(r.status.message().find(c.expect), std::string::npos) << r.status.toString();
    EXPECT_NE(r.status.message().find("PointwiseFused program"), std::string::npos) << r.status.toString();
  }
  {
    ir::Attributes a = good;
    a.erase("program_floats");
    auto r = runNode(OpType::kPointwiseFused, a, ins, false);
    ASSERT_FALSE(r.status.isOk());
    EXPECT_NE(r.status.message().find("program_floats"), std::string::npos) << r.status.toString();
  }
  {
    ir::Attributes a = good;
    a.erase("program");
    EXPECT_FALSE(runNode(OpType::kPointwiseFused, a, ins, false).status.isOk());
  }
  {
    std::vector<int64_t> truncated(code.begin(), code.end() - 1);
    ir::Attributes a = good;
    a.setInts("program", truncated);
    auto r = runNode(OpType::kPointwiseFused, a, ins, false);
    ASSERT_FALSE(r.status.isOk());
    EXPECT_NE(r.status.message().find("entries where"), std::string::npos) << r.status.toString();
  }
  {
    // A float result declared bool, and an integer input.
    ir::Attributes a = good;
    a.setInt("to", static_cast<int64_t>(DataType::kBOOL));
    EXPECT_NE(runNode(OpType::kPointwiseFused, a, ins, false).status.message().find("output type is bool"),
              std::string::npos);
    std::vector<In> ints = ins;
    ints[1] = var(tensor(DataType::kINT32, {2}, std::vector<double>{1, 2}));
    EXPECT_NE(runNode(OpType::kPointwiseFused, good, ints, false).status.message().find("input 1 is int32"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace kiln
