#include "core/schedule.h"

#include <cctype>

namespace osprey::bench {

std::vector<CellCoord> make_cell_grid(const CellAxes& axes) {
  std::vector<CellCoord> cells;
  for (size_t m = 0; m < axes.models; ++m)
    for (size_t s = 0; s < axes.shape_sets; ++s)
      for (int64_t b : axes.batches)
        for (const auto& mode : axes.shape_modes)
          for (int t : axes.threads)
            for (bool pin : axes.pinned)
              for (const auto& p : axes.precisions) cells.push_back({m, s, b, mode, t, pin, p});
  return cells;
}

std::string cell_id(const CellCoord& c) {
  std::string p;
  for (char ch : c.precision) p += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  std::string id = "m";
  id.append(std::to_string(c.model)).append("_s").append(std::to_string(c.shape_set));
  id.append("_b").append(std::to_string(c.batch));
  if (c.shape_mode != "dynamic") {
    id.append("_");
    for (char ch : c.shape_mode) id += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  id.append("_t").append(std::to_string(c.threads));
  if (c.pinned) id.append("_pin");
  return id.append("_").append(p);
}

std::vector<size_t> next_round(const std::vector<bool>& wants_turn) {
  std::vector<size_t> order;
  for (size_t i = 0; i < wants_turn.size(); ++i)
    if (wants_turn[i]) order.push_back(i);
  return order;
}

}  // namespace osprey::bench
