// --report=engine.html: one self-contained HTML page (no external resources) with the optimized graph as inline
// SVG (layers, fusions, precisions, tactics, shapes) and the per-layer time profile as an SVG bar chart.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report.h"

namespace kilnexec {

/// One engine layer as the report shows it.
struct ReportLayer {
  std::string name, type, precision, tactic;
  std::vector<std::string> inputs, outputs;  ///< tensor names
  std::vector<std::string> outputShapes;     ///< "1x16x64x64", one per output
  std::vector<std::string> fused;            ///< network layers fused into this one
  double timeMs = -1;                        ///< average per run; -1 when not profiled
  double percent = 0;
};

/// What the page shows.
struct ReportData {
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;  ///< summary table rows (key, value)
  std::vector<std::string> networkInputs, networkOutputs;
  std::vector<ReportLayer> layers;
};

/// Reads IEngineInspector::getEngineInformation(kJSON) into layers. With ProfilingVerbosity other than
/// kDETAILED, layers have names only. False with `error` on malformed JSON.
bool layersFromInspector(std::string const& engineJson, std::vector<ReportLayer>& layers, std::string& error);

/// Puts each profiled layer's average time and share on the layer of the same name.
void attachProfile(std::vector<ReportLayer>& layers, std::vector<LayerTime> const& times);

/// The page. Its script sets data-layer-count (the number of layer boxes it finds in the graph) and
/// data-rendered="ok" on <body> once it has run to its end, and records script errors in data-script-error.
std::string renderHtmlReport(ReportData const& data);

}  // namespace kilnexec
