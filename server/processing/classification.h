// Classification post-processing, answering Triton's `classification` output parameter: the K
// highest scores of one batch item as strings "<score>:<index>" or, when the output has a
// label file with a line for that index, "<score>:<index>:<label>" (Triton's format; the score
// is printed as std::to_string prints a float, e.g. "0.750000"). Ties keep the lower index
// first, so the order is deterministic. K larger than the number of classes gives all classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "osprey/status.h"

namespace osprey::server::processing {

constexpr int64_t kMaxLabelFileBytes = int64_t{16} << 20;

// Numerically stable softmax (subtracts the max) in place.
void softmax(std::vector<float>* scores);

// Top-K of `scores` (K >= 1) as Triton's classification strings.
std::vector<std::string> top_k_classes(const std::vector<float>& scores, int64_t k,
                                       const std::vector<std::string>& labels);

// Reads a label file (one label per line, "\r\n" accepted, trailing empty line ignored) named
// `filename` inside `model_dir`. The file must exist, be a regular file inside the directory
// (after resolving links) and be at most kMaxLabelFileBytes. Errors name the file.
Result<std::vector<std::string>> load_labels(const std::string& model_dir,
                                             const std::string& filename);

}  // namespace osprey::server::processing
