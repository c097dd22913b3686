// kiln-plugin-check NAME|--all [--backend=cpu|cuda]: conformance checks of registered plugin creators (the
// built-ins of libkiln_plugins.so, and those of --dynamicPlugins libraries). See --help.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "check.h"
#include "device.h"
#include "kiln/kiln_builtin_plugins.h"
#include "kiln/kiln_plugin.h"
#include "samples.h"

namespace {

constexpr char const* kUsage = R"(usage: kiln-plugin-check NAME|--all [options]
Checks plugin creators registered with Kiln's plugin registry: the built-ins of libkiln_plugins.so (registered
with initLibKilnPlugins) and those of --dynamicPlugins libraries, V2 dynamic and V3 alike. For each: creation
from fields, symbolic vs actual output shapes over random input shapes, every accepted format combination,
serialize/deserialize (V3: fields -> createPlugin(kRUNTIME)) and clone round trips, every V3 tactic, repeated
runs identical; with --backend=cuda also CPU vs GPU agreement and CUDA-graph capture.
  NAME                   plugin name (with --version, default: every version registered under NAME)
  --all                  every registered creator (V2 dynamic and IPluginCreatorV3One)
  --version=V            plugin version
  --namespace=NS         registry namespace (default "")
  --backend=cpu|cuda     cpu (default): host execution only; cuda: also the plugin's enqueue on the GPU
  --dynamicPlugins=LIB   load a plugin library first (repeatable)
  --noBuiltins           do not register the built-in plugins
  --field=NAME=VALUE     a creator field (repeatable; replaces the built-in sample's fields): 3, 1.5, 1,2,3,
                         0.5,1.5 (arrays), s:text (string)
  --inputs=SPEC          input shapes for plugins without a built-in sample: e.g. 1-4x3x8x8,1x3:i32 (LO-HI
                         draws a random extent)
  --shapes=N             random input shapes per plugin (default 6)
  --seed=S               random seed (default 1)
  --verbose              print notes on what was exercised
  --skipWithoutDevice    with --backend=cuda and no usable device, exit 77 (ctest's skip) instead of failing
Exit status: 0 when every checked plugin passes, 1 when one fails, 2 for a usage error, 77 for
--skipWithoutDevice without a device.
)";

class StderrLogger final : public kiln::ILogger {
 public:
  void log(Severity severity, char const* msg) noexcept override {
    if (severity <= Severity::kWARNING) std::fprintf(stderr, "kiln: %s\n", msg);
  }
};

bool startsWith(std::string const& s, char const* p) { return s.rfind(p, 0) == 0; }

}  // namespace

int main(int argc, char** argv) {
  std::string name, version, ns, backend = "cpu", inputs;
  std::vector<std::string> libraries, fieldSettings;
  bool all = false, builtins = true, verbose = false, skipWithoutDevice = false;
  kiln::plugincheck::Options options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    try {
      if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        return 0;
      } else if (a == "--all") {
        all = true;
      } else if (startsWith(a, "--version=")) {
        version = a.substr(10);
      } else if (startsWith(a, "--namespace=")) {
        ns = a.substr(12);
      } else if (startsWith(a, "--backend=")) {
        backend = a.substr(10);
      } else if (startsWith(a, "--dynamicPlugins=")) {
        libraries.push_back(a.substr(17));
      } else if (a == "--noBuiltins") {
        builtins = false;
      } else if (startsWith(a, "--field=")) {
        fieldSettings.push_back(a.substr(8));
      } else if (startsWith(a, "--inputs=")) {
        inputs = a.substr(9);
      } else if (startsWith(a, "--shapes=")) {
        options.shapes = std::stoi(a.substr(9));
      } else if (startsWith(a, "--seed=")) {
        options.seed = static_cast<uint32_t>(std::stoul(a.substr(7)));
      } else if (a == "--verbose") {
        verbose = true;
      } else if (a == "--skipWithoutDevice") {
        skipWithoutDevice = true;
      } else if (!startsWith(a, "-") && name.empty()) {
        name = a;
      } else {
        std::cerr << "kiln-plugin-check: unknown argument '" << a << "'\n" << kUsage;
        return 2;
      }
    } catch (std::exception const&) {
      std::cerr << "kiln-plugin-check: bad number in '" << a << "'\n";
      return 2;
    }
  }
  if (all == !name.empty()) {
    std::cerr << "kiln-plugin-check: give one plugin NAME or --all\n" << kUsage;
    return 2;
  }
  if (backend != "cpu" && backend != "cuda") {
    std::cerr << "kiln-plugin-check: --backend must be cpu or cuda, got '" << backend << "'\n";
    return 2;
  }
  if (options.shapes < 1) {
    std::cerr << "kiln-plugin-check: --shapes must be >= 1\n";
    return 2;
  }
  options.cuda = backend == "cuda";
  std::string why;
  if (options.cuda && skipWithoutDevice && !kiln::plugincheck::device::available(why)) {
    std::cout << "SKIP --backend=cuda: " << why << "\n";
    return 77;
  }

  static StderrLogger logger;
  kiln::IPluginRegistry* registry = kiln::getPluginRegistry();
  if (builtins && !initLibKilnPlugins(&logger, "")) {
    std::cerr << "kiln-plugin-check: initLibKilnPlugins failed (see the messages above)\n";
    return 1;
  }
  for (auto const& lib : libraries) {
    if (!registry->loadLibrary(lib.c_str())) {
      std::cerr << "kiln-plugin-check: cannot load plugin library " << lib << " (see the messages above)\n";
      return 1;
    }
  }

  // V2 dynamic creators and V3 (IPluginCreatorV3One) creators, in the registry's order.
  struct Target {
    kiln::IPluginCreator* v2 = nullptr;
    kiln::IPluginCreatorV3One* v3 = nullptr;
    char const* name() const { return v2 ? v2->getPluginName() : v3->getPluginName(); }
    char const* version() const { return v2 ? v2->getPluginVersion() : v3->getPluginVersion(); }
    char const* pluginNamespace() const { return v2 ? v2->getPluginNamespace() : v3->getPluginNamespace(); }
  };
  std::vector<Target> targets;
  int32_t n = 0;
  kiln::IPluginCreatorInterface* const* creators = registry->getAllCreators(&n);
  for (int32_t i = 0; i < n; ++i) {
    Target t;
    t.v2 = dynamic_cast<kiln::IPluginCreator*>(creators[i]);
    if (!t.v2) t.v3 = dynamic_cast<kiln::IPluginCreatorV3One*>(creators[i]);
    if (!t.v2 && !t.v3) continue;
    if (ns != t.pluginNamespace()) continue;
    if (!all && (name != t.name() || (!version.empty() && version != t.version()))) continue;
    targets.push_back(t);
  }
  if (targets.empty()) {
    std::cerr << "kiln-plugin-check: no registered creator " << (all ? std::string("at all") : name)
              << (version.empty() ? "" : " version " + version) << " in namespace '" << ns << "'"
              << (builtins ? "" : " (built-ins not registered: --noBuiltins)") << "\n";
    return 1;
  }

  int failed = 0;
  for (Target const& c : targets) {
    kiln::plugincheck::Sample sample;
    std::string error;
    bool haveSample = inputs.empty() ? kiln::plugincheck::builtinSample(c.name(), c.version(), sample)
                                     : kiln::plugincheck::sampleFromSpec(inputs, sample, error);
    std::string label = std::string(c.name()) + " version " + c.version() + (c.v3 ? " (V3)" : "");
    if (!haveSample) {
      std::cout << "FAIL " << label << ": "
                << (error.empty() ? "no built-in sample inputs for this plugin; give --inputs= (and --field=)" : error)
                << "\n";
      ++failed;
      continue;
    }
    kiln::plugincheck::FieldSet fields;
    if (fieldSettings.empty()) {
      sample.fields(fields);
    } else {
      for (auto const& s : fieldSettings) {
        if (!kiln::plugincheck::addFieldSetting(s, fields, error)) {
          std::cerr << "kiln-plugin-check: " << error << "\n";
          return 2;
        }
      }
    }
    kiln::plugincheck::Report report = c.v2 ? kiln::plugincheck::checkCreator(*c.v2, fields.get(), sample, options)
                                            : kiln::plugincheck::checkCreatorV3(*c.v3, fields.get(), sample, options);
    std::cout << (report.passed() ? "PASS " : "FAIL ") << label << " [" << backend << "]";
    if (report.passed()) {
      std::cout << ": " << options.shapes << " shapes, " << report.combinations << " format combination(s)\n";
    } else {
      std::cout << "\n";
      for (auto const& f : report.failures) std::cout << "  - " << f << "\n";
      ++failed;
    }
    if (verbose) {
      for (auto const& note : report.notes) std::cout << "  note: " << note << "\n";
    }
  }
  std::cout << (targets.size() - static_cast<size_t>(failed)) << " of " << targets.size() << " passed\n";
  return failed ? 1 : 0;
}
