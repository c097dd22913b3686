// Kiln extension: getPlanSummaryBytesNeeded() and getPlanSummary(), a plan's header and graph section as JSON
// for inspection tools (kilnexec --inspect), without an engine, a device or the weights.
#include <cstdio>
#include <cstring>
#include <new>

#include "core/host_memory.h"
#include "core/logging.h"
#include "kiln/kiln_runtime.h"
#include "plan/plan.h"

namespace kiln {
namespace {

std::string quote(std::string const& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      r += buf;
    } else {
      r += c;
    }
  }
  return r + "\"";
}

template <typename T>
std::string list(std::vector<T> const& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string dimsList(Dims const& d) {
  std::vector<int64_t> v(d.d, d.d + std::max(d.nbDims, 0));
  return list(v);
}

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// BuilderFlag names by bit, TensorRT's order (see kiln_base.h).
constexpr char const* kBuilderFlagNames[] = {"FP16",
                                             "INT8",
                                             "DEBUG",
                                             "GPU_FALLBACK",
                                             "REFIT",
                                             "DISABLE_TIMING_CACHE",
                                             "TF32",
                                             "SPARSE_WEIGHTS",
                                             "SAFETY_SCOPE",
                                             "OBEY_PRECISION_CONSTRAINTS",
                                             "PREFER_PRECISION_CONSTRAINTS",
                                             "DIRECT_IO",
                                             "REJECT_EMPTY_ALGORITHMS",
                                             "VERSION_COMPATIBLE",
                                             "EXCLUDE_LEAN_RUNTIME",
                                             "FP8",
                                             "ERROR_ON_TIMING_CACHE_MISS",
                                             "BF16",
                                             "DISABLE_COMPILATION_CACHE",
                                             "STRIP_PLAN",
                                             "REFIT_IDENTICAL",
                                             "WEIGHT_STREAMING",
                                             "INT4",
                                             "REFIT_INDIVIDUAL",
                                             "STRICT_NANS",
                                             "MONITOR_MEMORY",
                                             "FP4",
                                             "EDITABLE_TIMING_CACHE",
                                             "DISTRIBUTIVE_INDEPENDENCE"};
constexpr char const* kTacticSourceNames[] = {"CUBLAS",           "CUBLAS_LT", "CUDNN",  "EDGE_MASK_CONVOLUTIONS",
                                              "JIT_CONVOLUTIONS", "KILN",      "ONEDNN", "REFERENCE"};
constexpr char const* kVerbosityNames[] = {"LAYER_NAMES_ONLY", "NONE", "DETAILED"};

template <size_t N>
std::string bitNames(uint32_t bits, char const* const (&names)[N]) {
  std::string s = "[";
  bool first = true;
  for (uint32_t b = 0; b < 32; ++b) {
    if (!(bits & (1u << b))) continue;
    s += std::string(first ? "" : ", ") + quote(b < N ? names[b] : "bit " + std::to_string(b));
    first = false;
  }
  return s + "]";
}

std::string dtypeName(int32_t t) {
  bool const known = (t >= 0 && t < EnumMax<DataType>()) || isSupportedType(static_cast<DataType>(t));
  return known ? dataTypeName(static_cast<DataType>(t)) : "type " + std::to_string(t);
}

std::string summaryJson(plan::PlanSummary const& s) {
  plan::PlanHeader const& h = s.header;
  std::string j = "{\n";
  j += strCat("  \"format\": \"", h.formatMajor, ".", h.formatMinor, "\",\n");
  j += "  \"kilnVersion\": " + quote(h.kilnVersion) + ",\n";
  j += "  \"target\": " + quote(h.target) + ",\n";
  j += strCat("  \"headerFlags\": ", h.flags, ",\n");
  j += strCat("  \"totalBytes\": ", h.totalSize, ",\n");
  j += "  \"sections\": [";
  for (size_t i = 0; i < h.sections.size(); ++i) {
    auto const& sec = h.sections[i];
    j += strCat(i ? ",\n    " : "\n    ", "{\"kind\": ", quote(sec.kind), ", \"offset\": ", sec.offset,
                ", \"size\": ", sec.size, ", \"xxh3\": \"", hex64(sec.checksum),
                "\", \"verified\": ", s.sectionVerified[i] ? "true" : "false", "}");
  }
  j += "],\n";
  j += "  \"name\": " + quote(s.name) + ",\n";
  j += strCat("  \"builderFlags\": ", bitNames(s.builderFlags, kBuilderFlagNames), ",\n");
  j += strCat("  \"optimizationLevel\": ", s.optimizationLevel, ",\n");
  bool const verbosityKnown = s.profilingVerbosity >= 0 && s.profilingVerbosity < 3;
  j += "  \"profilingVerbosity\": " +
       quote(verbosityKnown ? kVerbosityNames[s.profilingVerbosity] : std::to_string(s.profilingVerbosity)) + ",\n";
  j += strCat("  \"tacticSources\": ", bitNames(s.tacticSources, kTacticSourceNames), ",\n");
  j += "  \"io\": [";
  for (size_t i = 0; i < s.io.size(); ++i) {
    auto const& t = s.io[i];
    j +=
        strCat(i ? ",\n    " : "\n    ", "{\"name\": ", quote(t.name), ", \"mode\": \"", t.isInput ? "input" : "output",
               "\", \"dtype\": ", quote(dtypeName(t.dtype)), ", \"shape\": ", list(t.dims), "}");
  }
  j += "],\n  \"profiles\": [";
  for (size_t p = 0; p < s.profiles.size(); ++p) {
    j += p ? ",\n    [" : "\n    [";
    auto const& ins = s.profiles[p].inputs;
    for (size_t i = 0; i < ins.size(); ++i)
      j += strCat(i ? ", " : "", "{\"input\": ", quote(ins[i].input), ", \"min\": ", dimsList(ins[i].min),
                  ", \"opt\": ", dimsList(ins[i].opt), ", \"max\": ", dimsList(ins[i].max), "}");
    j += "]";
  }
  j += "],\n";
  j += strCat("  \"layers\": ", s.layers, ",\n  \"constants\": ", s.constants, ",\n");
  auto counts = [](std::vector<std::pair<std::string, int64_t>> const& v) {
    std::string r = "{";
    for (size_t i = 0; i < v.size(); ++i) r += strCat(i ? ", " : "", quote(v[i].first), ": ", v[i].second);
    return r + "}";
  };
  j += "  \"precisions\": " + counts(s.precisions) + ",\n";
  j += "  \"layerTypes\": " + counts(s.ops) + ",\n";
  j += "  \"plugins\": [";
  for (size_t i = 0; i < s.plugins.size(); ++i) j += (i ? ", " : "") + quote(s.plugins[i]);
  j += "],\n";
  j += strCat("  \"activationBytes\": ", s.arenaSize, ",\n  \"weightsBytes\": ", s.weightsBytes, "\n}\n");
  return j;
}

}  // namespace

KILN_API int64_t getPlanSummaryBytesNeeded(void const* blob, std::size_t size) noexcept {
  auto r = plan::planSummaryBytesNeeded(blob, size);
  if (!r) return -1;
  return static_cast<int64_t>(std::min<uint64_t>(*r, static_cast<uint64_t>(INT64_MAX)));
}

KILN_API IHostMemory* getPlanSummary(void const* blob, std::size_t size, ILogger* logger) noexcept {
  Reporter reporter(logger);
  auto s = plan::readPlanSummary(blob, size);
  if (!s) {
    reporter.fail(s.status().withContext("getPlanSummary"));
    return nullptr;
  }
  std::string const json = summaryJson(*s);
  auto buf = HostBuffer::allocate(json.size(), "plan summary", nullptr);
  if (!buf) {
    reporter.fail(buf.status().withContext("getPlanSummary"));
    return nullptr;
  }
  std::memcpy(buf->data(), json.data(), json.size());
  return new (std::nothrow) HostMemoryImpl(std::move(buf).value());
}

}  // namespace kiln
