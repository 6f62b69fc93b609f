// BYTES (TYPE_STRING) inputs and outputs through the Server and the Osprey backend: Triton's
// raw layout (4-byte little-endian length, then the bytes) in and out, batched requests
// concatenated and split element by element, and a request whose strings the model cannot use
// failing alone, never its batch-mates.
#include <gtest/gtest.h>

#include <future>

#include "core/osprey_backend.h"
#include "core/server_impl.h"
#include "processing/bytes_elements.h"
#include "test_util.h"

namespace osprey::server {
namespace {

using testing::bytes_to_floats;
using testing::TempDir;
constexpr auto output = testing::find_output;

// TEXT: string[N,2] -> ECHO = TEXT; NUMTEXT: string[N,1] -> NUMBER = float(NUMTEXT).
std::string text_model() {
  osprey::testing::ModelBuilder m;
  m.input("TEXT", onnx::TensorProto::STRING, {-1, 2});
  m.input("NUMTEXT", onnx::TensorProto::STRING, {-1, 1});
  m.node("Identity", {"TEXT"}, {"ECHO"});
  auto& cast = m.node("Cast", {"NUMTEXT"}, {"NUMBER"});
  auto* to = cast.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  m.output("ECHO", onnx::TensorProto::STRING).output("NUMBER");
  testing::set_output_shape(m.proto(), 0, {-1, 2});
  testing::set_output_shape(m.proto(), 1, {-1, 1});
  return m.bytes();
}

// Three requests or a 2 s wait make a batch.
constexpr const char* kConfig = R"(
max_batch_size: 8
dynamic_batching { preferred_batch_size: [ 3 ] max_queue_delay_microseconds: 2000000 }
)";

std::string framed(const std::vector<std::string>& elements) {
  std::string out;
  for (const auto& e : elements) processing::append_bytes_element(e, &out);
  return out;
}

WireTensor bytes_tensor(const std::string& name, std::vector<int64_t> shape,
                        const std::vector<std::string>& elements) {
  WireTensor t;
  t.name = name;
  t.datatype = "BYTES";
  t.shape = std::move(shape);
  t.data = framed(elements);
  return t;
}

InferRequest text_request(const std::vector<std::string>& text, const std::string& number) {
  InferRequest r;
  r.model_name = "text";
  r.inputs.push_back(bytes_tensor("TEXT", {1, 2}, text));
  r.inputs.push_back(bytes_tensor("NUMTEXT", {1, 1}, {number}));
  return r;
}

struct ServerBytesTest : ::testing::Test {
  void SetUp() override {
    repo.write("text/config.pbtxt", kConfig);
    repo.write("text/1/model.onnx", text_model());
    server = testing::make_test_server(repo);
    ASSERT_NE(server, nullptr);
  }

  // Sends the requests together (one batch of three) and waits for every answer.
  std::vector<Result<InferResponse>> infer_together(std::vector<InferRequest> requests) {
    std::vector<std::future<Result<InferResponse>>> futures;
    for (auto& r : requests) {
      auto p = std::make_shared<std::promise<Result<InferResponse>>>();
      futures.push_back(p->get_future());
      server->infer_async(std::move(r), [p](Result<InferResponse> x) { p->set_value(std::move(x)); });
    }
    std::vector<Result<InferResponse>> out;
    for (auto& f : futures) out.push_back(f.get());
    return out;
  }

  TempDir repo;
  std::unique_ptr<ServerImpl> server;
};

TEST_F(ServerBytesTest, MetadataShowsBytesTensors) {
  auto md = server->model_metadata("text", "");
  ASSERT_TRUE(md.ok()) << md.status().to_string();
  ASSERT_EQ(md->inputs.size(), 2u);
  EXPECT_EQ(md->inputs[0].datatype, "BYTES");
  ASSERT_EQ(md->outputs.size(), 2u);
  EXPECT_EQ(md->outputs[0].datatype, "BYTES");
  EXPECT_EQ(md->outputs[1].datatype, "FP32");
}

TEST_F(ServerBytesTest, BatchedStringsComeBackElementByElement) {
  // Empty strings, embedded NULs, non-UTF-8 bytes and a long element all survive.
  const std::string nul("a\0b", 3);
  const std::string long_element(5000, 'x');
  std::vector<std::vector<std::string>> texts = {
      {"", nul}, {"\xff\xfe", "h\xc3\xa9llo"}, {long_element, "z"}};
  std::vector<std::string> numbers = {"1.5", "-3e2", "7"};
  std::vector<InferRequest> requests;
  for (size_t i = 0; i < texts.size(); ++i) requests.push_back(text_request(texts[i], numbers[i]));
  auto answers = infer_together(std::move(requests));
  for (size_t i = 0; i < answers.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().to_string();
    const WireTensor* echo = output(*answers[i], "ECHO");
    const WireTensor* number = output(*answers[i], "NUMBER");
    ASSERT_TRUE(echo && number);
    EXPECT_EQ(echo->datatype, "BYTES");
    EXPECT_EQ(echo->shape, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(echo->data, framed(texts[i])) << "request " << i;
    EXPECT_EQ(bytes_to_floats(number->data), (std::vector<float>{std::stof(numbers[i])}));
  }
  auto stats = server->statistics("text", "");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ((*stats)[0].execution_count, 1u) << "the three requests ran as one batch";
}

TEST_F(ServerBytesTest, ARequestTheModelCannotParseFailsAloneNotItsBatch) {
  std::vector<InferRequest> requests;
  requests.push_back(text_request({"a", "b"}, "2"));
  requests.push_back(text_request({"c", "d"}, "not a number"));
  requests.push_back(text_request({"e", "f"}, "4"));
  auto answers = infer_together(std::move(requests));
  ASSERT_TRUE(answers[0].ok()) << answers[0].status().to_string();
  ASSERT_TRUE(answers[2].ok()) << answers[2].status().to_string();
  EXPECT_EQ(bytes_to_floats(output(*answers[0], "NUMBER")->data), (std::vector<float>{2}));
  EXPECT_EQ(bytes_to_floats(output(*answers[2], "NUMBER")->data), (std::vector<float>{4}));
  EXPECT_EQ(output(*answers[2], "ECHO")->data, framed({"e", "f"}));
  ASSERT_FALSE(answers[1].ok());
  EXPECT_EQ(answers[1].status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(answers[1].status().message().find("not a number"), std::string::npos)
      << answers[1].status().message();
}

TEST_F(ServerBytesTest, BrokenFramingIsInvalidArgumentNamingTheInput) {
  auto r = text_request({"a", "b"}, "1");
  r.inputs[0].data.resize(r.inputs[0].data.size() - 1);  // last element one byte short
  auto short_answer = server->infer(r);
  ASSERT_FALSE(short_answer.ok());
  EXPECT_EQ(short_answer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(short_answer.status().message().find("input 'TEXT'"), std::string::npos)
      << short_answer.status().message();
  auto extra = text_request({"a", "b"}, "1");
  extra.inputs[1].data += "zz";  // bytes after the last element
  auto extra_answer = server->infer(extra);
  ASSERT_FALSE(extra_answer.ok());
  EXPECT_NE(extra_answer.status().message().find("input 'NUMTEXT'"), std::string::npos)
      << extra_answer.status().message();
  auto wrong_type = text_request({"a", "b"}, "1");
  wrong_type.inputs[0].datatype = "FP32";
  EXPECT_EQ(server->infer(wrong_type).status().code(), StatusCode::kInvalidArgument);
}

// kConfig with one warmup sample named `name`: TEXT zero_data, NUMTEXT `numtext_data`
// ("zero_data" or "random_data").
std::string warmup_config(const std::string& name, const std::string& numtext_data) {
  return std::string(kConfig) + "model_warmup [ { name: \"" + name + "\" batch_size: 2\n" +
         "  inputs { key: \"TEXT\" value { data_type: TYPE_STRING dims: [ 2 ] zero_data: true } }\n" +
         "  inputs { key: \"NUMTEXT\" value { data_type: TYPE_STRING dims: [ 1 ] " + numtext_data +
         ": true } }\n} ]\n";
}

TEST(ServerBytesWarmup, ZeroAndRandomBytesWarmupRunBeforeReady) {
  // zero_data is empty strings, random_data short digit strings (they parse as numbers).
  TempDir repo;
  repo.write("text/config.pbtxt", warmup_config("strings", "random_data"));
  repo.write("text/1/model.onnx", text_model());
  repo.write("bad/config.pbtxt", warmup_config("empty numbers", "zero_data"));
  repo.write("bad/1/model.onnx", text_model());
  auto server = testing::make_test_server(repo);
  ASSERT_NE(server, nullptr);
  auto text_ready = server->model_ready("text", "");
  EXPECT_TRUE(text_ready.ok() && *text_ready) << text_ready.status().to_string();
  // An empty string is not a number: the warmup fails and says why; the model is not ready.
  auto bad_ready = server->model_ready("bad", "");
  EXPECT_FALSE(bad_ready.ok() && *bad_ready);
  bool reported = false;
  for (const auto& entry : server->repository_index(false))
    if (entry.name == "bad") reported = entry.reason.find("empty numbers") != std::string::npos;
  EXPECT_TRUE(reported) << "the index names the failed warmup";
}

}  // namespace
}  // namespace osprey::server
