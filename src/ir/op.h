// OpType: the enum generated from ops.def, with names and per-op documentation strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

enum class OpType : uint16_t {
#define KILN_OP(name, inputs, attrs) k##name,
#include "ir/ops.def"
#undef KILN_OP
};

inline constexpr int kNumOps = 0
#define KILN_OP(name, inputs, attrs) +1
#include "ir/ops.def"
#undef KILN_OP
    ;

/// "Convolution", "Activation", ... (stable: used in plans and the IR text form).
char const* opName(OpType op);
/// Parses an op name; nullopt when unknown.
std::optional<OpType> parseOpName(std::string_view name);
/// The inputs / attributes documentation of an op (from ops.def).
char const* opInputsDoc(OpType op);
char const* opAttrsDoc(OpType op);

}  // namespace kiln::ir
