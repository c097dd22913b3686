// kiln-plugin-check's checks on one V2 dynamic plugin creator (see check.h), and the helpers the V3 checks share
// (check_internal.h).
#include "check.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "check_internal.h"
#include "device.h"
#include "plugins/builtin/common/testing.h"

namespace kiln::plugincheck {

using plugin::testing::PluginPtr;

namespace detail {

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000U) << 16U, exp = (h >> 10U) & 0x1FU, mant = h & 0x3FFU, bits;
  if (exp == 0) {
    float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  bits = exp == 31 ? (sign | 0x7F800000U | (mant << 13U)) : (sign | ((exp + 112U) << 23U) | (mant << 13U));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t floatToHalf(float f) {
  // Round to nearest even via the hardware-independent path: scale into half's range step by step.
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16U) & 0x8000U, a = x & 0x7FFFFFFFU;
  if (a >= 0x7F800000U) return static_cast<uint16_t>(sign | 0x7C00U | (a > 0x7F800000U ? 0x200U : 0U));
  if (a >= 0x477FF000U) return static_cast<uint16_t>(sign | 0x7C00U);
  if (a < 0x38800000U) {
    float v;
    std::memcpy(&v, &a, sizeof v);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(v * 16777216.0f)));
  }
  uint32_t h = (((a >> 23U) - 112U) << 10U) | ((a & 0x7FFFFFU) >> 13U), rest = a & 0x1FFFU;
  if (rest > 0x1000U || (rest == 0x1000U && (h & 1U))) ++h;
  return static_cast<uint16_t>(sign | h);
}

char const* typeName(DataType t) {
  switch (t) {
    case DataType::kFLOAT: return "fp32";
    case DataType::kHALF: return "fp16";
    case DataType::kINT8: return "int8";
    case DataType::kINT32: return "int32";
    case DataType::kBOOL: return "bool";
    case DataType::kUINT8: return "uint8";
    case DataType::kFP8: return "fp8";
    case DataType::kBF16: return "bf16";
    case DataType::kINT64: return "int64";
    case DataType::kINT4: return "int4";
    case DataType::kFP4: return "fp4";
    case DataType::kE8M0: return "e8m0";
    case DataType::kFLOAT64: return "fp64";
    case DataType::kINT16: return "int16";
    case DataType::kUINT16: return "uint16";
    case DataType::kUINT32: return "uint32";
    case DataType::kUINT64: return "uint64";
  }
  return "other";
}

std::string dimsText(Dims const& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

bool sameDims(Dims const& a, Dims const& b) {
  if (a.nbDims != b.nbDims) return false;
  for (int32_t i = 0; i < a.nbDims; ++i) {
    if (a.d[i] != b.d[i]) return false;
  }
  return true;
}

// `src` (fp32 or int32 sample data) converted to `type`; false when there is no sensible conversion.
bool convert(HostTensor const& src, DataType type, HostTensor& dst) {
  dst = HostTensor(src.desc.dims, type);
  int64_t n = src.count();
  bool fromFloat = src.desc.type == DataType::kFLOAT;
  for (int64_t i = 0; i < n; ++i) {
    float v = fromFloat ? src.as<float>()[i] : static_cast<float>(src.as<int32_t>()[i]);
    switch (type) {
      case DataType::kFLOAT: dst.as<float>()[i] = v; break;
      case DataType::kHALF: dst.as<uint16_t>()[i] = floatToHalf(v); break;
      case DataType::kINT32:
        dst.as<int32_t>()[i] = fromFloat ? static_cast<int32_t>(std::lround(v * 100.f)) : src.as<int32_t>()[i];
        break;
      case DataType::kINT8:
      case DataType::kBOOL:
      case DataType::kUINT8:
      case DataType::kFP8:
      case DataType::kBF16:
      case DataType::kINT64:
      case DataType::kINT4:
      case DataType::kFP4:
      case DataType::kE8M0:
      case DataType::kFLOAT64:
      case DataType::kINT16:
      case DataType::kUINT16:
      case DataType::kUINT32:
      case DataType::kUINT64:
        return false;
    }
  }
  return true;
}

// Value i of a tensor of a type the checker compares, as double.
double valueAt(HostTensor const& t, int64_t i) {
  switch (t.desc.type) {
    case DataType::kFLOAT: return t.as<float>()[i];
    case DataType::kHALF: return halfToFloat(t.as<uint16_t>()[i]);
    case DataType::kINT32: return t.as<int32_t>()[i];
    case DataType::kINT8: return static_cast<int8_t>(t.bytes[static_cast<size_t>(i)]);
    case DataType::kBOOL:
    case DataType::kUINT8: return static_cast<uint8_t>(t.bytes[static_cast<size_t>(i)]);
    case DataType::kINT64: return static_cast<double>(t.as<int64_t>()[i]);
    case DataType::kBF16:
    case DataType::kFP8:
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
    case DataType::kFLOAT64:
    case DataType::kINT16:
    case DataType::kUINT16:
    case DataType::kUINT32:
    case DataType::kUINT64:
      return 0.0;
  }
  return 0.0;
}

// "" when a and b agree within `tol` (relative + absolute; exact for integer types), else the first difference.
std::string compare(HostTensor const& a, HostTensor const& b, float tol) {
  if (a.bytes.size() != b.bytes.size())
    return "shapes differ: " + dimsText(a.desc.dims) + " vs " + dimsText(b.desc.dims);
  bool isFloat = a.desc.type == DataType::kFLOAT || a.desc.type == DataType::kHALF;
  double t = a.desc.type == DataType::kHALF ? std::max(tol, 1e-2f) : tol;
  for (int64_t i = 0; i < a.count(); ++i) {
    double x = valueAt(a, i), y = valueAt(b, i);
    bool same = isFloat ? (std::isnan(x) && std::isnan(y)) || std::fabs(x - y) <= t * (1.0 + std::fabs(y)) : x == y;
    if (!same) {
      std::ostringstream s;
      s << "element " << i << ": " << x << " vs " << y;
      return s.str();
    }
  }
  return "";
}

std::string comboText(std::vector<Choice> const& c, int32_t nbIn) {
  std::string s = nbIn == 0 ? "-> " : "";
  for (size_t i = 0; i < c.size(); ++i) {
    s += (i ? (static_cast<int32_t>(i) == nbIn ? " -> " : ",") : "") + std::string(typeName(c[i].type));
  }
  return s;
}

std::string runOnDevice(DeviceEnqueue const& enqueue, size_t ws, std::vector<HostTensor> const& in,
                        std::vector<HostTensor> const& like, std::vector<HostTensor>& out, bool graph) {
  std::string err;
  std::vector<void*> dIn, dOut;
  void* dWs = nullptr;
  auto cleanup = [&] {
    for (void* q : dIn) device::release(q);
    for (void* q : dOut) device::release(q);
    device::release(dWs);
  };
  std::vector<PluginTensorDesc> id, od;
  for (auto const& t : in) {
    void* d = device::alloc(t.bytes.size(), err);
    if (d) dIn.push_back(d);
    if (!d || !device::toDevice(d, t.bytes.data(), t.bytes.size(), err)) {
      cleanup();
      return ": " + err;
    }
    id.push_back(t.desc);
  }
  out = like;
  for (auto& t : out) {
    void* d = device::alloc(t.bytes.size(), err);
    if (d) dOut.push_back(d);
    if (!d || !device::fill(d, graph ? 0x5A : 0xA5, t.bytes.size(), err)) {
      cleanup();
      return ": " + err;
    }
    od.push_back(t.desc);
  }
  dWs = ws ? device::alloc(ws, err) : nullptr;
  if (ws && !dWs) {
    cleanup();
    return ": workspace: " + err;
  }
  std::vector<void const*> ip(dIn.begin(), dIn.end());
  auto launch = [&](cudaStream_t s) { return enqueue(id.data(), od.data(), ip.data(), dOut.data(), dWs, s); };
  bool good = graph ? device::runCaptured(launch, err) : device::run(launch, err);
  std::string result = good ? "" : (graph ? ": CUDA-graph capture: " : ": ") + err;
  for (size_t i = 0; good && i < out.size(); ++i) {
    good = device::toHost(out[i].bytes.data(), dOut[i], out[i].bytes.size(), err);
    if (!good) result = ": " + err;
  }
  cleanup();
  return result;
}

}  // namespace detail

namespace {

using namespace detail;  // the helpers shared with check_v3.cc

struct Runner {
  IPluginCreator& creator;
  Report& report;
  Options const& options;

  void fail(std::string const& m) {
    if (report.failures.size() < 20) report.failures.push_back(m);
  }

  // Host run into outputs pre-filled with `pattern` (so unwritten bytes show).
  bool host(IPluginV2DynamicExt& p, std::vector<HostTensor> const& in, std::vector<HostTensor>& out, char pattern,
            std::string const& what) {
    out = plugin::testing::makeOutputs(p, in);
    for (auto& t : out)  // an empty tensor's data() may be null, which memset must not get
      if (!t.bytes.empty()) std::memset(t.bytes.data(), pattern, t.bytes.size());
    int32_t s = plugin::testing::runHost(p, in, out);
    if (s != 0) fail(what + ": enqueueHost returned " + std::to_string(s));
    return s == 0;
  }

  // Device run of the V2 plugin's enqueue (plain, or graph-captured); returns outputs copied back.
  bool cuda(IPluginV2DynamicExt& p, std::vector<HostTensor> const& in, std::vector<HostTensor> const& like,
            std::vector<HostTensor>& out, bool graph, std::string const& what) {
    std::vector<PluginTensorDesc> id, od;
    for (auto const& t : in) id.push_back(t.desc);
    for (auto const& t : like) od.push_back(t.desc);
    size_t ws = p.getWorkspaceSize(id.data(), static_cast<int32_t>(id.size()), od.data(), static_cast<int32_t>(od.size()));
    auto enqueue = [&p](PluginTensorDesc const* i, PluginTensorDesc const* o, void const* const* ip, void* const* op,
                        void* w, cudaStream_t s) { return p.enqueue(i, o, ip, op, w, s); };
    std::string err = detail::runOnDevice(enqueue, ws, in, like, out, graph);
    if (!err.empty()) fail(what + err);
    return err.empty();
  }
};

}  // namespace

Report checkCreator(IPluginCreator& creator, PluginFieldCollection const* fields, Sample const& sample,
                    Options const& options) {
  Report report;
  Runner r{creator, report, options};
  PluginPtr plugin = plugin::testing::createPlugin(creator, fields, "kiln-plugin-check");
  if (!plugin) {
    r.fail("createPlugin returned no IPluginV2DynamicExt for the fields given");
    return report;
  }
  IPluginV2DynamicExt& p = *plugin;
  if (std::strcmp(p.getPluginType(), creator.getPluginName()) != 0 ||
      std::strcmp(p.getPluginVersion(), creator.getPluginVersion()) != 0) {
    r.fail(std::string("the plugin calls itself ") + p.getPluginType() + " version " + p.getPluginVersion() +
           ", its creator " + creator.getPluginName() + " version " + creator.getPluginVersion());
  }
  if (!dynamic_cast<IPluginHostExecution*>(&p)) {
    r.fail("the plugin has no host execution (IPluginHostExecution): it cannot run on the cpu backend");
    return report;
  }
  if (p.initialize() != 0) {
    r.fail("initialize() failed");
    return report;
  }
  std::string why;
  bool cudaUsable = options.cuda && device::available(why);
  if (options.cuda && !cudaUsable) r.fail("--backend=cuda: " + why);

  std::mt19937 rng(options.seed);
  std::set<std::string> combosSeen;
  for (int32_t trial = 0; trial < options.shapes && report.failures.empty(); ++trial) {
    std::vector<HostTensor> sampleIn = sample.inputs(rng);
    std::vector<Dims> shapes;
    for (auto const& t : sampleIn) shapes.push_back(t.desc.dims);
    std::string shapeText;
    for (auto const& d : shapes) shapeText += (shapeText.empty() ? "" : " ") + dimsText(d);
    std::string at = "inputs " + shapeText;

    // Symbolic vs actual output shapes.
    std::vector<Dims> actual = plugin::testing::outputShapes(p, shapes);
    std::vector<Dims> symbolic = plugin::testing::symbolicOutputShapes(p, shapes);
    for (size_t i = 0; i < actual.size(); ++i) {
      bool valid = actual[i].nbDims >= 0;
      for (int32_t k = 0; valid && k < actual[i].nbDims; ++k) valid = actual[i].d[k] >= 0;
      if (!valid) r.fail(at + ": output " + std::to_string(i) + " has no valid shape (" + dimsText(actual[i]) + ")");
      if (!sameDims(actual[i], symbolic[i])) {
        r.fail(at + ": output " + std::to_string(i) + " is " + dimsText(actual[i]) + " from constant dims but " +
               dimsText(symbolic[i]) + " from symbolic dims");
      }
    }
    if (!report.failures.empty()) break;

    // Format combinations.
    int32_t nbIn = static_cast<int32_t>(sampleIn.size()), nbOut = p.getNbOutputs();
    std::vector<PluginTensorDesc> descs;
    for (auto const& t : sampleIn) descs.push_back(t.desc);
    for (auto const& d : actual) {
      PluginTensorDesc o{};
      o.dims = d;
      o.scale = -1.f;
      descs.push_back(o);
    }
    std::vector<std::vector<Choice>> combos =
        formatCombinations(nbIn + nbOut, [&](int32_t pos, DataType t, TensorFormat f) {
          descs[static_cast<size_t>(pos)].type = t;
          descs[static_cast<size_t>(pos)].format = f;
          return p.supportsFormatCombination(pos, descs.data(), nbIn, nbOut);
        });
    if (combos.empty()) {
      r.fail(at + ": supportsFormatCombination accepts no combination");
      break;
    }
    std::vector<HostTensor> reference;  // outputs of the first combination, for the notes
    for (auto const& combo : combos) {
      std::string ct = comboText(combo, nbIn);
      bool linear = true;
      for (auto const& c : combo) linear = linear && c.format == TensorFormat::kLINEAR;
      if (!linear) {
        if (trial == 0) report.notes.push_back("accepted non-linear formats " + ct + " (not exercised)");
        continue;
      }
      std::vector<DataType> inTypes;
      for (int32_t i = 0; i < nbIn; ++i) inTypes.push_back(combo[i].type);
      bool typesAgree = true;
      for (int32_t o = 0; o < nbOut; ++o) {
        typesAgree = typesAgree && p.getOutputDataType(o, inTypes.data(), nbIn) == combo[nbIn + o].type;
      }
      if (!typesAgree) {
        r.fail(at + ": combination " + ct + " is accepted but getOutputDataType gives other output types");
        continue;
      }
      std::vector<HostTensor> in(sampleIn.size());
      bool convertible = true;
      for (int32_t i = 0; i < nbIn; ++i) convertible = convertible && convert(sampleIn[i], combo[i].type, in[i]);
      if (!convertible) {
        if (trial == 0) report.notes.push_back("combination " + ct + " needs input types the checker cannot make");
        continue;
      }
      combosSeen.insert(ct);
      std::string what = at + " [" + ct + "]";
      std::vector<HostTensor> a, b;
      if (!r.host(p, in, a, 0x11, what) || !r.host(p, in, b, 0x77, what)) break;
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].bytes != b[i].bytes) r.fail(what + ": two runs differ in output " + std::to_string(i) +
                                             " (a nondeterministic result or bytes left unwritten)");
      }
      // Round trips: the deserialized plugin and the clone compute the same bytes.
      PluginPtr d = plugin::testing::reserialize(creator, p);
      PluginPtr c = plugin::testing::clonePlugin(p);
      if (!d) r.fail(what + ": deserializePlugin of the serialized plugin failed");
      if (!c) r.fail(what + ": clone() failed");
      for (auto* q : {d.get(), c.get()}) {
        if (!q) continue;
        char const* which = q == d.get() ? "deserialized" : "cloned";
        if (plugin::testing::serialized(*q) != plugin::testing::serialized(p)) {
          r.fail(what + ": the " + std::string(which) + " plugin serializes to different bytes");
        }
        std::vector<HostTensor> e;
        if (q->initialize() != 0) {
          r.fail(what + ": the " + std::string(which) + " plugin's initialize() failed");
          continue;
        }
        if (r.host(*q, in, e, 0x33, what + " (" + which + ")")) {
          for (size_t i = 0; i < e.size(); ++i) {
            if (e[i].bytes != a[i].bytes) r.fail(what + ": the " + std::string(which) + " plugin computes other output " +
                                                 std::to_string(i));
          }
        }
        q->terminate();
      }
      // CPU vs GPU, then a CUDA-graph replay identical to the plain GPU run.
      if (cudaUsable) {
        std::vector<HostTensor> g, gg;
        if (r.cuda(p, in, a, g, false, what + " cuda")) {
          for (size_t i = 0; i < g.size(); ++i) {
            std::string diff = compare(g[i], a[i], sample.tolerance);
            if (!diff.empty()) r.fail(what + ": GPU and CPU differ in output " + std::to_string(i) + ", " + diff);
          }
          if (r.cuda(p, in, a, gg, true, what + " cuda graph")) {
            for (size_t i = 0; i < gg.size(); ++i) {
              if (gg[i].bytes != g[i].bytes) r.fail(what + ": the CUDA-graph replay differs in output " + std::to_string(i));
            }
          }
        }
      }
      if (!report.failures.empty()) break;
    }
  }
  p.terminate();
  report.combinations = static_cast<int32_t>(combosSeen.size());
  report.notes.push_back(std::to_string(options.shapes) + " random shapes, " + std::to_string(report.combinations) +
                         " format combination(s): " + [&] {
                           std::string s;
                           for (auto const& c : combosSeen) s += (s.empty() ? "" : "; ") + c;
                           return s;
                         }());
  return report;
}

}  // namespace kiln::plugincheck
