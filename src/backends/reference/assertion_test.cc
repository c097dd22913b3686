// Tests of Assertion: passes when every element is true (also for empty conditions), fails with the message
// otherwise; a known-false constant condition fails at shape inference; non-bool conditions are rejected.
#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

TEST(AssertionReference, PassesAndFailsWithMessage) {
  ir::Attributes a = attrs({{"message", std::string("x must be positive")}});
  EXPECT_TRUE(runNode(OpType::kAssertion, a, {var(tensor(DataType::kBOOL, {2, 2}, std::vector<double>{1, 1, 1, 1}))}, 0)
                  .status.isOk());
  EXPECT_TRUE(runNode(OpType::kAssertion, a, {var(tensor(DataType::kBOOL, {0}, std::vector<double>{}))}, 0).status.isOk());
  EXPECT_TRUE(runNode(OpType::kAssertion, a, {var(scalar(DataType::kBOOL, 1))}, 0).status.isOk());
  RunResult r = runNode(OpType::kAssertion, a, {var(tensor(DataType::kBOOL, {3}, std::vector<double>{1, 0, 1}))}, 0);
  ASSERT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.toString().find("x must be positive"), std::string::npos) << r.status.toString();
}

TEST(AssertionReference, KnownFalseConstantFailsAtInference) {
  ir::Attributes a = attrs({{"message", std::string("static check")}});
  RunResult r = runNode(OpType::kAssertion, a, {cst(tensor(DataType::kBOOL, {2}, std::vector<double>{1, 0}))}, 0, false);
  ASSERT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.toString().find("static check"), std::string::npos);
  EXPECT_TRUE(runNode(OpType::kAssertion, a, {cst(tensor(DataType::kBOOL, {2}, std::vector<double>{1, 1}))}, 0, false)
                  .status.isOk());
}

TEST(AssertionReference, BadInput) {
  EXPECT_FALSE(runNode(OpType::kAssertion, {}, {var(tensor(DataType::kINT32, {1}, std::vector<double>{1}))}, 0).status.isOk());
  EXPECT_FALSE(runNode(OpType::kAssertion, {}, {var(tensor(DataType::kBOOL, {1}, std::vector<double>{1}))}, 1).status.isOk());
}

}  // namespace
}  // namespace kiln
