#include "core/repository.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "test_util.h"

namespace osprey::server {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(Repository, NamesAndVersions) {
  EXPECT_TRUE(is_valid_model_name("resnet-50_v1.2"));
  EXPECT_FALSE(is_valid_model_name(""));
  EXPECT_FALSE(is_valid_model_name("."));
  EXPECT_FALSE(is_valid_model_name(".."));
  EXPECT_FALSE(is_valid_model_name("a/b"));
  EXPECT_FALSE(is_valid_model_name("a b"));
  EXPECT_EQ(parse_version_name("12"), 12);
  EXPECT_EQ(parse_version_name("0"), -1);
  EXPECT_EQ(parse_version_name("01"), -1);
  EXPECT_EQ(parse_version_name("-1"), -1);
  EXPECT_EQ(parse_version_name("1a"), -1);
  EXPECT_EQ(parse_version_name("99999999999999999999"), -1);
}

TEST(Repository, ScansTritonLayout) {
  TempDir repo;
  repo.write("a/config.pbtxt", "max_batch_size: 2");
  repo.write("a/1/model.onnx", "x");
  repo.write("a/3/model.onnx", "y");
  repo.write("a/warmup/sample.bin", "z");  // not a version: ignored
  repo.write("b/1/custom.onnx", "x");
  repo.write("b/config.pbtxt", "default_model_filename: \"custom.onnx\"");
  repo.write("c/1/other.bin", "x");  // version without model.onnx
  repo.write("bad/config.pbtxt", "sequence_batching {}");
  repo.write("README.md", "not a model");
  auto scan = scan_repository(repo.str());
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  ASSERT_EQ(scan->models.size(), 4u);
  const auto& a = scan->models[0];
  EXPECT_EQ(a.name, "a");
  ASSERT_TRUE(a.config_status.ok());
  EXPECT_EQ(a.config.max_batch_size(), 2);
  ASSERT_EQ(a.versions.size(), 2u);
  EXPECT_EQ(a.versions[0].version, 1);
  EXPECT_EQ(a.versions[1].version, 3);
  EXPECT_TRUE(a.versions[1].status.ok());
  EXPECT_NE(a.versions[0].fingerprint, a.versions[1].fingerprint);
  const auto& b = scan->models[1];
  EXPECT_EQ(b.name, "b");
  ASSERT_EQ(b.versions.size(), 1u);
  EXPECT_TRUE(b.versions[0].status.ok()) << b.versions[0].status.to_string();
  EXPECT_NE(b.versions[0].model_file.find("custom.onnx"), std::string::npos);
  const auto& bad = scan->models[2];
  EXPECT_EQ(bad.name, "bad");
  EXPECT_FALSE(bad.config_status.ok());
  EXPECT_NE(bad.config_status.message().find("sequence_batching"), std::string::npos);
  const auto& c = scan->models[3];
  ASSERT_EQ(c.versions.size(), 1u);
  EXPECT_EQ(c.versions[0].status.code(), StatusCode::kNotFound);
  EXPECT_NE(c.versions[0].status.message().find("model.onnx"), std::string::npos);
}

TEST(Repository, MissingRootIsAnError) {
  auto scan = scan_repository("/nonexistent/osprey/repo");
  ASSERT_FALSE(scan.ok());
  EXPECT_EQ(scan.status().code(), StatusCode::kNotFound);
}

TEST(Repository, RefusesSymlinksOutOfTheRepository) {
  TempDir repo, outside;
  outside.write("secret/1/model.onnx", "x");
  outside.write("model.onnx", "x");
  fs::create_directory_symlink(outside.path() / "secret", repo.path() / "escaped");
  repo.write("m/1/placeholder", "");
  fs::create_symlink(outside.path() / "model.onnx", repo.path() / "m/1/model.onnx");
  auto scan = scan_repository(repo.str());
  ASSERT_TRUE(scan.ok());
  // The escaping model directory is skipped with a warning naming it.
  for (const auto& m : scan->models) EXPECT_NE(m.name, "escaped");
  bool warned = false;
  for (const auto& w : scan->warnings)
    warned = warned || (w.find("escaped") != std::string::npos &&
                        w.find("outside the model repository") != std::string::npos);
  EXPECT_TRUE(warned);
  ASSERT_EQ(scan->models.size(), 1u);
  ASSERT_EQ(scan->models[0].versions.size(), 1u);
  const Status& st = scan->models[0].versions[0].status;
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("outside the model repository"), std::string::npos) << st.message();
  auto one = scan_model(repo.str(), "../" + outside.path().filename().string());
  EXPECT_FALSE(one.ok());
}

TEST(Repository, FingerprintFollowsFiles) {
  TempDir repo;
  repo.write("m/1/model.onnx", "abc");
  auto first = scan_model(repo.str(), "m");
  ASSERT_TRUE(first.ok());
  repo.write("m/1/model.onnx", "abcd");  // size changes
  auto second = scan_model(repo.str(), "m");
  ASSERT_TRUE(second.ok());
  EXPECT_NE(first->versions[0].fingerprint, second->versions[0].fingerprint);
  repo.write("m/config.pbtxt", "max_batch_size: 1");  // the config counts for every version
  auto third = scan_model(repo.str(), "m");
  ASSERT_TRUE(third.ok());
  EXPECT_NE(second->versions[0].fingerprint, third->versions[0].fingerprint);
  auto again = scan_model(repo.str(), "m");
  EXPECT_EQ(third->versions[0].fingerprint, again->versions[0].fingerprint);
}

}  // namespace
}  // namespace osprey::server
