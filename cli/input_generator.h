// Seeded random input tensors, reproducible across machines and compilers.
//
// Each input gets its own stream: std::mt19937_64 (fully specified by the C++ standard) seeded
// with input_seed(seed, name), so an input's data depends only on the seed and its name, not on
// the order of inputs. Values are derived from raw 64-bit draws without std:: distributions
// (whose algorithms vary between standard libraries):
//   float types, uniform: -1 + 2 * u, u = (r >> 11) * 2^-53, so in [-1, 1) (float16/bfloat16
//                         rounding may produce exactly 1);
//   float types, normal:  Box-Muller from two draws, N(0, 1);
//   integer types:        r % int_range, i.e. [0, int_range), clipped to the type's maximum;
//   bool:                 the top bit of r.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "osprey/status.h"
#include "osprey/tensor.h"

namespace osprey::cli {

enum class Distribution { kUniform, kNormal };

struct GeneratorOptions {
  Distribution distribution = Distribution::kUniform;
  int64_t int_range = 100;  // integers are drawn from [0, int_range)
  int64_t max_elements = int64_t{1} << 31;
};

// Per-input seed: splitmix64 of seed mixed with the FNV-1a hash of the name.
uint64_t input_seed(uint64_t seed, std::string_view name);

// A tensor of `dtype` and `shape` filled from `seed`. Refuses string and undefined dtypes and
// shapes above options.max_elements.
Result<Tensor> random_tensor(DType dtype, const Shape& shape, uint64_t seed, const GeneratorOptions& options = {});

// "uniform" / "normal" <-> Distribution.
bool parse_distribution(std::string_view name, Distribution* out);
const char* distribution_name(Distribution d);

}  // namespace osprey::cli
