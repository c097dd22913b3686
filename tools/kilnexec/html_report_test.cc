// Tests of the HTML report's content (the browser test opens it in Chromium): layers read from inspector JSON,
// one SVG box per layer, one bar per profiled layer, escaping, and nothing loaded from elsewhere.
#include "html_report.h"

#include <gtest/gtest.h>

namespace kilnexec {
namespace {

// Shaped like IEngineInspector::getEngineInformation(kJSON) at kDETAILED.
char const* const kEngineJson = R"({"Layers": [
{"Name": "conv1 + relu1", "LayerType": "Convolution", "Inputs": [{"Name": "input", "Location": "Device", "Dimensions": [1,3,8,8], "Format/Datatype": "Row major linear float32"}], "Outputs": [{"Name": "c1", "Location": "Device", "Dimensions": [1,4,8,8], "Format/Datatype": "Row major linear float32"}], "ParameterType": "Convolution", "Parameters": {"act_alpha": "inf"}, "TacticName": "convolution_reference_direct", "Precision": "float16", "FusedLayers": ["conv1", "relu1"]},
{"Name": "pool<&>", "LayerType": "Pooling", "Inputs": [{"Name": "c1", "Dimensions": [1,4,8,8]}], "Outputs": [{"Name": "p", "Dimensions": [1,4,4,4]}], "TacticName": "pooling_reference", "Precision": "float32", "FusedLayers": []},
{"Name": "head", "LayerType": "MatrixMultiply", "Inputs": [{"Name": "p", "Dimensions": [1,4,4,4]}, {"Name": "c1", "Dimensions": [1,4,8,8]}], "Outputs": [{"Name": "out", "Dimensions": [1,10]}], "TacticName": "matmul_reference", "Precision": "float32", "FusedLayers": []}
],
"Bindings": ["input", "out"]})";

size_t count(std::string const& s, std::string const& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(HtmlReport, ReadsInspectorJson) {
  std::vector<ReportLayer> layers;
  std::string error;
  ASSERT_TRUE(layersFromInspector(kEngineJson, layers, error)) << error;
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].name, "conv1 + relu1");
  EXPECT_EQ(layers[0].type, "Convolution");
  EXPECT_EQ(layers[0].precision, "float16");
  EXPECT_EQ(layers[0].tactic, "convolution_reference_direct");
  EXPECT_EQ(layers[0].inputs, (std::vector<std::string>{"input"}));
  EXPECT_EQ(layers[0].outputShapes, (std::vector<std::string>{"1x4x8x8"}));
  EXPECT_EQ(layers[0].fused, (std::vector<std::string>{"conv1", "relu1"}));
  EXPECT_EQ(layers[2].inputs.size(), 2u);
  // Names-only verbosity gives strings.
  ASSERT_TRUE(layersFromInspector(R"({"Layers": ["a", "b"], "Bindings": []})", layers, error));
  EXPECT_EQ(layers.size(), 2u);
  EXPECT_FALSE(layersFromInspector("{\"Layers\": [", layers, error));
}

TEST(HtmlReport, RendersGraphChartAndTable) {
  ReportData d;
  d.title = "Kiln engine report: net";
  d.facts = {{"Backend", "cpu"}};
  d.networkInputs = {"input"};
  d.networkOutputs = {"out"};
  std::string error;
  ASSERT_TRUE(layersFromInspector(kEngineJson, d.layers, error));
  attachProfile(d.layers, {{"conv1 + relu1", 3.0, 1.5, 1.5, 75.0}, {"head", 1.0, 0.5, 0.5, 25.0}});
  EXPECT_EQ(d.layers[0].timeMs, 1.5);
  EXPECT_EQ(d.layers[1].timeMs, -1);
  std::string const html = renderHtmlReport(d);
  EXPECT_EQ(count(html, "<g class=\"layer\""), 3u);
  EXPECT_EQ(count(html, "<g class=\"bar\""), 2u);
  EXPECT_EQ(count(html, "<tr class=\"row\""), 3u);
  EXPECT_EQ(count(html, "<path class=\"edge\""), 4u);  // input->conv, conv->pool, pool->head, conv->head
  EXPECT_NE(html.find("pool&lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(html.find("pool<&>"), std::string::npos);
  EXPECT_NE(html.find("convolution_reference_direct"), std::string::npos);
  EXPECT_NE(html.find("float16"), std::string::npos);
  EXPECT_NE(html.find("1x4x4x4"), std::string::npos);
  EXPECT_NE(html.find("fused 2"), std::string::npos);
  EXPECT_NE(html.find("75.0 %"), std::string::npos);
  // Self-contained: no external scripts, styles, images or fonts.
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url(http"), std::string::npos);
  EXPECT_NE(html.find("data-rendered"), std::string::npos);
}

}  // namespace
}  // namespace kilnexec
