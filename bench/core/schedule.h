// The shape of a benchmark run: the grid of cells and the interleaved order in which
// frameworks take turns inside a cell.
//
// Cells are the product models x shape sets x batches x threads x precisions, in that nesting
// order (precision varies fastest). Inside a cell every framework is measured window by window in
// rounds, A B C A B C ..., so that slow drift of the machine (heat, other load) hits all of them
// alike; a framework that has measured enough or failed drops out of later rounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace osprey::bench {

struct CellCoord {
  size_t model = 0;
  size_t shape_set = 0;
  int64_t batch = 1;
  int threads = 1;
  std::string precision;
};

std::vector<CellCoord> make_cell_grid(size_t models, size_t shape_sets,
                                      const std::vector<int64_t>& batches,
                                      const std::vector<int>& threads,
                                      const std::vector<std::string>& precisions);

// "m0_s0_b8_t2_fp32": unique per coordinate and safe as a file name.
std::string cell_id(const CellCoord& c);

// Frameworks that take a turn in the next round, in framework order: the indices i with
// wants_turn[i] true. Empty when the cell is done.
std::vector<size_t> next_round(const std::vector<bool>& wants_turn);

}  // namespace osprey::bench
