// The --report HTML page: layered layout of the engine graph as SVG, a bar chart of layer times, a layer table
// and a small script for highlighting; everything inline so the file can be mailed or archived alone.
#include "html_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace kilnexec {
namespace {

std::string esc(std::string const& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '&':
        r += "&amp;";
        break;
      case '<':
        r += "&lt;";
        break;
      case '>':
        r += "&gt;";
        break;
      case '"':
        r += "&quot;";
        break;
      case '\'':
        r += "&#39;";
        break;
      default:
        r += c;
    }
  }
  return r;
}

std::string shorten(std::string const& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "\u2026"; }

std::string fmt(double v, char const* f = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string plain(nlohmann::json const& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A stable pastel colour per layer type.
std::string colorOf(std::string const& type) {
  static char const* const kPalette[] = {"#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#ede9fe", "#cffafe",
                                         "#fee2e2", "#ecfccb", "#e0e7ff", "#f5f5f4", "#ffedd5", "#d1fae5"};
  size_t h = 0;
  for (char c : type) h = h * 131 + static_cast<unsigned char>(c);
  return kPalette[h % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

constexpr int kBoxW = 230, kBoxH = 74, kGapX = 30, kGapY = 46, kMargin = 20;

std::string graphSvg(ReportData const& d) {
  // Ranks: network inputs at 0, a layer one below its lowest-placed producer. Layers come in execution order,
  // so producers are always placed first.
  std::map<std::string, std::pair<int, int>> producer;  // tensor -> (rank, column) of its producer box
  std::vector<std::vector<std::string>> ranks(1);
  struct Box {
    int rank = 0, col = 0;
    std::string svgId;
  };
  for (auto const& in : d.networkInputs) {
    producer[in] = {0, static_cast<int>(ranks[0].size())};
    ranks[0].push_back("in:" + in);
  }
  std::vector<Box> boxes(d.layers.size());
  for (size_t i = 0; i < d.layers.size(); ++i) {
    int rank = 1;
    for (auto const& t : d.layers[i].inputs)
      if (auto it = producer.find(t); it != producer.end()) rank = std::max(rank, it->second.first + 1);
    if (static_cast<int>(ranks.size()) <= rank) ranks.resize(static_cast<size_t>(rank) + 1);
    boxes[i].rank = rank;
    boxes[i].col = static_cast<int>(ranks[static_cast<size_t>(rank)].size());
    ranks[static_cast<size_t>(rank)].push_back(d.layers[i].name);
    for (auto const& t : d.layers[i].outputs) producer[t] = {rank, boxes[i].col};
  }
  size_t widest = 1;
  for (auto const& r : ranks) widest = std::max(widest, r.size());
  int const width = kMargin * 2 + static_cast<int>(widest) * (kBoxW + kGapX) - kGapX;
  int const height = kMargin * 2 + static_cast<int>(ranks.size()) * (kBoxH + kGapY) - kGapY + 30;
  // Centre each rank horizontally.
  auto xOf = [&](int rank, int col) {
    int const n = static_cast<int>(ranks[static_cast<size_t>(rank)].size());
    int const rowW = n * (kBoxW + kGapX) - kGapX;
    return (width - rowW) / 2 + col * (kBoxW + kGapX);
  };
  auto yOf = [&](int rank) { return kMargin + rank * (kBoxH + kGapY); };

  std::string s = "<svg id=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
                  std::to_string(height) + "\" role=\"img\" aria-label=\"engine graph\">\n";
  s += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
       "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#64748b\"/></marker></defs>\n";
  // Edges first, so boxes cover their ends.
  std::map<std::string, std::string> shapeOf;
  for (auto const& l : d.layers)
    for (size_t o = 0; o < l.outputs.size(); ++o)
      if (o < l.outputShapes.size()) shapeOf[l.outputs[o]] = l.outputShapes[o];
  for (size_t i = 0; i < d.layers.size(); ++i)
    for (auto const& t : d.layers[i].inputs) {
      auto it = producer.find(t);
      if (it == producer.end()) continue;
      int const x1 = xOf(it->second.first, it->second.second) + kBoxW / 2, y1 = yOf(it->second.first) + kBoxH;
      int const x2 = xOf(boxes[i].rank, boxes[i].col) + kBoxW / 2, y2 = yOf(boxes[i].rank);
      int const my = (y1 + y2) / 2;
      s += "<path class=\"edge\" d=\"M" + std::to_string(x1) + "," + std::to_string(y1) + " C" + std::to_string(x1) +
           "," + std::to_string(my) + " " + std::to_string(x2) + "," + std::to_string(my) + " " + std::to_string(x2) +
           "," + std::to_string(y2 - 2) +
           "\" fill=\"none\" stroke=\"#94a3b8\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\">" + "<title>" + esc(t) +
           (shapeOf.count(t) ? " " + esc(shapeOf[t]) : "") + "</title></path>\n";
    }
  for (size_t c = 0; c < d.networkInputs.size(); ++c) {
    int const x = xOf(0, static_cast<int>(c)), y = yOf(0);
    s += "<g class=\"netinput\"><rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y + 20) + "\" width=\"" +
         std::to_string(kBoxW) + "\" height=\"" + std::to_string(kBoxH - 20) +
         "\" rx=\"22\" fill=\"#f1f5f9\" stroke=\"#475569\"/><text x=\"" + std::to_string(x + kBoxW / 2) + "\" y=\"" +
         std::to_string(y + 52) + "\" text-anchor=\"middle\" class=\"t1\">input " +
         esc(shorten(d.networkInputs[c], 26)) + "</text></g>\n";
  }
  for (size_t i = 0; i < d.layers.size(); ++i) {
    ReportLayer const& l = d.layers[i];
    int const x = xOf(boxes[i].rank, boxes[i].col), y = yOf(boxes[i].rank);
    bool const isOutput = std::any_of(l.outputs.begin(), l.outputs.end(), [&](std::string const& t) {
      return std::find(d.networkOutputs.begin(), d.networkOutputs.end(), t) != d.networkOutputs.end();
    });
    std::string title = l.name + "\ntype: " + l.type + "\nprecision: " + l.precision + "\ntactic: " + l.tactic;
    for (size_t o = 0; o < l.outputs.size(); ++o)
      title += "\noutput " + l.outputs[o] + (o < l.outputShapes.size() ? " " + l.outputShapes[o] : "");
    if (!l.fused.empty()) {
      title += "\nfused:";
      for (auto const& f : l.fused) title += " " + f;
    }
    if (l.timeMs >= 0) title += "\ntime: " + fmt(l.timeMs) + " ms (" + fmt(l.percent, "%.1f") + " %)";
    std::string shapes;
    for (auto const& sh : l.outputShapes) shapes += (shapes.empty() ? "" : ", ") + sh;
    std::string line2 = l.type + (l.precision.empty() ? "" : " \u00b7 " + l.precision);
    std::string line3 = l.tactic.empty() ? "" : l.tactic;
    std::string line4 = shapes + (l.fused.size() > 1 ? "  \u2022 fused " + std::to_string(l.fused.size()) : "");
    s += "<g class=\"layer\" data-name=\"" + esc(l.name) + "\" data-index=\"" + std::to_string(i) + "\"><title>" +
         esc(title) + "</title>";
    s += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(kBoxW) +
         "\" height=\"" + std::to_string(kBoxH) + "\" rx=\"6\" fill=\"" + colorOf(l.type) + "\" stroke=\"" +
         (isOutput ? "#b91c1c" : "#334155") + "\" stroke-width=\"" + (l.fused.size() > 1 ? "2.5" : "1") + "\"/>";
    int ty = y + 17;
    s += "<text x=\"" + std::to_string(x + 8) + "\" y=\"" + std::to_string(ty) + "\" class=\"t1\">" +
         esc(shorten(l.name, 30)) + "</text>";
    for (auto const& line : {line2, line3, line4}) {
      ty += 16;
      if (line.empty()) continue;
      s += "<text x=\"" + std::to_string(x + 8) + "\" y=\"" + std::to_string(ty) + "\" class=\"t2\">" +
           esc(shorten(line, 36)) + "</text>";
    }
    s += "</g>\n";
  }
  s += "</svg>\n";
  return s;
}

std::string profileSvg(ReportData const& d) {
  std::vector<ReportLayer const*> timed;
  for (auto const& l : d.layers)
    if (l.timeMs >= 0) timed.push_back(&l);
  if (timed.empty()) return "<p class=\"note\">No layer profile: run with inference (without --skipInference).</p>\n";
  std::stable_sort(timed.begin(), timed.end(), [](auto* a, auto* b) { return a->timeMs > b->timeMs; });
  double maxMs = 0;
  for (auto* l : timed) maxMs = std::max(maxMs, l->timeMs);
  int const labelW = 260, barW = 520, rowH = 20;
  int const height = static_cast<int>(timed.size()) * rowH + 10;
  std::string s = "<svg id=\"profile\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(labelW + barW + 150) + "\" height=\"" + std::to_string(height) +
                  "\" role=\"img\" aria-label=\"layer time profile\">\n";
  for (size_t i = 0; i < timed.size(); ++i) {
    ReportLayer const& l = *timed[i];
    int const y = static_cast<int>(i) * rowH + 5;
    int const w = maxMs > 0 ? std::max(1, static_cast<int>(barW * l.timeMs / maxMs)) : 1;
    s += "<g class=\"bar\" data-name=\"" + esc(l.name) + "\"><title>" + esc(l.name) + ": " + fmt(l.timeMs) + " ms (" +
         fmt(l.percent, "%.1f") + " %)</title>";
    s += "<text x=\"" + std::to_string(labelW - 6) + "\" y=\"" + std::to_string(y + 14) +
         "\" text-anchor=\"end\" class=\"t2\">" + esc(shorten(l.name, 40)) + "</text>";
    s += "<rect x=\"" + std::to_string(labelW) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" + std::to_string(w) +
         "\" height=\"" + std::to_string(rowH - 6) + "\" fill=\"" + colorOf(l.type) + "\" stroke=\"#334155\"/>";
    s += "<text x=\"" + std::to_string(labelW + w + 6) + "\" y=\"" + std::to_string(y + 14) + "\" class=\"t2\">" +
         fmt(l.timeMs) + " ms \u00b7 " + fmt(l.percent, "%.1f") + " %</text></g>\n";
  }
  s += "</svg>\n";
  return s;
}

char const* const kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #0f172a; }
h1 { font-size: 22px; margin: 0 0 12px; } h2 { font-size: 17px; margin: 28px 0 8px; }
table { border-collapse: collapse; } td, th { border: 1px solid #cbd5e1; padding: 3px 8px; text-align: left; }
th { background: #f1f5f9; } .scroll { overflow: auto; border: 1px solid #e2e8f0; padding: 6px; }
.t1 { font: 600 12px system-ui, sans-serif; fill: #0f172a; } .t2 { font: 11px system-ui, sans-serif; fill: #334155; }
g.layer, g.bar { cursor: pointer; } g.selected rect { stroke: #dc2626 !important; stroke-width: 3 !important; }
tr.selected td { background: #fee2e2; } .note { color: #475569; }
)";

char const* const kScript = R"(
(function () {
  var body = document.body;
  var layers = document.querySelectorAll('#graph g.layer');
  body.setAttribute('data-layer-count', String(layers.length));
  document.getElementById('layer-count').textContent = String(layers.length);
  function select(name) {
    var all = document.querySelectorAll('g.layer, g.bar, tr.row');
    for (var i = 0; i < all.length; ++i) {
      all[i].classList.toggle('selected', all[i].getAttribute('data-name') === name);
    }
    var row = document.querySelector('tr.row.selected');
    document.getElementById('selection').textContent = name ? 'Selected: ' + name : '';
    if (row && row.scrollIntoView) row.scrollIntoView({block: 'nearest'});
  }
  var clickable = document.querySelectorAll('g.layer, g.bar, tr.row');
  for (var i = 0; i < clickable.length; ++i) {
    clickable[i].addEventListener('click', function (e) { select(e.currentTarget.getAttribute('data-name')); });
  }
  body.setAttribute('data-rendered', 'ok');
})();
)";

}  // namespace

bool layersFromInspector(std::string const& engineJson, std::vector<ReportLayer>& layers, std::string& error) {
  nlohmann::json j = nlohmann::json::parse(engineJson, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("Layers") || !j["Layers"].is_array()) {
    error = "the engine information is not the inspector's JSON";
    return false;
  }
  layers.clear();
  for (auto const& l : j["Layers"]) {
    ReportLayer r;
    if (l.is_string()) {
      r.name = l.get<std::string>();
      layers.push_back(std::move(r));
      continue;
    }
    if (!l.is_object()) continue;
    r.name = plain(l.value("Name", nlohmann::json("")));
    r.type = plain(l.value("LayerType", nlohmann::json("")));
    r.precision = plain(l.value("Precision", nlohmann::json("")));
    r.tactic = plain(l.value("TacticName", nlohmann::json("")));
    for (auto const& t : l.value("Inputs", nlohmann::json::array()))
      r.inputs.push_back(plain(t.value("Name", nlohmann::json(""))));
    for (auto const& t : l.value("Outputs", nlohmann::json::array())) {
      r.outputs.push_back(plain(t.value("Name", nlohmann::json(""))));
      std::string shape;
      for (auto const& d : t.value("Dimensions", nlohmann::json::array()))
        shape += (shape.empty() ? "" : "x") + plain(d);
      r.outputShapes.push_back(shape.empty() ? "scalar" : shape);
    }
    for (auto const& f : l.value("FusedLayers", nlohmann::json::array())) r.fused.push_back(plain(f));
    layers.push_back(std::move(r));
  }
  return true;
}

void attachProfile(std::vector<ReportLayer>& layers, std::vector<LayerTime> const& times) {
  for (auto& l : layers)
    for (auto const& t : times)
      if (t.name == l.name) {
        l.timeMs = t.averageMs;
        l.percent = t.percent;
      }
}

std::string renderHtmlReport(ReportData const& d) {
  size_t fusedLayers = 0;
  for (auto const& l : d.layers) fusedLayers += l.fused.size() > 1 ? 1 : 0;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + esc(d.title) +
                  "</title>\n<style>" + kStyle + "</style>\n";
  // First script: record errors of the page's own script, so a test (or a reader) can see them.
  h += "<script>window.addEventListener('error', function (e) { document.documentElement.setAttribute("
       "'data-script-error', String(e.message)); });</script>\n</head>\n<body>\n";
  h += "<h1>" + esc(d.title) + "</h1>\n<table class=\"facts\">\n";
  for (auto const& [k, v] : d.facts) h += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n";
  h += "<tr><th>Layers</th><td><span id=\"layer-count\">" + std::to_string(d.layers.size()) + "</span> (" +
       std::to_string(fusedLayers) + " with fusions)</td></tr>\n</table>\n";
  h += "<h2>Optimized graph</h2>\n<p class=\"note\">One box per engine layer: name, type \u00b7 precision, tactic, "
       "output shapes. Thick borders mark fused layers, red borders network outputs; hover for details, click to "
       "highlight. <span id=\"selection\"></span></p>\n<div class=\"scroll\">\n" +
       graphSvg(d) + "</div>\n";
  h += "<h2>Layer time profile</h2>\n<div class=\"scroll\">\n" + profileSvg(d) + "</div>\n";
  h += "<h2>Layers</h2>\n<table "
       "id=\"layers\">\n<tr><th>#</th><th>Name</th><th>Type</th><th>Precision</th><th>Tactic</th>"
       "<th>Output shapes</th><th>Fused from</th><th>Avg. ms</th><th>%</th></tr>\n";
  for (size_t i = 0; i < d.layers.size(); ++i) {
    ReportLayer const& l = d.layers[i];
    std::string shapes, fused;
    for (auto const& s : l.outputShapes) shapes += (shapes.empty() ? "" : ", ") + s;
    for (auto const& f : l.fused) fused += (fused.empty() ? "" : ", ") + f;
    h += "<tr class=\"row\" data-name=\"" + esc(l.name) + "\"><td>" + std::to_string(i) + "</td><td>" + esc(l.name) +
         "</td><td>" + esc(l.type) + "</td><td>" + esc(l.precision) + "</td><td>" + esc(l.tactic) + "</td><td>" +
         esc(shapes) + "</td><td>" + esc(fused) + "</td><td>" + (l.timeMs >= 0 ? fmt(l.timeMs) : "") + "</td><td>" +
         (l.timeMs >= 0 ? fmt(l.percent, "%.1f") : "") + "</td></tr>\n";
  }
  h += "</table>\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace kilnexec
