// The model a "fixed" shape-mode cell runs: a copy of the ONNX file whose graph inputs have the
// cell's concrete shapes in place of symbolic or unknown dims (`osprey bench --shape-mode`).
//
// Only the main graph's inputs change; value_info, outputs and subgraphs keep whatever symbolic
// dims they had (frameworks re-infer them from the fixed inputs). A model whose inputs already
// have exactly these shapes is not copied: the cell runs the file as given.
#pragma once

#include <string>
#include <vector>

#include "core/report.h"
#include "osprey/status.h"

namespace osprey::bench {

struct FixedShapeModel {
  std::string path;     // the file to load: `out_path`, or the model itself when nothing changed
  bool copied = false;  // a copy was written
  std::string note;     // what changed ("x: N -> 1, 3 -> 3 ..."), or why nothing did
};

// Reads `model_path`, sets every graph input named in `inputs` to that input's shape, and writes
// the result to `out_path` (when something changed). Fails with kInvalidArgument for an input
// the graph does not declare, a rank that differs from the declared one or a fixed dim that
// differs from the given one; kUnimplemented for a model with external data (a copy elsewhere
// would lose it); kNotFound when the model cannot be read.
Result<FixedShapeModel> write_fixed_shape_model(const std::string& model_path,
                                                const std::vector<InputDesc>& inputs,
                                                const std::string& out_path);

}  // namespace osprey::bench
