// The shape of a benchmark run: the grid of cells and the interleaved order in which
// frameworks take turns inside a cell.
//
// Cells are the product models x shape sets x batches x shape modes x threads x affinity x
// precisions, in that nesting order (precision varies fastest). Inside a cell every framework is
// measured window by window in rounds, A B C A B C ..., so that slow drift of the machine (heat,
// other load) hits all of them alike; a framework that has measured enough or failed drops out of
// later rounds.
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
  std::string shape_mode = "dynamic";  // "dynamic" | "fixed"
  int threads = 1;
  bool pinned = false;
  std::string precision;
};

// The values swept on each axis, in sweep order.
struct CellAxes {
  size_t models = 1;
  size_t shape_sets = 1;
  std::vector<int64_t> batches = {1};
  std::vector<std::string> shape_modes = {"dynamic"};
  std::vector<int> threads = {1};
  std::vector<bool> pinned = {false};
  std::vector<std::string> precisions = {"fp32"};
};

std::vector<CellCoord> make_cell_grid(const CellAxes& axes);

// "m0_s0_b8_t2_fp32", with "_fixed" after the batch for a fixed-shape cell and "_pin" after the
// threads for a pinned one ("m0_s0_b8_fixed_t2_pin_fp32"): unique per coordinate (for shape
// modes "dynamic"/"fixed") and safe as a file name. The default cells keep their short ids.
std::string cell_id(const CellCoord& c);

// Frameworks that take a turn in the next round, in framework order: the indices i with
// wants_turn[i] true. Empty when the cell is done.
std::vector<size_t> next_round(const std::vector<bool>& wants_turn);

}  // namespace osprey::bench
