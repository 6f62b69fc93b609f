// Triton's "file:" load parameters: path checks, base64, and a load from sent files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "api/load_options.h"
#include "core/osprey_backend.h"
#include "core/server_impl.h"
#include "osprey_server/model_config.pb.h"
#include "test_util.h"

namespace osprey::server {
namespace {

using testing::TempDir;

TEST(LoadFiles, PathsStayInsideTheOverrideDirectory) {
  for (const char* good : {"file:1/model.onnx", "file:labels.txt", "file:12/model.onnx.data"}) {
    ModelLoadOptions o;
    EXPECT_TRUE(add_load_file(good, "x", &o).ok()) << good;
  }
  for (const char* bad :
       {"file:", "file:../model.onnx", "file:1/../../etc/passwd", "file:/etc/passwd", "file:1/a/b",
        "file:01/model.onnx", "file:0/model.onnx", "file:1/", "file:..", "file:warmup/x",
        "file:1\\..\\x", "file:1/.."}) {
    ModelLoadOptions o;
    Status st = add_load_file(bad, "x", &o);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("the path must be"), std::string::npos) << st.message();
  }
  ModelLoadOptions twice;
  ASSERT_TRUE(add_load_file("file:1/m", "a", &twice).ok());
  EXPECT_NE(add_load_file("file:1/m", "b", &twice).message().find("twice"), std::string::npos);
  EXPECT_EQ(check_load_parameter_key("colour").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(check_load_parameter_key("file:1/model.onnx").ok());
}

TEST(LoadFiles, LimitsOnCountAndBytes) {
  ModelLoadOptions o;
  for (size_t i = 0; i < kMaxLoadFiles; ++i)
    ASSERT_TRUE(add_load_file("file:f" + std::to_string(i), "", &o).ok());
  EXPECT_EQ(add_load_file("file:one_more", "", &o).code(), StatusCode::kResourceExhausted);
  ModelLoadOptions big;
  big.file_bytes = kMaxLoadFilesBytes - 2;
  EXPECT_TRUE(add_load_file("file:a", "ab", &big).ok());
  EXPECT_EQ(add_load_file("file:b", "c", &big).code(), StatusCode::kResourceExhausted);
}

TEST(LoadFiles, Base64) {
  EXPECT_EQ(decode_base64("").value(), "");
  EXPECT_EQ(decode_base64("TWFu").value(), "Man");
  EXPECT_EQ(decode_base64("TWE=").value(), "Ma");
  EXPECT_EQ(decode_base64("TQ==").value(), "M");
  EXPECT_EQ(decode_base64("AP8A/w==").value(), std::string("\0\xff\0\xff", 4));
  for (const char* bad : {"TWF", "TW=u", "T===", "TQ==TWFu", "TW u", "TWF\n"})
    EXPECT_EQ(decode_base64(bad).status().code(), StatusCode::kInvalidArgument) << bad;
}

size_t override_dirs_of_this_process() {
  const std::string prefix = "osprey-load-" + std::to_string(::getpid()) + "-";
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

TEST(LoadFiles, ALoadFromSentFilesThenBackToTheRepository) {
  TempDir repo;
  repo.write("m/config.pbtxt", "max_batch_size: 8\n");
  repo.write("m/1/model.onnx", testing::add_mul_model());
  ServerOptions so;
  so.model_repository = repo.str();
  so.control_mode = ModelControlMode::kExplicit;
  so.startup_models = {"m"};
  so.total_threads = 1;
  auto server = ServerImpl::create(so, std::make_unique<OspreyBackend>());
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  const size_t dirs_before = override_dirs_of_this_process();

  ModelLoadOptions files_only;
  ASSERT_TRUE(add_load_file("file:3/model.onnx", testing::add_mul_model(), &files_only).ok());
  EXPECT_NE((*server)->load_model("m", files_only).message().find("\"config\""), std::string::npos);

  ModelLoadOptions no_version = files_only;
  no_version.files = {{"model.onnx", testing::add_mul_model()}};
  no_version.config = R"({"max_batch_size": 2})";
  Status st = (*server)->load_model("m", no_version);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("no version directory"), std::string::npos) << st.message();
  EXPECT_TRUE((*server)->model_ready("m", "1").value()) << "a refused load unloaded the model";

  ModelLoadOptions o = files_only;
  o.config = R"({"max_batch_size": 2})";
  st = (*server)->load_model("m", o);
  ASSERT_TRUE(st.ok()) << st.to_string();
  // The sent directory has version 3 only; the repository's version 1 is gone.
  EXPECT_TRUE((*server)->model_ready("m", "3").value());
  EXPECT_FALSE((*server)->model_ready("m", "1").value());
  inference::ModelConfig c;
  ASSERT_TRUE((*server)->model_config("m", "", &c).ok());
  EXPECT_EQ(c.max_batch_size(), 2);
  EXPECT_FALSE(std::filesystem::exists(repo.path() / "m" / "3")) << "the repository was written";
  EXPECT_EQ(override_dirs_of_this_process(), dirs_before + 1);

  ModelLoadOptions missing = o;
  EXPECT_EQ((*server)->load_model("nope", missing).code(), StatusCode::kNotFound);

  ASSERT_TRUE((*server)->load_model("m").ok());
  EXPECT_TRUE((*server)->model_ready("m", "1").value());
  EXPECT_FALSE((*server)->model_ready("m", "3").value());
  EXPECT_EQ(override_dirs_of_this_process(), dirs_before) << "the sent files were not removed";
}

}  // namespace
}  // namespace osprey::server
