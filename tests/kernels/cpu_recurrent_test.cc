// LSTM, GRU and RNN on the packed form (recurrent_cpu.cc) against the reference kernels, the
// oracle: every cell (GRU with and without linear_before_reset), the three directions, both
// layouts, batch 1 and 3, hidden sizes with and without a vector tail, with and without B and
// initial states, clip, one and two threads, the hidden units in one slice or split in two; the
// forms the packed kernel leaves to the reference (and says so); the cells' tanh and sigmoid at the edges of their range.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_harness.h"
#include "kernels/cpu/panel_product.h"

namespace osprey::testing {
namespace {

struct Case {
  const char* op;
  int64_t seq, batch, in, hidden;
  const char* direction;
  int64_t layout;
  bool bias, initial, lbr;
  float clip;  // 0: none
};

int64_t gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

// The node's inputs: X, W, R, B, sequence_lens (absent), initial_h, initial_c (LSTM).
std::vector<Tensor> inputs_of(const Case& c, uint32_t seed) {
  const int64_t dirs = std::string(c.direction) == "bidirectional" ? 2 : 1, G = gates(c.op);
  const Shape x = c.layout ? Shape{c.batch, c.seq, c.in} : Shape{c.seq, c.batch, c.in};
  const Shape state = c.layout ? Shape{c.batch, dirs, c.hidden} : Shape{dirs, c.batch, c.hidden};
  std::vector<Tensor> in = {random_tensor(x, seed), random_tensor({dirs, G * c.hidden, c.in}, seed + 1),
                            random_tensor({dirs, G * c.hidden, c.hidden}, seed + 2),
                            c.bias ? random_tensor({dirs, 2 * G * c.hidden}, seed + 3) : Tensor(), Tensor()};
  for (int64_t i = 0; i < in[0].numel(); ++i) in[0].data<float>()[i] *= 3.0f;  // saturating gates too
  // R scaled as a trained layer's (about 1 / sqrt(hidden)): with entries up to 1, a layer of 100
  // units amplifies the rounding of one step into the next (5e-5 apart after 8 steps).
  const float r_scale = 2.0f / std::sqrt(static_cast<float>(c.hidden));
  for (int64_t i = 0; i < in[2].numel(); ++i) in[2].data<float>()[i] *= r_scale;
  if (c.initial) {
    in.push_back(random_tensor(state, seed + 4));
    if (std::string(c.op) == "LSTM") in.push_back(random_tensor(state, seed + 5));
  }
  return in;
}

Attrs attrs_of(const Case& c) {
  Attrs a = {{"hidden_size", int_attr(c.hidden)}, {"direction", string_attr(c.direction)}};
  if (c.layout) a["layout"] = int_attr(c.layout);
  if (c.lbr) a["linear_before_reset"] = int_attr(1);
  if (c.clip > 0) a["clip"] = float_attr(c.clip);
  return a;
}

// The constants the prepare step sees: W, R and B.
std::vector<Tensor> constants_of(const std::vector<Tensor>& in) { return {Tensor(), in[1], in[2], in[3]}; }

// `prepared_with`: the pool the prepare step sees (two threads split a one-direction layer of
// 64 or more hidden units into slices); `pool`: the run's.
void expect_matches_reference(const Case& c, ThreadPool* prepared_with, ThreadPool* pool) {
  const std::vector<Tensor> in = inputs_of(c, 11);
  const int outs = std::string(c.op) == "LSTM" ? 3 : 2;
  const Attrs attrs = attrs_of(c);
  NodeRunner ref(c.op, "", 14, attrs, Device::ref);
  NodeRunner fast(c.op, "", 14, attrs, Device::cpu, constants_of(in), DType::kFloat32, prepared_with);
  ASSERT_TRUE(fast.found());
  ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
  const bool sliced = prepared_with && c.hidden >= 64 && std::string(c.direction) != "bidirectional";
  if (cpu::panel_product_supported())
    EXPECT_EQ(fast.state()->form(), sliced ? "recurrent cells (panel_product, 2 slices of hidden units)"
                                           : "recurrent cells (panel_product)");
  auto want = ref.run_outputs(in, outs);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  auto got = fast.run_outputs(in, outs, pool);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  for (int i = 0; i < outs; ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expect_close((*got)[static_cast<size_t>(i)], (*want)[static_cast<size_t>(i)], 2e-6);
  }
}

TEST(CpuRecurrent, MatchesReferenceAcrossCellsDirectionsAndLayouts) {
  ThreadPool pool2(2);
  const float none = 0;
  const std::vector<Case> cases = {
      {"LSTM", 7, 1, 10, 16, "forward", 0, true, false, false, none},
      {"LSTM", 5, 3, 9, 21, "reverse", 0, true, true, false, none},
      {"LSTM", 6, 3, 17, 37, "bidirectional", 1, false, true, false, none},
      {"LSTM", 4, 2, 8, 5, "bidirectional", 0, true, true, false, 0.7f},
      {"LSTM", 1, 1, 64, 128, "forward", 0, true, false, false, none},
      {"GRU", 7, 1, 10, 16, "forward", 0, true, false, false, none},
      {"GRU", 5, 3, 9, 21, "bidirectional", 1, true, true, false, none},
      {"GRU", 6, 2, 12, 19, "reverse", 0, false, true, true, none},
      {"GRU", 5, 3, 9, 33, "bidirectional", 0, true, true, true, 0.9f},
      {"RNN", 8, 2, 6, 17, "forward", 0, true, true, false, none},
      {"RNN", 5, 1, 20, 48, "bidirectional", 1, false, false, false, 0.5f},
      // Two slices of hidden units with two threads at prepare: 32 + 48, 32 + 32, 48 + 52, ...
      {"LSTM", 9, 2, 24, 80, "forward", 0, true, true, false, none},
      {"LSTM", 6, 3, 16, 64, "reverse", 1, true, false, false, 2.0f},
      {"GRU", 7, 2, 20, 64, "forward", 0, true, true, true, none},
      {"GRU", 5, 1, 20, 70, "forward", 0, true, true, false, none},  // 32 + 38, two products
      {"GRU", 6, 3, 16, 96, "reverse", 1, true, false, false, 1.5f},
      {"RNN", 8, 3, 12, 100, "reverse", 0, true, true, false, none},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " seq " + std::to_string(c.seq) + " batch " + std::to_string(c.batch) +
                 " hidden " + std::to_string(c.hidden) + " " + c.direction + " layout " +
                 std::to_string(c.layout) + (c.lbr ? " lbr" : ""));
    for (ThreadPool* prepared_with : {static_cast<ThreadPool*>(nullptr), &pool2})
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
        expect_matches_reference(c, prepared_with, pool);
  }
}

// What the packed form does not cover runs on the reference, and gives its results.
TEST(CpuRecurrent, UncoveredFormsRunTheReference) {
  const Case c = {"LSTM", 5, 2, 6, 8, "forward", 0, true, true, false, 0};
  std::vector<Tensor> in = inputs_of(c, 3);
  // sequence_lens shorter than the sequence for one item: decided per run.
  in[4] = vec<int32_t>({5, 3});
  NodeRunner ref("LSTM", "", 14, attrs_of(c), Device::ref);
  NodeRunner fast("LSTM", "", 14, attrs_of(c), Device::cpu, constants_of(in));
  auto want = ref.run_outputs(in, 3);
  auto got = fast.run_outputs(in, 3);
  ASSERT_TRUE(want.ok() && got.ok());
  for (int i = 0; i < 3; ++i) expect_close((*got)[static_cast<size_t>(i)], (*want)[static_cast<size_t>(i)], 0);
  // Attributes and inputs decided at load.
  struct Uncovered {
    Attrs extra;
    bool constant_weights;
    std::string why;
  };
  const std::vector<Uncovered> forms = {
      {{{"activations", strings_attr({"Relu", "Tanh", "Tanh"})}}, true, "activation relu"},
      {{{"input_forget", int_attr(1)}}, true, "input_forget"},
      {{}, false, "weights not constant"},
  };
  for (const auto& f : forms) {
    SCOPED_TRACE(f.why);
    Attrs a = attrs_of(c);
    for (const auto& [k, v] : f.extra) a[k] = v;
    NodeRunner r2("LSTM", "", 14, a, Device::ref);
    NodeRunner f2("LSTM", "", 14, a, Device::cpu,
                  f.constant_weights ? constants_of(in) : std::vector<Tensor>{Tensor(), Tensor(), Tensor(), in[3]});
    ASSERT_TRUE(f2.prepare_status().ok());
    if (cpu::panel_product_supported()) EXPECT_EQ(f2.state()->form(), "reference (" + f.why + ")");
    auto w2 = r2.run_outputs(in, 3);
    auto g2 = f2.run_outputs(in, 3);
    ASSERT_TRUE(w2.ok() && g2.ok()) << w2.status().to_string() << g2.status().to_string();
    for (int i = 0; i < 3; ++i) expect_close((*g2)[static_cast<size_t>(i)], (*w2)[static_cast<size_t>(i)], 0);
  }
}

// Bad inputs get the reference's errors, not a crash in the packed form.
TEST(CpuRecurrent, BadInputsAreErrors) {
  const Case c = {"GRU", 4, 2, 6, 8, "forward", 0, true, false, false, 0};
  std::vector<Tensor> in = inputs_of(c, 5);
  NodeRunner fast("GRU", "", 14, attrs_of(c), Device::cpu, constants_of(in));
  in[0] = random_tensor({4, 2, 7}, 1);  // input size 7, W says 6
  auto r = fast.run_outputs(in, 2);
  ASSERT_FALSE(r.ok());
  in[0] = random_tensor({4, 2, 6}, 1);
  in.push_back(random_tensor({1, 3, 8}, 2));  // initial_h for batch 3
  r = fast.run_outputs(in, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("initial_h"), std::string::npos) << r.status().to_string();
}

// The cells' activations on every vector width: tanh (RNN's h = tanh(x + hr)) against std::tanh
// from 1e-8 to saturation, both signs, within 1e-6 relative, NaN kept; sigmoid (GRU's z, from h = z h0 with n = 0).
TEST(CpuRecurrent, CellActivationsAtTheEdges) {
  std::vector<float> x;
  for (float v = 1e-8f; v < 60.0f; v *= 1.37f) x.push_back(v), x.push_back(-v);
  x.push_back(0.0f);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  const int64_t n = static_cast<int64_t>(x.size());
  const std::vector<float> zeros(static_cast<size_t>(n), 0.0f);
  for (cpu::VectorIsa isa : {cpu::VectorIsa::generic, cpu::VectorIsa::avx2, cpu::VectorIsa::avx512}) {
    if (!cpu::vector_isa_supported(isa)) continue;
    SCOPED_TRACE(cpu::vector_isa_name(isa));
    std::vector<float> h(static_cast<size_t>(n));
    cpu::rnn_cell(isa, x.data(), zeros.data(), h.data(), n, std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i + 1 < n; ++i) {
      const double want = std::tanh(static_cast<double>(x[i]));
      EXPECT_NEAR(h[i], want, 1e-6 * std::fabs(want)) << "tanh(" << x[i] << ")";  // relative
    }
    EXPECT_TRUE(std::isnan(h[n - 1]));
    // GRU lbr with hr = 0 and no bias: n = tanh(x_h), h = (1 - z) n + z h0; x_h = 0 gives n = 0,
    // so h = z h0 = sigmoid(x_z) with h0 = 1.
    std::vector<float> xg(static_cast<size_t>(3 * n), 0.0f), hr(xg.size(), 0.0f), hz(static_cast<size_t>(n), 1.0f);
    std::copy(x.begin(), x.end(), xg.begin());
    cpu::gru_cell_lbr(isa, xg.data(), n, hr.data(), n, nullptr, hz.data(), hz.data(), n,
                      std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i + 1 < n; ++i) {
      const double want = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
      EXPECT_NEAR(hz[i], want, 1e-6 * want) << "sigmoid(" << x[i] << ")";
    }
  }
}

}  // namespace
}  // namespace osprey::testing
