// A model over 2 GiB: its 2.1 GiB initializer lives in an external-data file next to the .onnx file (protobuf
// itself stops at 2 GiB). The data file is sparse (holes read as zeros) with marker values at both ends, so the
// test costs disk blocks for the markers only, and memory for one copy of the weights.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "parsers/onnx/onnx_test_util.h"

namespace {

namespace fs = std::filesystem;
using kiln::onnx::test::ModelBuilder;

TEST(RealModels, ExternalDataOver2GiB) {
  fs::path const dir = fs::temp_directory_path() / ("kiln_large_model_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path p;
    ~Cleanup() { fs::remove_all(p); }
  } cleanup{dir};

  int64_t const count = (int64_t{1} << 29) + 4096;  // 2 GiB + 16 KiB of fp32
  int64_t const bytes = count * 4;
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    float const head[2] = {1.5F, -2.25F};
    float const tail[2] = {3.125F, 42.0F};
    f.write(reinterpret_cast<char const*>(head), sizeof(head));
    f.seekp(bytes - static_cast<int64_t>(sizeof(tail)));
    f.write(reinterpret_cast<char const*>(tail), sizeof(tail));
    ASSERT_TRUE(f.good());
  }
  ASSERT_EQ(static_cast<int64_t>(fs::file_size(dir / "weights.bin")), bytes);

  ModelBuilder m;
  m.input("idx", {2}, ::onnx::TensorProto::INT64).output("y");
  auto* t = m.graph().add_initializer();
  t->set_name("big");
  t->set_data_type(::onnx::TensorProto::FLOAT);
  t->add_dims(count);
  t->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  m.node("Gather", {"big", "idx"}, {"y"}, "gather");
  std::string const model = m.bytes();
  ASSERT_LT(model.size(), 4096U);
  std::string const path = (dir / "big.onnx").string();
  std::ofstream(path, std::ios::binary).write(model.data(), static_cast<std::streamsize>(model.size()));

  kiln::onnx::test::TestLogger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network, logger));
  ASSERT_TRUE(parser->parseFromFile(path.c_str(), 0)) << parser->getError(0)->desc();

  // The initializer became one constant layer holding every byte of the file.
  kiln::Weights w{};
  for (int32_t i = 0; i < network->getNbLayers(); ++i) {
    if (auto* c = dynamic_cast<kiln::IConstantLayer*>(network->getLayer(i))) w = c->getWeights();
  }
  ASSERT_EQ(w.count, count);
  ASSERT_EQ(w.type, kiln::DataType::kFLOAT);
  auto const* v = static_cast<float const*>(w.values);
  EXPECT_EQ(v[0], 1.5F);
  EXPECT_EQ(v[1], -2.25F);
  EXPECT_EQ(v[count / 2], 0.0F);
  EXPECT_EQ(v[count - 2], 3.125F);
  EXPECT_EQ(v[count - 1], 42.0F);
}

}  // namespace
