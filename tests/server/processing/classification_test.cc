// Top-K strings (Triton's format), ties, softmax, labels and the label file checks; BYTES
// element framing.
#include "processing/classification.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "processing/bytes_elements.h"

namespace osprey::server::processing {
namespace {

namespace fs = std::filesystem;

TEST(TopKTest, HighestFirstWithLabels) {
  auto out = top_k_classes({0.1f, 0.7f, 0.2f}, 2, {"cat", "dog", "bird"});
  EXPECT_EQ(out, (std::vector<std::string>{"0.700000:1:dog", "0.200000:2:bird"}));
}

TEST(TopKTest, TiesKeepTheLowerIndexFirst) {
  auto out = top_k_classes({0.5f, 0.25f, 0.5f, 0.25f, 0.5f}, 4, {});
  EXPECT_EQ(out,
            (std::vector<std::string>{"0.500000:0", "0.500000:2", "0.500000:4", "0.250000:1"}));
}

TEST(TopKTest, KOverTheClassCountGivesAllAndMissingLabelsAreLeftOut) {
  auto out = top_k_classes({1, 3, 2}, 10, {"a", ""});
  EXPECT_EQ(out, (std::vector<std::string>{"3.000000:1", "2.000000:2", "1.000000:0:a"}));
}

TEST(TopKTest, NanSortsLast) {
  auto out = top_k_classes({std::nanf(""), -1, 2}, 3, {});
  EXPECT_EQ(out[0], "2.000000:2");
  EXPECT_EQ(out[1], "-1.000000:1");
}

TEST(SoftmaxTest, SumsToOneAndIsStableForLargeLogits) {
  // exp(1000) overflows a float: only a max-subtracting softmax gets 1 / (1 + e), e / (1 + e).
  std::vector<float> s = {1000, 1001};
  softmax(&s);
  const double e = std::exp(1.0);
  EXPECT_NEAR(s[0], 1 / (1 + e), 1e-6);
  EXPECT_NEAR(s[1], e / (1 + e), 1e-6);
}

struct LabelDir : ::testing::Test {
  void SetUp() override {
    root = fs::temp_directory_path() / ("osprey_labels_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "model");
    std::ofstream(root / "model" / "labels.txt") << "cat\r\ndog\n\nbird\n";
    std::ofstream(root / "secret.txt") << "outside\n";
    fs::create_symlink(root / "secret.txt", root / "model" / "link.txt");
    fs::create_directories(root / "model" / "dir.txt");
  }
  void TearDown() override { fs::remove_all(root); }
  fs::path root;
};

TEST_F(LabelDir, ReadsOneLabelPerLine) {
  auto labels = load_labels((root / "model").string(), "labels.txt");
  ASSERT_TRUE(labels.ok()) << labels.status().to_string();
  EXPECT_EQ(*labels, (std::vector<std::string>{"cat", "dog", "", "bird"}));
}

TEST_F(LabelDir, MissingOutsideOrNotAFileIsAnErrorNamingTheFile) {
  const std::string dir = (root / "model").string();
  auto missing = load_labels(dir, "nope.txt");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.txt"), std::string::npos);
  auto outside = load_labels(dir, "link.txt");
  EXPECT_EQ(outside.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("outside the model directory"), std::string::npos);
  auto up = load_labels(dir, "../secret.txt");
  EXPECT_FALSE(up.ok());
  auto folder = load_labels(dir, "dir.txt");
  EXPECT_NE(folder.status().message().find("not a regular file"), std::string::npos);
}

TEST(BytesElementsTest, RoundTripAndFramingErrors) {
  std::string data;
  append_bytes_element("ab", &data);
  append_bytes_element("", &data);
  append_bytes_element("xyz", &data);
  auto parts = split_bytes_elements(data, 3);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(*parts, (std::vector<std::string_view>{"ab", "", "xyz"}));
  EXPECT_NE(split_bytes_elements(data, 4).status().message().find("element 3"), std::string::npos);
  EXPECT_NE(split_bytes_elements(data, 2).status().message().find("after its 2 elements"),
            std::string::npos);
  EXPECT_NE(split_bytes_elements(data.substr(0, 5), 1).status().message().find("length 2"),
            std::string::npos);
}

}  // namespace
}  // namespace osprey::server::processing
