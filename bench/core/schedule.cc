#include "core/schedule.h"

#include <cctype>

namespace osprey::bench {

std::vector<CellCoord> make_cell_grid(size_t models, size_t shape_sets,
                                      const std::vector<int64_t>& batches,
                                      const std::vector<int>& threads,
                                      const std::vector<std::string>& precisions) {
  std::vector<CellCoord> cells;
  for (size_t m = 0; m < models; ++m)
    for (size_t s = 0; s < shape_sets; ++s)
      for (int64_t b : batches)
        for (int t : threads)
          for (const auto& p : precisions) cells.push_back({m, s, b, t, p});
  return cells;
}

std::string cell_id(const CellCoord& c) {
  std::string p;
  for (char ch : c.precision) p += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  std::string id = "m";
  id.append(std::to_string(c.model)).append("_s").append(std::to_string(c.shape_set));
  id.append("_b").append(std::to_string(c.batch)).append("_t").append(std::to_string(c.threads));
  return id.append("_").append(p);
}

std::vector<size_t> next_round(const std::vector<bool>& wants_turn) {
  std::vector<size_t> order;
  for (size_t i = 0; i < wants_turn.size(); ++i)
    if (wants_turn[i]) order.push_back(i);
  return order;
}

}  // namespace osprey::bench
