// Reads result files into candidates for `osprey select`. Two formats are accepted:
//
//  1. results.json written by `osprey bench --out DIR` (docs/BENCHMARKING.md): one candidate
//     per measurement (cell x framework). A measurement whose status is not "ok" becomes an
//     ineligible candidate carrying "<status>: <reason>".
//  2. A candidate list, for tools that do not write bench reports (load generators, other
//     harnesses):
//       {"format": "osprey-candidates-1",
//        "candidates": [{"framework": "osprey", "model": "m.onnx", "shapes": "default",
//                        "batch": 1, "threads": 2, "precision": "fp32",
//                        "status": "ok", "reason": "",
//                        "p50_ms": 1.0, "p90_ms": 1.1, "p95_ms": 1.2, "p99_ms": 1.4,
//                        "max_ms": 2.0, "throughput_items_per_s": 900,
//                        "peak_rss_bytes": 123456789, "load_ms": 40, "first_inference_ms": 3,
//                        "min_cosine": 0.99999, "is_reference": false}]}
//     framework and model are required; the rest are optional (a missing number is "not
//     recorded", and a constraint or weight that needs it makes the candidate ineligible).
#pragma once

#include <string>
#include <vector>

#include "osprey/status.h"
#include "select/candidate.h"

namespace osprey::bench::select {

// Parses one file's text; `source` names it in candidates and error messages.
Result<std::vector<Candidate>> parse_results(const std::string& text, const std::string& source);

// Reads and parses one file (kNotFound when it cannot be read).
Result<std::vector<Candidate>> read_results(const std::string& path);

}  // namespace osprey::bench::select
