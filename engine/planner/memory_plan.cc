#include "planner/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

namespace osprey::planner {
namespace {

size_t blocks_of(size_t bytes, size_t alignment) {
  return bytes / alignment + (bytes % alignment != 0 ? 1 : 0);
}

// The lifetime plan_memory() uses: last_step < first_step is read as a one-step lifetime.
int last_of(const BufferRequest& r) {
  return std::max(r.first_step, r.last_step);
}

bool times_overlap(int a_first, int a_last, int b_first, int b_last) {
  return a_first <= b_last && b_first <= a_last;
}

// The static part of the in-place rule, shared by the planner and the verifier: the target
// exists, its last use is this request's first step, it is at least as large (in blocks), and
// it is not itself a one-step buffer with an in-place hint (which could chain two buffers that
// are both alive at that one step onto the same bytes).
bool in_place_candidate(const std::vector<BufferRequest>& requests, size_t j, size_t alignment) {
  const BufferRequest& r = requests[j];
  if (!r.in_place_of.has_value()) return false;
  size_t t = *r.in_place_of;
  if (t >= requests.size() || t == j) return false;
  const BufferRequest& target = requests[t];
  if (last_of(target) != r.first_step) return false;
  if (blocks_of(r.size_bytes, alignment) > blocks_of(target.size_bytes, alignment)) return false;
  if (target.first_step >= target.last_step && target.in_place_of.has_value()) return false;
  return true;
}

}  // namespace

Status validate_requests(const std::vector<BufferRequest>& requests) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& r = requests[i];
    if (r.last_step < r.first_step)
      return invalid_argument("buffer request ", i, ": last_step ", r.last_step,
                              " is before first_step ", r.first_step);
    if (r.in_place_of.has_value() && (*r.in_place_of >= requests.size() || *r.in_place_of == i))
      return invalid_argument("buffer request ", i, ": in_place_of ", *r.in_place_of,
                              " is not another request (", requests.size(), " requests)");
  }
  return Status::Ok();
}

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment) {
  const size_t a = std::max<size_t>(alignment, 1);
  const size_t n = requests.size();
  MemoryPlan plan;
  plan.alignment = a;
  plan.offsets.assign(n, 0);
  plan.in_place.assign(n, false);
  if (n == 0) return plan;

  std::vector<size_t> blocks(n);
  std::vector<int> first(n), last(n);
  for (size_t i = 0; i < n; ++i) {
    blocks[i] = blocks_of(requests[i].size_bytes, a);
    first[i] = requests[i].first_step;
    last[i] = last_of(requests[i]);
  }

  // Honor in-place hints, first claimant (by index) wins. parent[j] = the buffer j writes over.
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> parent(n, kNone);
  std::vector<bool> claimed(n, false);
  for (size_t j = 0; j < n; ++j) {
    if (!in_place_candidate(requests, j, a)) continue;
    size_t t = *requests[j].in_place_of;
    if (claimed[t]) continue;
    claimed[t] = true;
    parent[j] = t;
    plan.in_place[j] = true;
  }

  // Groups: each in-place chain is placed as one unit at one offset. The candidate rule keeps
  // chains acyclic and makes only adjacent members overlap in time (at their shared step).
  std::vector<size_t> root(n);
  for (size_t i = 0; i < n; ++i) {
    size_t r = i;
    while (parent[r] != kNone) r = parent[r];
    root[i] = r;
  }
  std::vector<std::vector<size_t>> members(n);
  for (size_t i = 0; i < n; ++i) members[root[i]].push_back(i);
  struct Group {
    size_t root, blocks;
    int lo, hi;  // steps spanned by the members
  };
  std::vector<Group> groups;
  for (size_t r = 0; r < n; ++r) {
    if (members[r].empty()) continue;
    size_t b = 0;
    int lo = first[r], hi = last[r];
    for (size_t m : members[r]) {
      b = std::max(b, blocks[m]);
      lo = std::min(lo, first[m]);
      hi = std::max(hi, last[m]);
    }
    if (b == 0) continue;  // all zero-size: offset 0, occupies nothing
    groups.push_back({r, b, lo, hi});
  }
  // Largest first; longer lifetimes first among equals; then by index, for determinism.
  std::sort(groups.begin(), groups.end(), [](const Group& x, const Group& y) {
    if (x.blocks != y.blocks) return x.blocks > y.blocks;
    long long xs = static_cast<long long>(x.hi) - x.lo, ys = static_cast<long long>(y.hi) - y.lo;
    if (xs != ys) return xs > ys;
    return x.root < y.root;
  });

  // Placed buffers, bucketed by (compressed) step so that finding the ones alive during a group's
  // span touches only nearby buckets: close to linear for graph-like lifetimes, O(n) per
  // placement at worst. The bucket width keeps the bucket lists O(n) in total size.
  std::vector<int> steps;
  for (size_t i = 0; i < n; ++i)
    if (blocks[i] != 0) {
      steps.push_back(first[i]);
      steps.push_back(last[i]);
    }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  auto rank = [&](int step) {
    return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  std::vector<size_t> rank_first(n, 0), rank_last(n, 0);
  size_t covered = 0, nonzero = 0;
  for (size_t i = 0; i < n; ++i)
    if (blocks[i] != 0) {
      rank_first[i] = rank(first[i]);
      rank_last[i] = rank(last[i]);
      covered += rank_last[i] - rank_first[i] + 1;
      ++nonzero;
    }
  const size_t width = std::max<size_t>(1, covered / (4 * std::max<size_t>(1, nonzero)));
  std::vector<std::vector<size_t>> buckets(steps.size() / width + 1);

  std::vector<int> p_first, p_last;
  std::vector<size_t> p_offset, p_blocks;  // in alignment blocks
  std::vector<size_t> p_seen;              // the last group that looked at this placed buffer
  std::vector<size_t> near;                // placed buffers alive somewhere in the group's span
  std::vector<std::pair<size_t, size_t>> forbidden;  // offsets [lo, hi) the group may not start at
  size_t arena_blocks = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    const std::vector<size_t>& ms = members[g.root];
    size_t r_lo = std::numeric_limits<size_t>::max(), r_hi = 0;
    for (size_t m : ms)
      if (blocks[m] != 0) {
        r_lo = std::min(r_lo, rank_first[m]);
        r_hi = std::max(r_hi, rank_last[m]);
      }
    near.clear();
    for (size_t b = r_lo / width; b <= r_hi / width; ++b)
      for (size_t k : buckets[b]) {
        if (p_seen[k] == gi) continue;
        p_seen[k] = gi;
        if (p_first[k] <= g.hi && g.lo <= p_last[k]) near.push_back(k);
      }
    forbidden.clear();
    for (size_t k : near)
      for (size_t m : ms) {
        if (blocks[m] == 0 || !times_overlap(p_first[k], p_last[k], first[m], last[m])) continue;
        // Member m at offset o conflicts with k iff [o, o+bm) meets [offset_k, offset_k+blocks_k).
        size_t lo = p_offset[k] + 1 > blocks[m] ? p_offset[k] + 1 - blocks[m] : 0;
        forbidden.emplace_back(lo, p_offset[k] + p_blocks[k]);
      }
    std::sort(forbidden.begin(), forbidden.end());
    // Best fit: the smallest free gap between forbidden ranges; lowest offset among equals.
    size_t best = 0, best_len = std::numeric_limits<size_t>::max();
    bool found = false;
    size_t cursor = 0;  // everything below cursor is forbidden or already considered
    for (const auto& [lo, hi] : forbidden) {
      if (lo > cursor) {
        size_t len = lo - cursor;
        if (len < best_len) {
          best = cursor;
          best_len = len;
          found = true;
        }
      }
      cursor = std::max(cursor, hi);
    }
    if (!found) best = cursor;  // above everything it overlaps
    for (size_t m : ms) {
      plan.offsets[m] = best * a;
      if (blocks[m] == 0) continue;
      for (size_t b = rank_first[m] / width; b <= rank_last[m] / width; ++b)
        buckets[b].push_back(p_first.size());
      p_first.push_back(first[m]);
      p_last.push_back(last[m]);
      p_offset.push_back(best);
      p_blocks.push_back(blocks[m]);
      p_seen.push_back(gi);
      arena_blocks = std::max(arena_blocks, best + blocks[m]);
    }
  }
  plan.arena_bytes = arena_blocks * a;

  // Lower bound: sweep the steps, counting each live buffer's blocks; an honored in-place buffer
  // is not counted at its first step, where it shares its input's bytes.
  std::vector<std::pair<long long, long long>> events;  // (step, +/- blocks)
  events.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    if (blocks[i] == 0) continue;
    long long s = first[i] + (plan.in_place[i] ? 1 : 0);
    long long e = last[i];
    if (s > e) continue;
    events.emplace_back(s, static_cast<long long>(blocks[i]));
    events.emplace_back(e + 1, -static_cast<long long>(blocks[i]));
  }
  std::sort(events.begin(), events.end());
  long long live = 0, peak = 0;
  for (size_t i = 0; i < events.size();) {
    size_t j = i;
    for (; j < events.size() && events[j].first == events[i].first; ++j) live += events[j].second;
    peak = std::max(peak, live);
    i = j;
  }
  plan.lower_bound_bytes = static_cast<size_t>(peak) * a;
  return plan;
}

Status verify_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  const size_t n = requests.size();
  if (plan.alignment == 0) return invalid_argument("memory plan: alignment is 0");
  const size_t a = plan.alignment;
  if (plan.offsets.size() != n)
    return invalid_argument("memory plan: ", plan.offsets.size(), " offsets for ", n, " requests");
  if (plan.in_place.size() != n)
    return invalid_argument("memory plan: ", plan.in_place.size(), " in-place flags for ", n,
                            " requests");
  for (size_t i = 0; i < n; ++i) {
    const size_t off = plan.offsets[i], size = requests[i].size_bytes;
    if (off % a != 0)
      return invalid_argument("memory plan: buffer ", i, " offset ", off,
                              " is not a multiple of the alignment ", a);
    if (size > 0 && (off > plan.arena_bytes || size > plan.arena_bytes - off))
      return invalid_argument("memory plan: buffer ", i, " [", off, ", +", size,
                              ") is outside the arena of ", plan.arena_bytes, " bytes");
  }
  std::vector<bool> claimed(n, false);
  for (size_t j = 0; j < n; ++j) {
    if (!plan.in_place[j]) continue;
    if (!in_place_candidate(requests, j, a))
      return invalid_argument("memory plan: buffer ", j,
                              " is marked in-place but its hint is not valid");
    size_t t = *requests[j].in_place_of;
    if (claimed[t])
      return invalid_argument("memory plan: buffer ", t, " is reused in place by two buffers");
    claimed[t] = true;
    if (plan.offsets[j] != plan.offsets[t])
      return invalid_argument("memory plan: buffer ", j, " is marked in-place of buffer ", t,
                              " but has offset ", plan.offsets[j], " instead of ", plan.offsets[t]);
  }
  // Sweep in order of first step: each buffer is compared only with those that start while it
  // is alive. O(n log n + pairs alive together).
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (requests[i].size_bytes != 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return requests[x].first_step != requests[y].first_step
               ? requests[x].first_step < requests[y].first_step
               : x < y;
  });
  for (size_t oi = 0; oi < order.size(); ++oi) {
    const size_t i = order[oi];
    const BufferRequest& x = requests[i];
    for (size_t oj = oi + 1; oj < order.size() && requests[order[oj]].first_step <= last_of(x);
         ++oj) {
      const size_t j = order[oj];
      const BufferRequest& y = requests[j];
      const size_t xo = plan.offsets[i], yo = plan.offsets[j];
      if (xo >= yo + y.size_bytes || yo >= xo + x.size_bytes) continue;
      if ((plan.in_place[j] && *y.in_place_of == i) || (plan.in_place[i] && *x.in_place_of == j))
        continue;
      const size_t lo = std::min(i, j), hi = std::max(i, j);
      const size_t lo_off = plan.offsets[lo], hi_off = plan.offsets[hi];
      return invalid_argument("memory plan: buffers ", lo, " (steps ", requests[lo].first_step,
                              "..", last_of(requests[lo]), ", bytes ", lo_off, "..",
                              lo_off + requests[lo].size_bytes, ") and ", hi, " (steps ",
                              requests[hi].first_step, "..", last_of(requests[hi]), ", bytes ",
                              hi_off, "..", hi_off + requests[hi].size_bytes,
                              ") are alive together and overlap");
    }
  }
  return Status::Ok();
}

}  // namespace osprey::planner
