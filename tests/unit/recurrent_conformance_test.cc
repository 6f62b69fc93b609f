// The ONNX node conformance cases of LSTM, GRU and RNN (libonnx-testdata) with their weights
// made initializers, as in an exported model: the packed CPU form (recurrent_cpu.cc) then runs
// them, at one and two threads, and must give ONNX's expected outputs; the peephole case runs
// the reference, and the profile says so. (The conformance runner feeds W, R and B as inputs,
// which leaves these nodes to the reference kernel.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kernels/cpu/panel_product.h"
#include "onnx/onnx_import.h"
#include "osprey/session.h"
#include "osprey_onnx/onnx.pb.h"

namespace osprey {
namespace {

namespace fs = std::filesystem;
const fs::path kNodeData = "/usr/share/libonnx-testdata/data/node";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs case `name`: model.onnx with the inputs named in `constant` moved to initializers (their
// values from test_data_set_0), the rest fed; checks every output against ONNX's and returns the
// node's kernel form.
std::string run_case(const std::string& name, const std::set<std::string>& constant, int threads) {
  const fs::path dir = kNodeData / name;
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(slurp(dir / "model.onnx"))) << name;
  auto* g = model.mutable_graph();
  const fs::path set = dir / "test_data_set_0";
  std::vector<std::pair<std::string, std::string>> fed;  // name, .pb bytes
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (int i = 0; i < g->input_size(); ++i) {
    const std::string in = g->input(i).name();
    const std::string bytes = slurp(set / ("input_" + std::to_string(i) + ".pb"));
    if (constant.count(in)) {
      onnx::TensorProto t;
      EXPECT_TRUE(t.ParseFromString(bytes));
      t.set_name(in);
      *g->add_initializer() = t;
    } else {
      *kept.Add() = g->input(i);
      fed.emplace_back(in, bytes);
    }
  }
  g->mutable_input()->Swap(&kept);
  SessionOptions options;
  options.threads = threads;
  auto s = Session::load_from_bytes(model.SerializeAsString(), options);
  EXPECT_TRUE(s.ok()) << name << ": " << s.status().to_string();
  if (!s.ok()) return "";
  std::vector<NamedTensor> feeds;
  for (const auto& [in, bytes] : fed) {
    auto t = onnx_import::parse_tensor(bytes, "", 0);
    EXPECT_TRUE(t.ok()) << t.status().to_string();
    feeds.emplace_back(in, *t);
  }
  RunProfile profile;
  auto outs = (*s)->run(feeds, &profile);
  EXPECT_TRUE(outs.ok()) << name << ": " << outs.status().to_string();
  if (!outs.ok()) return "";
  for (size_t o = 0; o < outs->size(); ++o) {
    auto want = onnx_import::parse_tensor(slurp(set / ("output_" + std::to_string(o) + ".pb")), "", 0);
    EXPECT_TRUE(want.ok());
    const Tensor& got = (*outs)[o].second;
    EXPECT_EQ(got.shape(), want->shape()) << name << " output " << o;
    if (got.shape() != want->shape()) continue;
    for (int64_t k = 0; k < got.numel(); ++k) {
      const float w = want->data<float>()[k];
      EXPECT_NEAR(got.data<float>()[k], w, 1e-6 + 1e-5 * std::fabs(w)) << name << " output " << o << " [" << k << "]";
    }
  }
  for (const auto& n : profile.nodes)
    if (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN") return n.kernel;
  return "";
}

TEST(RecurrentConformance, ExportedWeightsRunThePackedFormAndMatchOnnx) {
  ASSERT_TRUE(fs::exists(kNodeData)) << kNodeData << ": libonnx-testdata is not installed (scripts/setup.sh)";
  const std::set<std::string> weights = {"W", "R", "B", "P"};
  const char* cases[] = {"test_gru_batchwise",      "test_gru_defaults",          "test_gru_seq_length",
                         "test_gru_with_initial_bias", "test_lstm_batchwise",     "test_lstm_defaults",
                         "test_lstm_with_initial_bias", "test_rnn_seq_length",    "test_simple_rnn_batchwise",
                         "test_simple_rnn_defaults", "test_simple_rnn_with_initial_bias"};
  for (int threads : {1, 2}) {
    for (const char* c : cases) {
      const std::string form = run_case(c, weights, threads);
      if (cpu::panel_product_supported())
        EXPECT_EQ(form.rfind("recurrent cells (panel_product", 0), 0u) << c << ": " << form;
    }
    // Peepholes (and a sequence_lens input) stay on the reference.
    const std::string form = run_case("test_lstm_with_peepholes", weights, threads);
    if (cpu::panel_product_supported()) EXPECT_EQ(form, "reference (peepholes)");
  }
}

}  // namespace
}  // namespace osprey
