// --inspect=PLAN: a plan's header and graph-section summary, read through the Kiln extension
// getPlanSummary() from the file's leading bytes only (the weights are neither read nor loaded).
#pragma once

#include <kiln/kiln_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kilnexec {

/// Reads from `path` only the leading bytes getPlanSummary() needs (asking getPlanSummaryBytesNeeded()).
/// `fileSize` receives the file's size. False with `error` if the file cannot be read or is not a plan.
bool readPlanPrefix(std::string const& path, std::vector<uint8_t>& bytes, uint64_t& fileSize, std::string& error);

/// Turns getPlanSummary()'s JSON into the text kilnexec prints. False with `error` on malformed JSON.
bool formatPlanSummary(std::string const& json, uint64_t fileSize, uint64_t bytesRead, std::string& text,
                       std::string& error);

/// The whole of --inspect: prefix, summary, text. False with `error` (Kiln's reason included) on failure.
bool inspectPlan(std::string const& path, kiln::ILogger& logger, std::string& text, std::string& error);

}  // namespace kilnexec
