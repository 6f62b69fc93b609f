// RoiAlign (opsets 10, 16): pools each region of interest of a 4-D NCHW feature map to a
// fixed [output_height, output_width] grid by averaging (or taking the max of) bilinearly
// interpolated samples.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

// One bilinear sample: four pixel offsets and their weights (all zero when outside).
struct Sample {
  int64_t o1 = 0, o2 = 0, o3 = 0, o4 = 0;
  double w1 = 0, w2 = 0, w3 = 0, w4 = 0;
};

Sample make_sample(double y, double x, int64_t h, int64_t w) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= h - 1) {
    y_high = y_low = h - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= w - 1) {
    x_high = x_low = w - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1 - ly, hx = 1 - lx;
  s.o1 = y_low * w + x_low;
  s.o2 = y_low * w + x_high;
  s.o3 = y_high * w + x_low;
  s.o4 = y_high * w + x_high;
  s.w1 = hy * hx;
  s.w2 = hy * lx;
  s.w3 = ly * hx;
  s.w4 = ly * lx;
  return s;
}

template <class T>
Status roi_align_impl(const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch,
                      Tensor& y, bool max_mode, bool half_pixel, int64_t oh, int64_t ow,
                      int64_t sampling_ratio, double scale) {
  const int64_t ch = x.dim(1), h = x.dim(2), w = x.dim(3);
  const T* in = x.data<T>();
  const T* r = rois.data<T>();
  T* out = y.data<T>();
  const double offset = half_pixel ? 0.5 : 0.0;
  std::vector<Sample> samples;
  for (int64_t n = 0; n < rois.dim(0); ++n) {
    auto val = [&](int64_t k) {
      return static_cast<double>(static_cast<compute_t<T>>(r[n * 4 + k]));
    };
    const double x1 = val(0) * scale - offset, y1 = val(1) * scale - offset;
    const double x2 = val(2) * scale - offset, y2 = val(3) * scale - offset;
    if (!std::isfinite(x1) || !std::isfinite(y1) || !std::isfinite(x2) || !std::isfinite(y2))
      return invalid_argument("rois[", n, "] is not finite");
    double roi_w = x2 - x1, roi_h = y2 - y1;
    if (!half_pixel) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / static_cast<double>(oh), bin_w = roi_w / static_cast<double>(ow);
    const double gh_d = sampling_ratio > 0 ? static_cast<double>(sampling_ratio)
                                           : std::ceil(roi_h / static_cast<double>(oh));
    const double gw_d = sampling_ratio > 0 ? static_cast<double>(sampling_ratio)
                                           : std::ceil(roi_w / static_cast<double>(ow));
    // A huge roi against a tiny output would mean an absurd number of samples per bin.
    if (gh_d > 1048576.0 || gw_d > 1048576.0 || gh_d * gw_d > 1048576.0)
      return invalid_argument("rois[", n, "] needs too many samples per bin");
    const int64_t gh = std::max<int64_t>(static_cast<int64_t>(gh_d), 0);
    const int64_t gw = std::max<int64_t>(static_cast<int64_t>(gw_d), 0);
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    // The samples of one bin are shared by all channels.
    const size_t per_bin = static_cast<size_t>(gh * gw);
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw) {
        samples.clear();
        for (int64_t iy = 0; iy < gh; ++iy) {
          const double yy = y1 + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(gh);
          for (int64_t ix = 0; ix < gw; ++ix) {
            const double xx = x1 + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(gw);
            samples.push_back(make_sample(yy, xx, h, w));
          }
        }
        for (int64_t c = 0; c < ch; ++c) {
          const T* img = in + (batch[static_cast<size_t>(n)] * ch + c) * h * w;
          auto px = [&](int64_t o) {
            return static_cast<double>(static_cast<compute_t<T>>(img[o]));
          };
          double acc = max_mode ? -std::numeric_limits<double>::infinity() : 0.0;
          for (const Sample& s : samples) {
            if (max_mode) {
              const double v = std::max(std::max(s.w1 * px(s.o1), s.w2 * px(s.o2)),
                                        std::max(s.w3 * px(s.o3), s.w4 * px(s.o4)));
              acc = std::max(acc, v);
            } else {
              acc += s.w1 * px(s.o1) + s.w2 * px(s.o2) + s.w3 * px(s.o3) + s.w4 * px(s.o4);
            }
          }
          if (max_mode) {
            if (per_bin == 0) acc = 0;
          } else {
            acc /= count;
          }
          out[((n * ch + c) * oh + ph) * ow + pw] = cast_to<T>(acc);
        }
      }
  }
  return Status::Ok();
}

}  // namespace

Status roi_align(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 4, 4));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 2, 2));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 2, 1, 1));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& bi = ctx.input(2);
  if (rois.dim(1) != 4)
    return invalid_argument("rois must have shape [num_rois, 4], got ",
                            shape_to_string(rois.shape()));
  if (!dtype_is_integer(bi.dtype())) return invalid_argument("batch_indices must be integers");
  if (bi.dim(0) != rois.dim(0))
    return invalid_argument("batch_indices has ", bi.dim(0), " entries but there are ", rois.dim(0),
                            " rois");
  std::vector<int64_t> batch = bi.to_int64_vector();
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch[i] < 0 || batch[i] >= x.dim(0))
      return invalid_argument("batch_indices[", i, "] = ", batch[i], " is out of range [0, ",
                              x.dim(0), ")");

  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return invalid_argument("unsupported mode '", mode, "'");
  bool half_pixel = false;  // opset 10 behaves like output_half_pixel
  if (ctx.opset() >= 16) {
    const std::string ctm = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    if (ctm == "half_pixel")
      half_pixel = true;
    else if (ctm != "output_half_pixel")
      return invalid_argument("unsupported coordinate_transformation_mode '", ctm, "'");
  }
  const int64_t oh = ctx.attr_int("output_height", 1), ow = ctx.attr_int("output_width", 1);
  if (oh <= 0 || ow <= 0)
    return invalid_argument("output_height and output_width must be positive");
  const int64_t sampling_ratio = ctx.attr_int("sampling_ratio", 0);
  if (sampling_ratio < 0 || sampling_ratio > 1024)
    return invalid_argument("sampling_ratio ", sampling_ratio, " is out of range");
  const double scale = ctx.attr_float("spatial_scale", 1.0f);
  if (!std::isfinite(scale)) return invalid_argument("spatial_scale must be finite");

  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), {rois.dim(0), x.dim(1), oh, ow}));
  if (y.numel() == 0) return Status::Ok();
  if (x.dim(2) == 0 || x.dim(3) == 0) return invalid_argument("input X has an empty image");
  return dispatch<FloatTypes>(x.dtype(), "RoiAlign", [&]<class T>() {
    return roi_align_impl<T>(x, rois, batch, y, mode == "max", half_pixel, oh, ow, sampling_ratio,
                             scale);
  });
}

}  // namespace osprey::ref
