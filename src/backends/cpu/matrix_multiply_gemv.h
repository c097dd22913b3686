// Test hook of the CPU GEMV tactic (matrix_multiply_cpu_gemv, matrix_multiply_gemv.cc): which of its loops runs.
#pragma once

namespace kiln::backends::cpu {

/// True: the tactic runs its portable loops even where the CPU has AVX-512 (tests check both sets against the
/// reference); false (the default): AVX-512 where the CPU has it.
void setCpuGemvPortable(bool portable);

}  // namespace kiln::backends::cpu
