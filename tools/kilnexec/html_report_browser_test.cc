// The --report page in headless Chromium (Debian package chromium): it renders, its script runs to the end
// and counts the engine's layers, and the browser logs no console message (so no script error). A page with a
// deliberate error checks that the checker itself can fail. Set KILN_SKIP_BROWSER_TESTS=1 to skip without
// Chromium.
#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "engine_build.h"
#include "html_report.h"
#include "inference.h"
#include "report.h"
#include "tensor_io.h"

namespace kilnexec {
namespace {

std::string findChromium() {
  char const* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  std::vector<std::string> dirList;
  while (std::getline(dirs, dir, ':')) dirList.push_back(dir);
  for (char const* name : {"chromium", "chromium-browser", "google-chrome"})
    for (auto const& d : dirList) {
      std::string const candidate = d + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  return "";
}

std::string slurp(std::filesystem::path const& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct PageResult {
  int exitCode = -1;
  std::string dom;                        // the DOM after scripts ran (--dump-dom)
  std::vector<std::string> consoleLines;  // Chromium's log lines for console messages
};

// Opens `html` in headless Chromium; console messages are read from Chromium's log on stderr.
PageResult openInChromium(std::string const& chromium, std::filesystem::path const& dir, std::string const& html) {
  std::filesystem::path const page = dir / "page.html", dom = dir / "dom.html", log = dir / "chromium.log";
  std::string error;
  EXPECT_TRUE(writeFile(page.string(), html.data(), html.size(), error)) << error;
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start; the page is our own file.
  // --disable-dev-shm-usage: a container's /dev/shm is often 64 MB, which Chromium can outgrow and crash.
  std::string const cmd = "timeout 120 '" + chromium +
                          "' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
                          "--disable-extensions --user-data-dir='" +
                          (dir / "profile").string() +
                          "' --enable-logging=stderr --v=0 --virtual-time-budget=2000 --dump-dom 'file://" +
                          page.string() + "' > '" + dom.string() + "' 2> '" + log.string() + "'";
  PageResult r;
  int const status = std::system(cmd.c_str());
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.dom = slurp(dom);
  std::istringstream lines(slurp(log));
  std::string line;
  while (std::getline(lines, line))
    if (line.find(":CONSOLE") != std::string::npos) r.consoleLines.push_back(line);
  return r;
}

std::string attribute(std::string const& dom, std::string const& name) {
  std::string const key = name + "=\"";
  auto p = dom.find(key);
  if (p == std::string::npos) return "";
  auto e = dom.find('"', p + key.size());
  return dom.substr(p + key.size(), e - p - key.size());
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("KILN_SKIP_BROWSER_TESTS")) GTEST_SKIP() << "KILN_SKIP_BROWSER_TESTS is set";
    chromium_ = findChromium();
    ASSERT_FALSE(chromium_.empty()) << "headless Chromium is needed (Debian package chromium; scripts/deps "
                                       "installs it), or set KILN_SKIP_BROWSER_TESTS=1";
    dir_ = std::filesystem::temp_directory_path() / ("kilnexec_browser_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string chromium_;
  std::filesystem::path dir_;
};

TEST_F(Browser, EngineReportRendersWithTheRightLayerCountAndNoScriptError) {
  // A real engine: the built-in network, detailed layer information, a few profiled runs.
  ToolLogger logger(false);
  Options o;
  o.report = (dir_ / "unused.html").string();  // asks for detailed layer information
  o.iterations = 2;
  o.durationS = 0;
  o.warmUpMs = 0;
  NetworkSource source;
  std::string error;
  ASSERT_TRUE(createNetwork(o, logger, source, error)) << error;
  std::vector<uint8_t> plan;
  std::vector<std::string> notes;
  ASSERT_TRUE(buildPlan(o, BuildRequest{}, source, logger, plan, notes, error)) << error;
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
  ASSERT_NE(engine, nullptr);
  std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
  ReportData data;
  data.title = "Kiln engine report: " + std::string(engine->getName());
  ASSERT_TRUE(
      layersFromInspector(inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON), data.layers, error))
      << error;
  std::vector<Tensor> inputs;
  ASSERT_TRUE(prepareInputs(*engine, o, inputs, error)) << error;
  Runner runner;
  ASSERT_TRUE(runner.setup(*engine, inputs, error)) << error;
  BenchmarkResult bench;
  ASSERT_TRUE(benchmark(runner, o, true, bench, error, [](std::string const&) {})) << error;
  attachProfile(data.layers, layerTimes(bench.profiler));
  data.networkInputs = {"input"};
  data.networkOutputs = {"logits", "probs"};

  PageResult page = openInChromium(chromium_, dir_, renderHtmlReport(data));
  ASSERT_EQ(page.exitCode, 0) << page.dom;
  EXPECT_EQ(attribute(page.dom, "data-rendered"), "ok") << "the page's script did not run to its end";
  EXPECT_EQ(attribute(page.dom, "data-layer-count"), std::to_string(engine->getNbLayers()));
  EXPECT_EQ(attribute(page.dom, "data-script-error"), "");
  EXPECT_NE(page.dom.find("<svg id=\"graph\""), std::string::npos);
  EXPECT_NE(page.dom.find("<svg id=\"profile\""), std::string::npos);
  EXPECT_NE(page.dom.find("<span id=\"layer-count\">" + std::to_string(engine->getNbLayers()) + "</span>"),
            std::string::npos);
  for (auto const& line : page.consoleLines) ADD_FAILURE() << "console message: " << line;
}

TEST_F(Browser, TheCheckerSeesAScriptError) {
  std::string const html =
      "<!DOCTYPE html><html><head><script>window.addEventListener('error', function (e) { "
      "document.documentElement.setAttribute('data-script-error', String(e.message)); });</script></head>"
      "<body><script>notAFunction(); document.body.setAttribute('data-rendered', 'ok');</script></body></html>";
  PageResult page = openInChromium(chromium_, dir_, html);
  ASSERT_EQ(page.exitCode, 0);
  EXPECT_EQ(attribute(page.dom, "data-rendered"), "");
  EXPECT_NE(attribute(page.dom, "data-script-error").find("notAFunction"), std::string::npos) << page.dom;
  ASSERT_FALSE(page.consoleLines.empty());
  EXPECT_NE(page.consoleLines[0].find("Uncaught ReferenceError"), std::string::npos) << page.consoleLines[0];
}

}  // namespace
}  // namespace kilnexec
