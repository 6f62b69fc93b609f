// Lifetime-based memory planning: a pure function from buffer lifetimes to offsets in one arena.
//
// The caller numbers execution steps (normally the index of a node in topological order, see
// ir::Graph::nodes and Graph::release_after) and describes each intermediate buffer by its size
// and the inclusive range of steps during which it must stay intact. plan_memory() gives every
// buffer an offset such that no two buffers alive at the same step share a byte, except where an
// in-place hint lets an output take over its input's bytes. Nothing here knows about graphs,
// tensors or kernels; the executor (later) turns a Graph into requests.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "osprey/status.h"

namespace osprey::planner {

struct BufferRequest {
  size_t size_bytes = 0;
  int first_step = 0;  // step that writes the buffer
  int last_step = 0;   // last step that reads it (inclusive); must be >= first_step
  // Index of another request whose bytes this one may reuse (an element-wise output writing over
  // its input). Honored only when requests[*in_place_of].last_step == first_step (this step is
  // the input's last use), this buffer is no larger than that one (after rounding to the
  // alignment), no other request already took that buffer, and the chain stays sound (see
  // MemoryPlan::in_place). It is a hint: the plan may ignore it.
  std::optional<size_t> in_place_of;
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request, multiples of `alignment`
  // in_place[i]: request i shares its offset with requests[i].in_place_of (the hint was honored).
  std::vector<bool> in_place;
  size_t arena_bytes = 0;  // every buffer fits in [0, arena_bytes); a multiple of `alignment`
  // Max over steps of the bytes alive at that step (sizes rounded up to `alignment`, an honored
  // in-place pair counted once at its shared step). No plan can use a smaller arena, so
  // arena_bytes / lower_bound_bytes measures the heuristic's waste.
  size_t lower_bound_bytes = 0;
  size_t alignment = 1;
};

// Checks the requests are well formed: last_step >= first_step, in_place_of in range and not
// itself. plan_memory() does not require this (it treats last_step < first_step as a one-step
// lifetime and ignores bad hints) but a caller building requests should.
Status validate_requests(const std::vector<BufferRequest>& requests);

// Greedy by size: buffers (in-place chains as one unit) are placed largest first, each at the
// offset of the smallest gap between already-placed, time-overlapping buffers that fits it
// (lowest offset on ties), or above them all — the heuristic TFLite and XNNPACK use. Sizes are
// rounded up to `alignment` (0 is treated as 1). Deterministic: equal inputs give equal plans.
// Cost: each placement looks at the placed buffers alive during its lifetime (found through
// step buckets) and sorts them by offset, so O(n log n + sum of k log k) for k neighbours per
// buffer: near-linear for graph-like lifetimes, O(n^2 log n) when every buffer is alive at
// once (10k such buffers: about a second). O(n) memory.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment = 64);

// Checks that `plan` is a sound plan for `requests`: one offset per request, every offset a
// multiple of plan.alignment, every buffer inside [0, arena_bytes), and no two buffers whose
// step ranges overlap sharing a byte — unless the later one is an honored in-place reuse of the
// earlier (same offset, hint valid as described above). Zero-size buffers occupy no bytes.
// O(n log n + pairs alive together), so cheap enough for a debug check on every new plan.
Status verify_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan);

}  // namespace osprey::planner
