// Signal ops (opset 17; DFT also 20): DFT, STFT, HannWindow, HammingWindow, BlackmanWindow,
// MelWeightMatrix. Transforms are computed in double: radix-2 FFT for power-of-two
// lengths, Bluestein's chirp-z algorithm (on top of the radix-2 FFT) otherwise.
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

using cd = std::complex<double>;

bool is_pow2(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// In-place radix-2 FFT; sign -1 for the forward transform, +1 for the (unscaled) inverse.
void fft_pow2(std::vector<cd>& a, int sign) {
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const double ang = sign * 2 * std::numbers::pi / static_cast<double>(len);
    for (size_t i = 0; i < n; i += len)
      for (size_t k = 0; k < len / 2; ++k) {
        // Twiddles computed directly (not by repeated multiplication) for accuracy.
        const cd w = std::polar(1.0, ang * static_cast<double>(k));
        const cd u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
  }
}

// Unnormalized DFT of any length with exponent sign `sign`.
void dft_any(std::vector<cd>& a, int sign) {
  const size_t n = a.size();
  if (n <= 1) return;
  if (is_pow2(n)) return fft_pow2(a, sign);
  // Bluestein: X_k = w_k * sum_j (x_j w_j) conj(w_{k-j}), with w_k = exp(sign*i*pi*k^2/n).
  std::vector<cd> w(n);
  const uint64_t two_n = 2 * static_cast<uint64_t>(n);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t k2 = (static_cast<uint64_t>(k) * k) % two_n;
    w[k] =
        std::polar(1.0, sign * std::numbers::pi * static_cast<double>(k2) / static_cast<double>(n));
  }
  size_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  std::vector<cd> fa(m), fb(m);
  for (size_t k = 0; k < n; ++k) fa[k] = a[k] * w[k];
  fb[0] = std::conj(w[0]);
  for (size_t k = 1; k < n; ++k) fb[k] = fb[m - k] = std::conj(w[k]);
  fft_pow2(fa, -1);
  fft_pow2(fb, -1);
  for (size_t i = 0; i < m; ++i) fa[i] *= fb[i];
  fft_pow2(fa, +1);
  const double inv_m = 1.0 / static_cast<double>(m);
  for (size_t k = 0; k < n; ++k) a[k] = fa[k] * inv_m * w[k];
}

// Reads an optional scalar integer input; false if absent.
Status read_int_scalar(const KernelContext& ctx, int i, const char* name, bool* present,
                       int64_t* v) {
  *present = false;
  if (!ctx.has_input(i)) return Status::Ok();
  const Tensor& t = ctx.input(i);
  if (!dtype_is_integer(t.dtype()))
    return invalid_argument(name, " must be an integer, got ", dtype_name(t.dtype()));
  if (t.numel() != 1 || t.rank() > 1) return invalid_argument(name, " must be a scalar");
  *v = t.get_as_int64(0);
  *present = true;
  return Status::Ok();
}

template <class T>
double to_d(T v) {
  return static_cast<double>(static_cast<compute_t<T>>(v));
}

}  // namespace

// DFT (opsets 17, 20; 20 takes the axis as input 2, default -2). With inverse and onesided
// the input is a half spectrum (length m along the axis) and the output is real: the inverse
// transform of its Hermitian extension to dft_length (default 2 (m - 1)) points, as numpy's
// irfft (the imaginary parts of the zero and Nyquist bins do not reach the output).
Status dft(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  const int64_t comps = x.dim(rank - 1);
  if (comps != 1 && comps != 2)
    return invalid_argument("the last dimension of input must be 1 (real) or 2 (complex), got ",
                            comps);
  int64_t axis_value = 1;
  if (ctx.opset() >= 20) {
    if (ctx.has_attr("axis")) return invalid_argument("from opset 20 the axis is input 2, not an attribute");
    bool has_axis = false;
    axis_value = -2;
    OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 2, "axis", &has_axis, &axis_value));
    if (!has_axis) axis_value = -2;
  } else {
    axis_value = ctx.attr_int("axis", 1);
  }
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(axis_value, rank, &axis));
  if (axis == rank - 1) return invalid_argument("axis must not be the last (complex) dimension");
  const int64_t onesided = ctx.attr_int("onesided", 0), inverse = ctx.attr_int("inverse", 0);
  if ((onesided != 0 && onesided != 1) || (inverse != 0 && inverse != 1))
    return invalid_argument("onesided and inverse must be 0 or 1");
  const bool real_out = inverse && onesided;
  const int64_t len = x.dim(axis);
  int64_t n = real_out ? 2 * (len - 1) : len;
  bool has_len = false;
  OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 1, "dft_length", &has_len, &n));
  if (!has_len) n = real_out ? 2 * (len - 1) : len;
  if (n <= 0) return invalid_argument("dft_length must be positive, got ", n);
  if (n > ctx.max_elements()) return resource_exhausted("dft_length ", n, " is too large");
  const int64_t out_len = real_out ? n : onesided ? n / 2 + 1 : n;
  const int64_t out_comps = real_out ? 1 : 2;
  // Input bins read: a half spectrum gives bins 0..n/2 (the rest by symmetry).
  const int64_t read = real_out ? std::min(len, n / 2 + 1) : std::min(n, len);
  Shape os = x.shape();
  os[static_cast<size_t>(axis)] = out_len;
  os.back() = out_comps;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), os));
  if (y.numel() == 0) return Status::Ok();
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= x.dim(a);
  for (int64_t a = axis + 1; a < rank - 1; ++a) inner *= x.dim(a);
  const int sign = inverse ? 1 : -1;
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  return dispatch<FloatTypes>(x.dtype(), "DFT", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    std::vector<cd> buf(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        std::fill(buf.begin(), buf.end(), cd(0, 0));
        for (int64_t k = 0; k < read; ++k) {
          const T* p = in + ((o * len + k) * inner + i) * comps;
          buf[static_cast<size_t>(k)] = cd(to_d(p[0]), comps == 2 ? to_d(p[1]) : 0.0);
        }
        if (real_out)
          for (int64_t k = n / 2 + 1; k < n; ++k)
            buf[static_cast<size_t>(k)] = std::conj(buf[static_cast<size_t>(n - k)]);
        dft_any(buf, sign);
        for (int64_t k = 0; k < out_len; ++k) {
          T* q = out + ((o * out_len + k) * inner + i) * out_comps;
          q[0] = cast_to<T>(buf[static_cast<size_t>(k)].real() * scale);
          if (!real_out) q[1] = cast_to<T>(buf[static_cast<size_t>(k)].imag() * scale);
        }
      }
    return Status::Ok();
  });
}

Status stft(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 3));
  const Tensor& x = ctx.input(0);
  const int64_t batch = x.dim(0), sig_len = x.dim(1), comps = x.dim(2);
  if (comps != 1 && comps != 2)
    return invalid_argument("the last dimension of signal must be 1 (real) or 2 (complex), got ",
                            comps);
  bool has_step = false, has_flen = false;
  int64_t step = 0, flen = 0;
  OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 1, "frame_step", &has_step, &step));
  if (!has_step) return invalid_argument("frame_step is required");
  if (step <= 0) return invalid_argument("frame_step must be positive, got ", step);
  OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 3, "frame_length", &has_flen, &flen));
  const bool has_window = ctx.has_input(2);
  if (has_window) {
    const Tensor& w = ctx.input(2);
    if (w.rank() != 1) return invalid_argument("window must be 1-D");
    if (w.dtype() != x.dtype()) return invalid_argument("window must have the signal's type");
    if (has_flen && w.dim(0) != flen)
      return invalid_argument("window length ", w.dim(0), " differs from frame_length ", flen);
    flen = w.dim(0);
    has_flen = true;
  }
  if (!has_flen) return invalid_argument("one of window and frame_length is required");
  if (flen <= 0) return invalid_argument("frame_length must be positive, got ", flen);
  if (flen > sig_len)
    return invalid_argument("frame_length ", flen, " exceeds the signal length ", sig_len);
  const int64_t onesided = ctx.attr_int("onesided", 1);
  if (onesided != 0 && onesided != 1) return invalid_argument("onesided must be 0 or 1");
  const int64_t frames = (sig_len - flen) / step + 1;
  const int64_t bins = onesided ? flen / 2 + 1 : flen;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), {batch, frames, bins, 2}));
  if (y.numel() == 0) return Status::Ok();
  return dispatch<FloatTypes>(x.dtype(), "STFT", [&]<class T>() {
    const T* in = x.data<T>();
    const T* win = has_window ? ctx.input(2).data<T>() : nullptr;
    T* out = y.data<T>();
    std::vector<cd> buf(static_cast<size_t>(flen));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t k = 0; k < flen; ++k) {
          const T* p = in + (b * sig_len + f * step + k) * comps;
          const double wk = win ? to_d(win[k]) : 1.0;
          buf[static_cast<size_t>(k)] = cd(to_d(p[0]) * wk, comps == 2 ? to_d(p[1]) * wk : 0.0);
        }
        dft_any(buf, -1);
        T* q = out + (b * frames + f) * bins * 2;
        for (int64_t k = 0; k < bins; ++k) {
          q[2 * k] = cast_to<T>(buf[static_cast<size_t>(k)].real());
          q[2 * k + 1] = cast_to<T>(buf[static_cast<size_t>(k)].imag());
        }
      }
    return Status::Ok();
  });
}

namespace {

// Output dtype from the output_datatype attribute (default float32).
Status window_output_dtype(const KernelContext& ctx, DType* dt) {
  const int64_t v = ctx.attr_int("output_datatype", 1);
  const DType d = static_cast<DType>(v);
  if (v < 0 || v > 64 || !dtype_is_valid(d) || d == DType::kString || d == DType::kBool)
    return invalid_argument("output_datatype ", v, " is not a numeric element type");
  *dt = d;
  return Status::Ok();
}

// Generalized cosine window: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
Status cosine_window(KernelContext& ctx, double a0, double a1, double a2, const char* op) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 1));
  bool present = false;
  int64_t size = 0;
  OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 0, "size", &present, &size));
  if (size < 0) return invalid_argument("size must be non-negative, got ", size);
  const int64_t periodic = ctx.attr_int("periodic", 1);
  if (periodic != 0 && periodic != 1) return invalid_argument("periodic must be 0 or 1");
  DType dt;
  OSPREY_RETURN_IF_ERROR(window_output_dtype(ctx, &dt));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, {size}));
  const double denom = static_cast<double>(periodic ? size : size - 1);
  return dispatch<NumericTypes>(dt, op, [&]<class T>() {
    T* out = y.data<T>();
    for (int64_t i = 0; i < size; ++i) {
      double v = 1.0;  // a symmetric window of length 1 is [1]
      if (denom > 0) {
        const double t = 2 * std::numbers::pi * static_cast<double>(i) / denom;
        v = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
      }
      out[i] = cast_to<T>(v);
    }
    return Status::Ok();
  });
}

}  // namespace

Status hann_window(KernelContext& ctx) { return cosine_window(ctx, 0.5, 0.5, 0.0, "HannWindow"); }
Status hamming_window(KernelContext& ctx) {
  return cosine_window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0, "HammingWindow");
}
Status blackman_window(KernelContext& ctx) {
  return cosine_window(ctx, 0.42, 0.5, 0.08, "BlackmanWindow");
}

Status mel_weight_matrix(KernelContext& ctx) {
  int64_t num_mel = 0, dft_len = 0, rate = 0;
  bool present = false;
  OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 0, "num_mel_bins", &present, &num_mel));
  if (!present) return invalid_argument("num_mel_bins is required");
  OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 1, "dft_length", &present, &dft_len));
  if (!present) return invalid_argument("dft_length is required");
  OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 2, "sample_rate", &present, &rate));
  if (!present) return invalid_argument("sample_rate is required");
  for (int i = 3; i <= 4; ++i) {
    if (!ctx.has_input(i) || ctx.input(i).numel() != 1 || !dtype_is_float(ctx.input(i).dtype()))
      return invalid_argument(i == 3 ? "lower_edge_hertz" : "upper_edge_hertz",
                              " must be a float scalar");
  }
  const double lower = ctx.input(3).get_as_double(0), upper = ctx.input(4).get_as_double(0);
  if (num_mel <= 0) return invalid_argument("num_mel_bins must be positive, got ", num_mel);
  if (dft_len <= 0) return invalid_argument("dft_length must be positive, got ", dft_len);
  if (rate <= 0) return invalid_argument("sample_rate must be positive, got ", rate);
  if (!std::isfinite(lower) || !std::isfinite(upper) || lower < 0 || upper < lower)
    return invalid_argument("need 0 <= lower_edge_hertz <= upper_edge_hertz");
  if (num_mel > ctx.max_elements()) return resource_exhausted("num_mel_bins is too large");
  DType dt;
  OSPREY_RETURN_IF_ERROR(window_output_dtype(ctx, &dt));
  const int64_t spec_bins = dft_len / 2 + 1;

  // Band edges, equally spaced on the mel scale, mapped to spectrogram bin indices.
  const double low_mel = 2595 * std::log10(1 + lower / 700);
  const double high_mel = 2595 * std::log10(1 + upper / 700);
  const double step = (high_mel - low_mel) / static_cast<double>(num_mel + 2);
  std::vector<int64_t> edge(static_cast<size_t>(num_mel + 2));
  for (int64_t i = 0; i < num_mel + 2; ++i) {
    const double mel = static_cast<double>(i) * step + low_mel;
    const double hz = 700 * (std::pow(10.0, mel / 2595) - 1);
    const double bin =
        std::floor(static_cast<double>(dft_len + 1) * hz / static_cast<double>(rate));
    if (bin < 0 || bin >= static_cast<double>(spec_bins))
      return invalid_argument("upper_edge_hertz ", upper, " maps past the last of ", spec_bins,
                              " spectrogram bins (sample_rate ", rate, ")");
    edge[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, {spec_bins, num_mel}));
  std::vector<double> m(static_cast<size_t>(y.numel()), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    return m[static_cast<size_t>(j * num_mel + i)];
  };
  for (int64_t i = 0; i < num_mel; ++i) {
    const int64_t lo = edge[static_cast<size_t>(i)], center = edge[static_cast<size_t>(i + 1)],
                  hi = edge[static_cast<size_t>(i + 2)];
    if (center == lo) {
      at(center, i) = 1;
    } else {
      for (int64_t j = lo; j <= center; ++j)
        at(j, i) = static_cast<double>(j - lo) / static_cast<double>(center - lo);
    }
    for (int64_t j = center; j < hi; ++j)
      at(j, i) = static_cast<double>(hi - j) / static_cast<double>(hi - center);
  }
  return dispatch<NumericTypes>(dt, "MelWeightMatrix", [&]<class T>() {
    T* out = y.data<T>();
    for (size_t k = 0; k < m.size(); ++k) out[k] = cast_to<T>(m[k]);
    return Status::Ok();
  });
}

}  // namespace osprey::ref
