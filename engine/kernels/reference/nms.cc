// NonMaxSuppression (opsets 10, 11): greedy per-class selection of boxes by descending
// score, dropping boxes that overlap an already selected box by more than iou_threshold.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

struct Box {
  float x_min, y_min, x_max, y_max;
};

Box read_box(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[0] - hw, b[1] - hh, b[0] + hw, b[1] + hh};
  }
  // [y1, x1, y2, x2]: any diagonal pair of corners.
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

bool suppress(const Box& a, const Box& b, float iou_threshold) {
  const float ix = std::max(std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min), 0.0f);
  const float iy = std::max(std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min), 0.0f);
  const float inter = ix * iy;
  if (inter <= 0) return false;
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

Status non_max_suppression(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 3));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 3, 3));
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (boxes.dtype() != DType::kFloat32 || scores.dtype() != DType::kFloat32)
    return invalid_argument("boxes and scores must be float32");
  const int64_t batches = boxes.dim(0), spatial = boxes.dim(1);
  if (boxes.dim(2) != 4)
    return invalid_argument("boxes must have shape [batches, boxes, 4], got ",
                            shape_to_string(boxes.shape()));
  if (scores.dim(0) != batches || scores.dim(2) != spatial)
    return invalid_argument("scores shape ", shape_to_string(scores.shape()),
                            " does not match boxes shape ", shape_to_string(boxes.shape()));
  const int64_t classes = scores.dim(1);

  auto scalar_input = [&](int i, const char* name, bool want_int, double* v) -> Status {
    if (!ctx.has_input(i)) return Status::Ok();
    const Tensor& t = ctx.input(i);
    if (t.numel() == 0) return Status::Ok();
    if (t.numel() != 1) return invalid_argument(name, " must hold a single value");
    if (want_int ? !dtype_is_integer(t.dtype()) : !dtype_is_float(t.dtype()))
      return invalid_argument(name, " has element type ", dtype_name(t.dtype()));
    *v = want_int ? static_cast<double>(t.get_as_int64(0)) : t.get_as_double(0);
    return Status::Ok();
  };
  double max_out_d = 0, iou_d = 0, score_d = 0;
  OSPREY_RETURN_IF_ERROR(scalar_input(2, "max_output_boxes_per_class", true, &max_out_d));
  OSPREY_RETURN_IF_ERROR(scalar_input(3, "iou_threshold", false, &iou_d));
  const bool has_score_threshold = ctx.has_input(4) && ctx.input(4).numel() > 0;
  OSPREY_RETURN_IF_ERROR(scalar_input(4, "score_threshold", false, &score_d));
  int64_t max_out =
      ctx.has_input(2) && ctx.input(2).numel() == 1 ? ctx.input(2).get_as_int64(0) : 0;
  if (max_out < 0) max_out = 0;
  if (!(iou_d >= 0 && iou_d <= 1)) return invalid_argument("iou_threshold must be in [0, 1]");
  const float iou_threshold = static_cast<float>(iou_d);
  const float score_threshold = static_cast<float>(score_d);
  const int64_t cpb = ctx.attr_int("center_point_box", 0);
  if (cpb != 0 && cpb != 1) return invalid_argument("center_point_box must be 0 or 1");

  const float* bd = boxes.data<float>();
  const float* sd = scores.data<float>();
  std::vector<int64_t> selected_out;  // triples
  std::vector<std::pair<float, int64_t>> cand;
  std::vector<Box> picked;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<Box> bx(static_cast<size_t>(spatial));
    for (int64_t i = 0; i < spatial; ++i)
      bx[static_cast<size_t>(i)] = read_box(bd + (b * spatial + i) * 4, cpb == 1);
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = sd + (b * classes + c) * spatial;
      cand.clear();
      for (int64_t i = 0; i < spatial; ++i)
        if (!std::isnan(s[i]) && (!has_score_threshold || s[i] > score_threshold))
          cand.emplace_back(s[i], i);
      // Highest score first; ties keep the lower box index first. A heap yields the candidates
      // in that order one at a time, so that only those examined before max_out boxes are
      // picked get ordered (sorting all of them took most of the time with many candidates).
      const auto later = [](const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b2) {
        return a.first < b2.first || (a.first == b2.first && a.second > b2.second);
      };
      std::make_heap(cand.begin(), cand.end(), later);
      picked.clear();
      for (auto end = cand.end(); end != cand.begin(); --end) {
        if (static_cast<int64_t>(picked.size()) >= max_out) break;
        std::pop_heap(cand.begin(), end, later);
        const int64_t i = (end - 1)->second;
        const Box& box = bx[static_cast<size_t>(i)];
        bool keep = true;
        for (const Box& p : picked)
          if (suppress(p, box, iou_threshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        picked.push_back(box);
        selected_out.insert(selected_out.end(), {b, c, i});
      }
    }
  }
  const int64_t n = static_cast<int64_t>(selected_out.size() / 3);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kInt64, {n, 3}));
  std::copy(selected_out.begin(), selected_out.end(), y.data<int64_t>());
  return Status::Ok();
}

}  // namespace osprey::ref
