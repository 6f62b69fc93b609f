// Output agreement between two frameworks' outputs of the same name.
//
//   max_abs  = max |a - r|
//   max_rel  = max |a - r| / max(|r|, 1e-6)      (r = the reference framework's value)
//   cosine   = (a . r) / (|a| |r|); 1 when both are all zeros, 0 when only one is
//   classifiers (a float output of rank 2, [rows, classes] with classes >= 2): per row,
//   top-1 agreement (argmax equal) and top-k overlap (|top-k(a) ∩ top-k(r)| / k, k = min(5,
//   classes)), each averaged over rows.
// Values are compared as double. A NaN on one side only makes max_abs/max_rel infinite and is
// named in the note. Shapes must match; otherwise nothing is compared and the note says why.
#pragma once

#include <string>

#include "core/report.h"
#include "osprey/tensor.h"

namespace osprey::bench {

OutputAgreement compare_outputs(const std::string& name, const Tensor& reference,
                                const Tensor& other);

}  // namespace osprey::bench
