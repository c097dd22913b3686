// CUDA C generation for PointwiseFused: the program becomes straight-line fp32 code (bools as 0/1), wrapped in a
// vector kernel (every input full or one element: 16-byte loads and stores), and general broadcast kernels with
// 32- and 64-bit index math. The formulas are those of backends/pointwise_program_math.h.
#include "backends/cuda/pointwise_codegen.h"

#include <cstdio>
#include <cstring>

#include "core/dtype.h"

namespace kiln::cuda::pwgen {
namespace {

// A float as an exact bit pattern (NaN payloads and infinities included).
std::string lit(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  char buf[40];
  std::snprintf(buf, sizeof buf, "__uint_as_float(0x%08xu)", bits);
  return buf;
}

std::string boolOf(std::string const& cond) { return "((" + cond + ") ? 1.0f : 0.0f)"; }

std::string elementWise(ElementWiseOperation op, std::string const& a, std::string const& b) {
  switch (op) {
    case ElementWiseOperation::kSUM:
      return a + " + " + b;
    case ElementWiseOperation::kPROD:
      return a + " * " + b;
    case ElementWiseOperation::kMAX:
      return "(pw_isnan(" + a + ") || pw_isnan(" + b + ")) ? pw_nan() : (" + a + " > " + b + " ? " + a + " : " + b +
             ")";
    case ElementWiseOperation::kMIN:
      return "(pw_isnan(" + a + ") || pw_isnan(" + b + ")) ? pw_nan() : (" + a + " < " + b + " ? " + a + " : " + b +
             ")";
    case ElementWiseOperation::kSUB:
      return a + " - " + b;
    case ElementWiseOperation::kDIV:
      return a + " / " + b;
    case ElementWiseOperation::kPOW:
      return "powf(" + a + ", " + b + ")";
    case ElementWiseOperation::kFLOOR_DIV:
      return "floorf(" + a + " / " + b + ")";
    case ElementWiseOperation::kAND:
      return boolOf(a + " != 0.0f && " + b + " != 0.0f");
    case ElementWiseOperation::kOR:
      return boolOf(a + " != 0.0f || " + b + " != 0.0f");
    case ElementWiseOperation::kXOR:
      return boolOf("(" + a + " != 0.0f) != (" + b + " != 0.0f)");
    case ElementWiseOperation::kEQUAL:
      return boolOf(a + " == " + b);
    case ElementWiseOperation::kGREATER:
      return boolOf(a + " > " + b);
    case ElementWiseOperation::kLESS:
      return boolOf(a + " < " + b);
    case ElementWiseOperation::kBITWISE_AND:
    case ElementWiseOperation::kBITWISE_OR:
    case ElementWiseOperation::kBITWISE_XOR:
      break;  // refused by decodePointwiseProgram
  }
  return "0.0f";
}

std::string unary(UnaryOperation op, std::string const& a) {
  auto call = [&](char const* f) { return std::string(f) + "(" + a + ")"; };
  switch (op) {
    case UnaryOperation::kEXP:
      return call("expf");
    case UnaryOperation::kLOG:
      return call("logf");
    case UnaryOperation::kSQRT:
      return call("sqrtf");
    case UnaryOperation::kRECIP:
      return "1.0f / " + a;
    case UnaryOperation::kABS:
      return call("fabsf");
    case UnaryOperation::kNEG:
      return "-" + a;
    case UnaryOperation::kSIN:
      return call("sinf");
    case UnaryOperation::kCOS:
      return call("cosf");
    case UnaryOperation::kTAN:
      return call("tanf");
    case UnaryOperation::kSINH:
      return call("sinhf");
    case UnaryOperation::kCOSH:
      return call("coshf");
    case UnaryOperation::kASIN:
      return call("asinf");
    case UnaryOperation::kACOS:
      return call("acosf");
    case UnaryOperation::kATAN:
      return call("atanf");
    case UnaryOperation::kASINH:
      return call("asinhf");
    case UnaryOperation::kACOSH:
      return call("acoshf");
    case UnaryOperation::kATANH:
      return call("atanhf");
    case UnaryOperation::kCEIL:
      return call("ceilf");
    case UnaryOperation::kFLOOR:
      return call("floorf");
    case UnaryOperation::kERF:
      return call("erff");
    case UnaryOperation::kNOT:
      return boolOf(a + " == 0.0f");
    case UnaryOperation::kSIGN:
      return "pw_isnan(" + a + ") ? " + a + " : (" + a + " > 0.0f ? 1.0f : (" + a + " < 0.0f ? -1.0f : 0.0f))";
    case UnaryOperation::kROUND:
      return call("rintf");  // ties to even in the default rounding mode
    case UnaryOperation::kISINF:
      return boolOf("pw_isinf(" + a + ")");
    case UnaryOperation::kISNAN:
      return boolOf("pw_isnan(" + a + ")");
    case UnaryOperation::kBITWISE_NOT:
      break;  // refused by decodePointwiseProgram
  }
  return a;
}

std::string activation(ActivationType type, std::string const& x, float alphaV, float betaV) {
  std::string const alpha = lit(alphaV), beta = lit(betaV);
  switch (type) {
    case ActivationType::kRELU:
      return "pw_isnan(" + x + ") ? " + x + " : (" + x + " > 0.0f ? " + x + " : 0.0f)";
    case ActivationType::kSIGMOID:
      return "1.0f / (1.0f + expf(-" + x + "))";
    case ActivationType::kTANH:
      return "tanhf(" + x + ")";
    case ActivationType::kLEAKY_RELU:
      return x + " >= 0.0f ? " + x + " : " + alpha + " * " + x;
    case ActivationType::kELU:
      return x + " >= 0.0f ? " + x + " : " + alpha + " * expm1f(" + x + ")";
    case ActivationType::kSELU:
      return x + " > 0.0f ? " + beta + " * " + x + " : " + beta + " * " + alpha + " * expm1f(" + x + ")";
    case ActivationType::kSOFTSIGN:
      return x + " / (1.0f + fabsf(" + x + "))";
    case ActivationType::kSOFTPLUS:
      return alpha + " * pw_softplus(" + beta + " * " + x + ")";
    case ActivationType::kCLIP:
      return "pw_isnan(" + x + ") ? " + x + " : fmaxf(" + alpha + ", fminf(" + beta + ", " + x + "))";
    case ActivationType::kHARD_SIGMOID:
      return "pw_hard_sigmoid(" + alpha + " * " + x + " + " + beta + ")";
    case ActivationType::kSCALED_TANH:
      return alpha + " * tanhf(" + beta + " * " + x + ")";
    case ActivationType::kTHRESHOLDED_RELU:
      return "pw_isnan(" + x + ") ? " + x + " : (" + x + " > " + alpha + " ? " + x + " : 0.0f)";
    case ActivationType::kGELU_ERF:
      return "0.5f * " + x + " * (1.0f + erff(" + x + " * 0.70710678118654752440f))";
    case ActivationType::kGELU_TANH:
      return "0.5f * " + x + " * (1.0f + tanhf(0.79788456080286535588f * (0.044715f * " + x + " * " + x + " * " + x +
             " + " + x + ")))";
  }
  return x;
}

std::string cast(DataType to, std::string const& a) {
  if (to == DataType::kHALF) return "pw_h2f(pw_f2h(" + a + "))";
  if (to == DataType::kBF16) return "pw_bf2f(pw_f2bf(" + a + "))";
  if (to == DataType::kBOOL) return boolOf(a + " != 0.0f");
  return a;  // kFLOAT: values are fp32 already
}

// The scalar load of element `i` of input pointer `p` stored as `t`, as fp32.
std::string loadScalar(DataType t, std::string const& p, std::string const& i) {
  if (t == DataType::kHALF) return "pw_h2f(((const unsigned short*)" + p + ")[" + i + "])";
  if (t == DataType::kBF16) return "pw_bf2f(((const unsigned short*)" + p + ")[" + i + "])";
  if (t == DataType::kBOOL) return "(((const unsigned char*)" + p + ")[" + i + "] != 0 ? 1.0f : 0.0f)";
  return "((const float*)" + p + ")[" + i + "]";
}

std::string storeScalar(DataType t, std::string const& p, std::string const& i, std::string const& v) {
  if (t == DataType::kHALF) return "((unsigned short*)" + p + ")[" + i + "] = pw_f2h(" + v + ");";
  if (t == DataType::kBF16) return "((unsigned short*)" + p + ")[" + i + "] = pw_f2bf(" + v + ");";
  if (t == DataType::kBOOL) return "((unsigned char*)" + p + ")[" + i + "] = (" + v + ") != 0.0f ? 1 : 0;";
  return "((float*)" + p + ")[" + i + "] = " + v + ";";
}

// Element e of words w[] holding elements of type t, as fp32.
std::string extract(DataType t, std::string const& w, int e) {
  size_t const s = dataTypeSize(t);
  if (s == 4) return strCat("__uint_as_float(", w, "[", e, "])");
  if (s == 2) {
    std::string bits = strCat("(unsigned short)(", w, "[", e / 2, "] >> ", 16 * (e % 2), ")");
    return t == DataType::kHALF ? "pw_h2f(" + bits + ")" : "pw_bf2f(" + bits + ")";
  }
  return strCat("(((", w, "[", e / 4, "] >> ", 8 * (e % 4), ") & 0xffu) != 0u ? 1.0f : 0.0f)");
}

// Loads `bytes` (4, 8 or a multiple of 16) at `base` into words w[] with the widest aligned accesses.
std::string loadWords(std::string const& w, std::string const& base, size_t bytes) {
  std::string s = strCat("unsigned ", w, "[", bytes / 4, "];");
  if (bytes >= 16) {
    for (size_t j = 0; j < bytes / 16; ++j)
      s += strCat(" { pw_u4 q = ((const pw_u4*)(", base, "))[", j, "]; ", w, "[", 4 * j, "] = q.a; ", w, "[", 4 * j + 1,
                  "] = q.b; ", w, "[", 4 * j + 2, "] = q.c; ", w, "[", 4 * j + 3, "] = q.d; }");
  } else if (bytes == 8) {
    s += strCat(" { pw_u2 q = *(const pw_u2*)(", base, "); ", w, "[0] = q.a; ", w, "[1] = q.b; }");
  } else {
    s += strCat(" ", w, "[0] = *(const unsigned*)(", base, ");");
  }
  return s;
}

std::string prelude(int numInputs) {
  return strCat(R"(// Generated by Kiln's fuse_pointwise code generator (src/backends/cuda/pointwise_codegen.cc).
struct alignas(16) pw_u4 { unsigned a, b, c, d; };
struct alignas(8) pw_u2 { unsigned a, b; };
struct PwParams {
  const void* in[)",
                ir::kPointwiseMaxInputs, R"(];
  void* out;
  long long n;
  long long dims[)",
                kMaxRank, R"(];
  long long strides[)",
                ir::kPointwiseMaxInputs, "][", kMaxRank, R"(];
  int rank;
  unsigned scalarMask;
};
__device__ __forceinline__ float pw_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short pw_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float pw_bf2f(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }
__device__ __forceinline__ unsigned short pw_f2bf(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ bool pw_isnan(float x) { return x != x; }
__device__ __forceinline__ bool pw_isinf(float x) { return fabsf(x) == __uint_as_float(0x7f800000u); }
__device__ __forceinline__ float pw_nan() { return __uint_as_float(0x7fffffffu); }
__device__ __forceinline__ float pw_softplus(float t) { return t > 0.0f ? t + log1pf(expf(-t)) : log1pf(expf(t)); }
__device__ __forceinline__ float pw_hard_sigmoid(float t) { return pw_isnan(t) ? t : fmaxf(0.0f, fminf(1.0f, t)); }
// )",
                numInputs, " inputs\n");
}

}  // namespace

int vectorWidth(DataType outType) { return dataTypeSize(outType) == 4 ? 4 : 8; }

std::string generateSource(ir::PointwiseProgram const& p, std::vector<DataType> const& inTypes, DataType outType) {
  int const n = p.numInputs;
  std::string s = prelude(n);
  // The program.
  s += strCat("__device__ __forceinline__ float pw_eval(const float (&x)[", n, "]) {\n");
  auto operand = [&](ir::PwOperand const& o) -> std::string {
    switch (o.source) {
      case ir::PwSource::kNone:
        return "0.0f";
      case ir::PwSource::kInput:
        return strCat("x[", o.index, "]");
      case ir::PwSource::kInstruction:
        return strCat("t", o.index);
      case ir::PwSource::kImmediate:
        return lit(p.immediates[static_cast<size_t>(o.index)]);
    }
    return "0.0f";
  };
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    ir::PwInstruction const& in = p.instructions[i];
    std::string const a = operand(in.operands[0]), b = operand(in.operands[1]), c = operand(in.operands[2]);
    std::string e;
    switch (in.opcode) {
      case ir::PwOpcode::kElementWise:
        e = elementWise(static_cast<ElementWiseOperation>(in.param), a, b);
        break;
      case ir::PwOpcode::kUnary:
        e = unary(static_cast<UnaryOperation>(in.param), a);
        break;
      case ir::PwOpcode::kActivation:
        e = activation(static_cast<ActivationType>(in.param), a, in.alpha, in.beta);
        break;
      case ir::PwOpcode::kCast:
        e = cast(static_cast<DataType>(in.param), a);
        break;
      case ir::PwOpcode::kSelect:
        e = a + " != 0.0f ? " + b + " : " + c;
        break;
    }
    s += strCat("  const float t", i, " = ", e, ";\n");
  }
  s += strCat("  return t", p.instructions.size() - 1, ";\n}\n");

  // Vector kernel: element groups of E; inputs full (vector loads) or of one element (loaded once).
  int const E = vectorWidth(outType);
  size_t const outBytes = static_cast<size_t>(E) * dataTypeSize(outType);
  s += strCat("extern \"C\" __global__ void __launch_bounds__(", kThreads, ") ", kVectorKernel,
              "(const PwParams p) {\n");
  s += strCat("  const long long nv = p.n / ", E, ";\n");
  s += "  const long long step = (long long)gridDim.x * blockDim.x;\n";
  s += "  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  for (int k = 0; k < n; ++k)
    s += strCat("  const bool sc", k, " = (p.scalarMask >> ", k, ") & 1u;\n  const float s", k, " = sc", k, " ? ",
                loadScalar(inTypes[static_cast<size_t>(k)], strCat("p.in[", k, "]"), "0"), " : 0.0f;\n");
  s += "  for (long long v = first; v < nv; v += step) {\n";
  s += strCat("    float xs[", n, "][", E, "];\n");
  for (int k = 0; k < n; ++k) {
    DataType const t = inTypes[static_cast<size_t>(k)];
    size_t const bytes = static_cast<size_t>(E) * dataTypeSize(t);
    s += strCat("    if (sc", k, ") {\n");
    for (int e = 0; e < E; ++e) s += strCat("      xs[", k, "][", e, "] = s", k, ";\n");
    s += "    } else {\n      " + loadWords(strCat("w", k), strCat("(const char*)p.in[", k, "] + v * ", bytes), bytes) +
         "\n";
    for (int e = 0; e < E; ++e) s += strCat("      xs[", k, "][", e, "] = ", extract(t, strCat("w", k), e), ";\n");
    s += "    }\n";
  }
  s += strCat("    unsigned o[", (outBytes + 3) / 4, "] = {};\n");
  for (int e = 0; e < E; ++e) {
    s += strCat("    { float x[", n, "] = {");
    for (int k = 0; k < n; ++k) s += strCat(k ? ", " : "", "xs[", k, "][", e, "]");
    s += "}; const float r = pw_eval(x); ";
    size_t const os = dataTypeSize(outType);
    if (os == 4)
      s += strCat("o[", e, "] = __float_as_uint(r);");
    else if (outType == DataType::kHALF)
      s += strCat("o[", e / 2, "] |= (unsigned)pw_f2h(r) << ", 16 * (e % 2), ";");
    else if (outType == DataType::kBF16)
      s += strCat("o[", e / 2, "] |= (unsigned)pw_f2bf(r) << ", 16 * (e % 2), ";");
    else
      s += strCat("o[", e / 4, "] |= (r != 0.0f ? 1u : 0u) << ", 8 * (e % 4), ";");
    s += " }\n";
  }
  if (outBytes >= 16) {
    for (size_t j = 0; j < outBytes / 16; ++j)
      s += strCat("    { pw_u4 q; q.a = o[", 4 * j, "]; q.b = o[", 4 * j + 1, "]; q.c = o[", 4 * j + 2, "]; q.d = o[",
                  4 * j + 3, "]; ((pw_u4*)((char*)p.out + v * ", outBytes, "))[", j, "] = q; }\n");
  } else {
    s += strCat("    { pw_u2 q; q.a = o[0]; q.b = o[1]; *(pw_u2*)((char*)p.out + v * ", outBytes, ") = q; }\n");
  }
  s += "  }\n";
  // The tail (fewer than E elements), one per thread of the first threads.
  s += strCat("  const long long i = nv * ", E, " + first;\n  if (i < p.n) {\n");
  s += strCat("    float x[", n, "];\n");
  for (int k = 0; k < n; ++k)
    s += strCat("    x[", k, "] = sc", k, " ? s", k, " : ",
                loadScalar(inTypes[static_cast<size_t>(k)], strCat("p.in[", k, "]"), "i"), ";\n");
  s += "    " + storeScalar(outType, "p.out", "i", "pw_eval(x)") + "\n  }\n}\n";

  // General broadcast: per-input strides over the merged dims, index math in I.
  s += "template <typename I>\n__device__ __forceinline__ void pw_bcast(const PwParams& p) {\n";
  s += "  const I n = (I)p.n;\n  const I step = (I)gridDim.x * (I)blockDim.x;\n";
  s += "  for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < n; i += step) {\n";
  s += "    I rem = i;\n";
  for (int k = 0; k < n; ++k) s += strCat("    I off", k, " = 0;\n");
  s += "    for (int d = p.rank - 1; d >= 0; --d) {\n      const I dim = (I)p.dims[d];\n      const I c = rem % dim;\n"
       "      rem /= dim;\n";
  for (int k = 0; k < n; ++k) s += strCat("      off", k, " += c * (I)p.strides[", k, "][d];\n");
  s += "    }\n";
  s += strCat("    float x[", n, "];\n");
  for (int k = 0; k < n; ++k)
    s += strCat("    x[", k,
                "] = ", loadScalar(inTypes[static_cast<size_t>(k)], strCat("p.in[", k, "]"), strCat("off", k)), ";\n");
  s += "    " + storeScalar(outType, "p.out", "i", "pw_eval(x)") + "\n  }\n}\n";
  s += strCat("extern \"C\" __global__ void __launch_bounds__(", kThreads, ") ", kBroadcast32Kernel,
              "(const PwParams p) { pw_bcast<unsigned>(p); }\n");
  s += strCat("extern \"C\" __global__ void __launch_bounds__(", kThreads, ") ", kBroadcast64Kernel,
              "(const PwParams p) { pw_bcast<long long>(p); }\n");
  return s;
}

}  // namespace kiln::cuda::pwgen
