#include "processing/classification.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace osprey::server::processing {

void softmax(std::vector<float>* scores) {
  if (scores->empty()) return;
  const float max = *std::max_element(scores->begin(), scores->end());
  double sum = 0;
  for (float& s : *scores) {
    s = std::exp(s - max);
    sum += s;
  }
  for (float& s : *scores) s = static_cast<float>(s / sum);
}

std::vector<std::string> top_k_classes(const std::vector<float>& scores, int64_t k,
                                       const std::vector<std::string>& labels) {
  const size_t n = std::min(scores.size(), static_cast<size_t>(std::max<int64_t>(k, 0)));
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  // Higher score first; NaN sorts last; equal scores keep the lower index first.
  auto before = [&](size_t a, size_t b) {
    const float x = scores[a], y = scores[b];
    if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
    return x > y;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](size_t a, size_t b) { return before(a, b) || (!before(b, a) && a < b); });
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t idx = order[i];
    std::string s = std::to_string(scores[idx]) + ":" + std::to_string(idx);
    if (idx < labels.size() && !labels[idx].empty()) s += ":" + labels[idx];
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<std::string>> load_labels(const std::string& model_dir,
                                             const std::string& filename) {
  namespace fs = std::filesystem;
  const std::string what = str_cat("label_filename '", filename, "'");
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(model_dir, ec);
  if (ec) return not_found(what, ": model directory '", model_dir, "' cannot be resolved");
  const fs::path path = fs::weakly_canonical(dir / filename, ec);
  if (ec || !fs::exists(path, ec))
    return not_found(what, ": no such file in the model directory '", model_dir, "'");
  const auto rel = path.lexically_relative(dir);
  if (rel.empty() || *rel.begin() == "..")
    return invalid_argument(what, ": resolves outside the model directory");
  if (!fs::is_regular_file(path, ec)) return invalid_argument(what, ": not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) return not_found(what, ": cannot read its size");
  if (static_cast<int64_t>(size) > kMaxLabelFileBytes)
    return invalid_argument(what, ": ", size, " bytes is over the limit of ", kMaxLabelFileBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(what, ": cannot be opened");
  std::vector<std::string> labels;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  return labels;
}

}  // namespace osprey::server::processing
