// Op names and documentation, generated from ops.def.
#include "ir/op.h"

namespace kiln::ir {
namespace {
struct OpInfo {
  char const* name;
  char const* inputs;
  char const* attrs;
};
constexpr OpInfo kOps[] = {
#define KILN_OP(name, inputs, attrs) {#name, inputs, attrs},
#include "ir/ops.def"
#undef KILN_OP
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps, "ops.def and the op table disagree");
}  // namespace

char const* opName(OpType op) { return kOps[static_cast<int>(op)].name; }
char const* opInputsDoc(OpType op) { return kOps[static_cast<int>(op)].inputs; }
char const* opAttrsDoc(OpType op) { return kOps[static_cast<int>(op)].attrs; }

std::optional<OpType> parseOpName(std::string_view name) {
  for (int i = 0; i < kNumOps; ++i)
    if (name == kOps[i].name) return static_cast<OpType>(i);
  return std::nullopt;
}

}  // namespace kiln::ir
