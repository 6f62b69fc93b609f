// Geometric stages on 3-channel HWC images.
//
// Bilinear convention (OpenCV INTER_LINEAR, torchvision/PIL-tensor resize with antialias=False):
// pixel centers sit at half-integers, so output pixel x samples the input at
//   sx = (x + 0.5) * in_width / out_width - 0.5,
// clamped to [0, in_width - 1]; the two neighbours floor(sx) and floor(sx) + 1 (clamped to the
// edge) are mixed with weights (1 - f, f), f = sx - floor(sx); rows the same way. No
// antialiasing: a strong downscale samples, it does not average. Values stay float (0..255).
#pragma once

#include "processing/image.h"

namespace osprey::server::processing {

ImageF to_float(const Image8& image);

// Bilinear resize to out_width x out_height (both >= 1).
ImageF resize_bilinear(const ImageF& image, int out_width, int out_height);

// Resize so that the shorter side becomes `shorter` (the longer side scales by the same factor,
// truncated as torchvision does: long * shorter / short), then crop the centered
// crop_width x crop_height window (offset round((size - crop) / 2), half to even as Python's
// round). The resized image must be
// at least the crop size (guaranteed when shorter >= max(crop sides)).
ImageF resize_center_crop(const ImageF& image, int shorter, int crop_width, int crop_height);

// Scale to fit inside width x height keeping the aspect ratio (scale = min(width / w,
// height / h), sides rounded to nearest, at least 1), placed at offset floor((width - w') / 2),
// floor((height - h') / 2) on a canvas filled with `pad` (0..255 units, before normalization).
ImageF letterbox(const ImageF& image, int width, int height, float pad);

}  // namespace osprey::server::processing
