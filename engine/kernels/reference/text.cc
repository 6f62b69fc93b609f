// Text ops: StringNormalizer (opset 10) and TfIdfVectorizer (opset 9).
#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

// Case mapping is ASCII only: bytes >= 0x80 (UTF-8 sequences) are left unchanged.
std::string to_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}
std::string to_upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

}  // namespace

Status string_normalizer(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 2));
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kString) return invalid_argument("input X must be a string tensor");
  if (x.rank() == 2 && x.dim(0) != 1)
    return invalid_argument("a 2-D input must have shape [1, C], got ", shape_to_string(x.shape()));
  const std::string action = ctx.attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return invalid_argument("unsupported case_change_action '", action, "'");
  const int64_t cs = ctx.attr_int("is_case_sensitive", 0);
  if (cs != 0 && cs != 1) return invalid_argument("is_case_sensitive must be 0 or 1");
  std::unordered_set<std::string> stop;
  for (const auto& w : ctx.attr_strings("stopwords")) stop.insert(cs ? w : to_lower(w));

  const std::string* in = x.data<std::string>();
  std::vector<std::string> kept;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (stop.count(cs ? in[i] : to_lower(in[i]))) continue;
    if (action == "LOWER")
      kept.push_back(to_lower(in[i]));
    else if (action == "UPPER")
      kept.push_back(to_upper(in[i]));
    else
      kept.push_back(in[i]);
  }
  // When every string is removed, the output holds a single empty string.
  if (kept.empty()) kept.emplace_back();
  const int64_t n = static_cast<int64_t>(kept.size());
  Shape shape = x.rank() == 2 ? Shape{1, n} : Shape{n};
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kString, shape));
  std::move(kept.begin(), kept.end(), y.data<std::string>());
  return Status::Ok();
}

namespace {

// A trie over n-gram items; `id` is the pool ordinal + 1 of the n-gram ending at a node.
template <class K>
struct Trie {
  struct Node {
    std::map<K, size_t> next;
    int64_t id = 0;
  };
  std::vector<Node> nodes{Node{}};

  void insert(const K* items, int64_t n, int64_t id) {
    size_t cur = 0;
    for (int64_t i = 0; i < n; ++i) {
      auto it = nodes[cur].next.find(items[i]);
      if (it == nodes[cur].next.end()) {
        nodes.emplace_back();
        it = nodes[cur].next.emplace(items[i], nodes.size() - 1).first;
      }
      cur = it->second;
    }
    nodes[cur].id = id;
  }
};

struct TfIdfParams {
  int64_t min_n = 0, max_n = 0, max_skip = 0;
  std::vector<int64_t> counts, indexes;
  int64_t out_size = 0;
};

// Counts the pool n-grams of each row; `freq` is [rows, pool size].
template <class K>
void count_ngrams(const K* data, int64_t rows, int64_t cols, const Trie<K>& trie,
                  const TfIdfParams& p, std::vector<int64_t>& freq, int64_t pool_size) {
  for (int64_t r = 0; r < rows; ++r) {
    const K* row = data + r * cols;
    int64_t start_n = p.min_n;
    // Distances beyond the row length cannot form n-grams with n >= 2.
    const int64_t max_dist = std::min(p.max_skip, cols) + 1;
    for (int64_t dist = 1; dist <= max_dist; ++dist) {
      for (int64_t s = 0; s < cols; ++s) {
        if (start_n - 1 > (cols - 1 - s) / dist) break;  // no n-gram of size start_n fits
        size_t node = 0;
        for (int64_t n = 1, pos = s; n <= p.max_n && pos < cols; ++n, pos += dist) {
          const auto& next = trie.nodes[node].next;
          auto it = next.find(row[pos]);
          if (it == next.end()) break;
          node = it->second;
          const int64_t id = trie.nodes[node].id;
          if (n >= start_n && id != 0) ++freq[static_cast<size_t>(r * pool_size + id - 1)];
        }
      }
      // Unigrams do not depend on the skip distance: count them once.
      if (start_n == 1 && ++start_n > p.max_n) break;
    }
  }
}

}  // namespace

Status tfidf_vectorizer(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 2));
  const Tensor& x = ctx.input(0);
  const DType dt = x.dtype();
  if (dt != DType::kString && dt != DType::kInt32 && dt != DType::kInt64)
    return invalid_argument("input X must be string, int32 or int64, got ", dtype_name(dt));
  TfIdfParams p;
  p.min_n = ctx.attr_int("min_gram_length", 0);
  p.max_n = ctx.attr_int("max_gram_length", 0);
  p.max_skip = ctx.attr_int("max_skip_count", 0);
  if (p.min_n < 1 || p.max_n < p.min_n)
    return invalid_argument("need 1 <= min_gram_length <= max_gram_length, got ", p.min_n, " and ",
                            p.max_n);
  if (p.max_skip < 0) return invalid_argument("max_skip_count must be non-negative");
  const std::string mode = ctx.attr_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return invalid_argument("mode must be TF, IDF or TFIDF, got '", mode, "'");
  p.counts = ctx.attr_ints("ngram_counts");
  p.indexes = ctx.attr_ints("ngram_indexes");
  const std::vector<float> weights = ctx.attr_floats("weights");
  const bool str_pool = ctx.has_attr("pool_strings");
  if (str_pool == ctx.has_attr("pool_int64s"))
    return invalid_argument("exactly one of pool_strings and pool_int64s must be given");
  if (str_pool != (dt == DType::kString))
    return invalid_argument("the pool type does not match input type ", dtype_name(dt));
  const std::vector<std::string> pool_s = ctx.attr_strings("pool_strings");
  const std::vector<int64_t> pool_i = ctx.attr_ints("pool_int64s");
  const int64_t pool_len = static_cast<int64_t>(str_pool ? pool_s.size() : pool_i.size());

  // ngram_counts[k] is where the (k+1)-grams start in the pool.
  if (p.counts.empty() || p.counts[0] != 0)
    return invalid_argument("ngram_counts must start with 0");
  std::vector<std::pair<int64_t, int64_t>> grams;  // (start in pool, n) of each pool n-gram
  for (size_t k = 0; k < p.counts.size(); ++k) {
    const int64_t begin = p.counts[k];
    const int64_t end = k + 1 < p.counts.size() ? p.counts[k + 1] : pool_len;
    const int64_t n = static_cast<int64_t>(k) + 1;
    if (begin > end || end > pool_len || (end - begin) % n != 0)
      return invalid_argument("ngram_counts do not split the pool (", pool_len,
                              " items) into whole ", n, "-grams");
    for (int64_t s = begin; s < end; s += n) grams.emplace_back(s, n);
  }
  if (p.indexes.size() != grams.size())
    return invalid_argument("ngram_indexes has ", p.indexes.size(), " entries but the pool holds ",
                            grams.size(), " n-grams");
  if (!weights.empty() && weights.size() != grams.size())
    return invalid_argument("weights has ", weights.size(), " entries but the pool holds ",
                            grams.size(), " n-grams");
  for (int64_t idx : p.indexes) {
    if (idx < 0) return invalid_argument("ngram_indexes contains a negative index");
    if (idx >= ctx.max_elements())
      return invalid_argument("ngram_indexes value ", idx, " is too large");
    p.out_size = std::max(p.out_size, idx + 1);
  }
  const int64_t pool_size = static_cast<int64_t>(grams.size());
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t cols = x.rank() == 2 ? x.dim(1) : x.dim(0);
  Shape os = x.rank() == 2 ? Shape{rows, p.out_size} : Shape{p.out_size};
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kFloat32, os));
  if (shape_numel({rows, pool_size}) > ctx.max_elements())
    return resource_exhausted("TfIdfVectorizer: too many rows times pool n-grams");
  std::vector<int64_t> freq(static_cast<size_t>(rows * pool_size), 0);

  if (str_pool) {
    Trie<std::string> trie;
    for (size_t g = 0; g < grams.size(); ++g)
      trie.insert(pool_s.data() + grams[g].first, grams[g].second, static_cast<int64_t>(g) + 1);
    count_ngrams<std::string>(x.data<std::string>(), rows, cols, trie, p, freq, pool_size);
  } else {
    Trie<int64_t> trie;
    for (size_t g = 0; g < grams.size(); ++g)
      trie.insert(pool_i.data() + grams[g].first, grams[g].second, static_cast<int64_t>(g) + 1);
    if (dt == DType::kInt64) {
      count_ngrams<int64_t>(x.data<int64_t>(), rows, cols, trie, p, freq, pool_size);
    } else {
      const std::vector<int64_t> v = x.to_int64_vector();
      count_ngrams<int64_t>(v.data(), rows, cols, trie, p, freq, pool_size);
    }
  }

  float* out = y.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < pool_size; ++g) {
      const int64_t f = freq[static_cast<size_t>(r * pool_size + g)];
      const float w = weights.empty() ? 1.0f : weights[static_cast<size_t>(g)];
      float v = static_cast<float>(f);
      if (mode == "IDF")
        v = f > 0 ? w : 0.0f;
      else if (mode == "TFIDF")
        v = static_cast<float>(f) * w;
      if (v != 0) out[r * p.out_size + p.indexes[static_cast<size_t>(g)]] += v;
    }
  return Status::Ok();
}

}  // namespace osprey::ref
