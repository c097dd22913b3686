// kilnexec --inspect: plan summaries from the header and graph section only.
#include "inspect.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>

#include "engine_build.h"

namespace kilnexec {

bool readPlanPrefix(std::string const& path, std::vector<uint8_t>& bytes, uint64_t& fileSize, std::string& error) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  fileSize = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  bytes.clear();
  uint64_t want = 64;  // the fixed header; getPlanSummaryBytesNeeded() says what else
  for (int round = 0; round < 4; ++round) {
    uint64_t const target = std::min(want, fileSize);
    if (target > bytes.size()) {
      size_t const had = bytes.size();
      bytes.resize(static_cast<size_t>(target));
      if (!in.read(reinterpret_cast<char*>(bytes.data() + had), static_cast<std::streamsize>(target - had))) {
        error = "cannot read '" + path + "'";
        return false;
      }
    }
    int64_t const need = kiln::getPlanSummaryBytesNeeded(bytes.data(), bytes.size());
    if (need < 0) {
      error = "'" + path + "' is not a Kiln plan";
      return false;
    }
    if (static_cast<uint64_t>(need) <= bytes.size()) return true;
    if (static_cast<uint64_t>(need) > fileSize) {
      error = "'" + path + "' is truncated: its header says the graph section ends at byte " + std::to_string(need) +
              ", the file has " + std::to_string(fileSize);
      return false;
    }
    want = static_cast<uint64_t>(need);
  }
  error = "'" + path + "': the plan header does not settle how many bytes to read";
  return false;
}

bool formatPlanSummary(std::string const& json, uint64_t fileSize, uint64_t bytesRead, std::string& text,
                       std::string& error) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = "the plan summary is not valid JSON";
    return false;
  }
  auto str = [&](char const* key) { return j.contains(key) ? j[key].dump() : std::string("?"); };
  auto plain = [&](nlohmann::json const& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  auto joined = [&](char const* key) {
    std::string s;
    if (j.contains(key) && j[key].is_array())
      for (auto const& v : j[key]) s += (s.empty() ? "" : ", ") + plain(v);
    return s.empty() ? std::string("none") : s;
  };
  auto counts = [&](char const* key) {
    std::string s;
    if (j.contains(key) && j[key].is_object())
      for (auto const& [k, v] : j[key].items()) s += (s.empty() ? "" : ", ") + k + " " + plain(v);
    return s.empty() ? std::string("none") : s;
  };
  auto dims = [&](nlohmann::json const& v) {
    std::string s;
    for (auto const& d : v) s += (s.empty() ? "" : "x") + plain(d);
    return s.empty() ? std::string("scalar") : s;
  };
  std::string t;
  t += "[I] === Plan " + plain(j.value("name", nlohmann::json(""))) + " ===\n";
  t += "[I] Format: " + plain(j.value("format", nlohmann::json("?"))) + ", written by Kiln " +
       plain(j.value("kilnVersion", nlohmann::json("?"))) + ", target " +
       plain(j.value("target", nlohmann::json("?"))) + "\n";
  t += "[I] Builder flags (precisions): " + joined("builderFlags") + "\n";
  t += "[I] Optimization level: " + str("optimizationLevel") + ", profiling verbosity " +
       plain(j.value("profilingVerbosity", nlohmann::json("?"))) + ", tactic sources: " + joined("tacticSources") +
       "\n";
  t += "[I] Layers: " + str("layers") + " (+ " + str("constants") +
       " constants); by precision: " + counts("precisions") + "\n";
  t += "[I] Layer types: " + counts("layerTypes") + "\n";
  t += "[I] Plugins: " + joined("plugins") + "\n";
  if (j.contains("io"))
    for (auto const& io : j["io"])
      t += "[I] " + std::string(io.value("mode", "") == "input" ? "Input  " : "Output ") +
           plain(io.value("name", nlohmann::json(""))) + ": " + plain(io.value("dtype", nlohmann::json(""))) + " " +
           dims(io.value("shape", nlohmann::json::array())) + "\n";
  if (j.contains("profiles")) {
    size_t p = 0;
    for (auto const& prof : j["profiles"]) {
      for (auto const& in : prof)
        t += "[I] Profile " + std::to_string(p) + " " + plain(in.value("input", nlohmann::json(""))) + ": min " +
             dims(in.value("min", nlohmann::json::array())) + ", opt " +
             dims(in.value("opt", nlohmann::json::array())) + ", max " +
             dims(in.value("max", nlohmann::json::array())) + "\n";
      ++p;
    }
    if (p == 0) t += "[I] Profiles: none (static shapes)\n";
  }
  t += "[I] Memory: activations " + str("activationBytes") + " bytes, weights " + str("weightsBytes") + " bytes\n";
  if (j.contains("sections"))
    for (auto const& s : j["sections"])
      t += "[I] Section " + plain(s.value("kind", nlohmann::json(""))) + ": offset " +
           plain(s.value("offset", nlohmann::json(0))) + ", " + plain(s.value("size", nlohmann::json(0))) +
           " bytes, XXH3-64 " + plain(s.value("xxh3", nlohmann::json(""))) +
           (s.value("verified", false) ? " (verified)" : " (not read)") + "\n";
  t += "[I] File: " + std::to_string(fileSize) + " bytes, of which " + std::to_string(bytesRead) +
       " were read (header and graph section; the weights were not loaded)\n";
  text = std::move(t);
  return true;
}

bool inspectPlan(std::string const& path, kiln::ILogger& logger, std::string& text, std::string& error) {
  std::vector<uint8_t> bytes;
  uint64_t fileSize = 0;
  if (!readPlanPrefix(path, bytes, fileSize, error)) return false;
  std::unique_ptr<kiln::IHostMemory> summary(kiln::getPlanSummary(bytes.data(), bytes.size(), &logger));
  if (!summary) {
    auto const* tl = dynamic_cast<ToolLogger*>(&logger);
    error = "'" + path + "' is not a valid plan" + (tl ? ": " + tl->lastError() : std::string());
    return false;
  }
  std::string const json(static_cast<char const*>(summary->data()), summary->size());
  return formatPlanSummary(json, fileSize, bytes.size(), text, error);
}

}  // namespace kilnexec
