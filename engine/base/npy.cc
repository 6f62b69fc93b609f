// numpy .npy reader/writer. Format reference:
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include "osprey/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <vector>

namespace osprey {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy itself refuses headers over 10000 bytes by default; we allow more but stay bounded so
// a corrupt length field cannot make us allocate gigabytes.
constexpr size_t kMaxHeaderLen = 100000;
constexpr size_t kMaxRank = 64;  // numpy 2's NPY_MAXDIMS
constexpr size_t kAlign = 64;
constexpr bool kHostBigEndian = std::endian::native == std::endian::big;

std::string quoted_snippet(std::string_view s, size_t max = 40) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  if (s.size() > max) out += "...";
  return "'" + out + "'";
}

// A tiny parser for the Python dict literal numpy writes as the header, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  Status parse(NpyHeader* h) {
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    if (!eat('{')) return error("expected '{'");
    while (true) {
      skip_ws();
      if (eat('}')) break;
      std::string key;
      OSPREY_RETURN_IF_ERROR(parse_string(&key));
      skip_ws();
      if (!eat(':')) return error("expected ':' after key '" + key + "'");
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') return invalid_argument("structured numpy dtypes (a list descr) are not supported");
        OSPREY_RETURN_IF_ERROR(parse_string(&h->descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        OSPREY_RETURN_IF_ERROR(parse_bool(&h->fortran_order));
        have_order = true;
      } else if (key == "shape") {
        OSPREY_RETURN_IF_ERROR(parse_shape(&h->shape));
        have_shape = true;
      } else {
        return invalid_argument("unexpected key '", key, "' in .npy header");
      }
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return error("expected ',' or '}'");
    }
    skip_ws();
    if (pos_ != s_.size()) return error("unexpected text after the header dict");
    if (!have_descr || !have_order || !have_shape)
      return invalid_argument(".npy header lacks ", !have_descr ? "'descr'" : !have_order ? "'fortran_order'" : "'shape'");
    return Status::Ok();
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || pos_ >= s_.size()) return false;
    ++pos_;
    return true;
  }
  bool eat_word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  Status error(const std::string& what) const {
    return invalid_argument("corrupt .npy header: ", what, " at offset ", pos_, " in ", quoted_snippet(s_, 80));
  }
  Status parse_string(std::string* out) {
    const char q = peek();
    if (q != '\'' && q != '"') return error("expected a quoted string");
    ++pos_;
    const size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) return error("unterminated string");
    *out = std::string(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return Status::Ok();
  }
  Status parse_bool(bool* out) {
    if (eat_word("True")) {
      *out = true;
    } else if (eat_word("False")) {
      *out = false;
    } else {
      return error("expected True or False for 'fortran_order'");
    }
    return Status::Ok();
  }
  Status parse_int(int64_t* out) {
    if (peek() == '-') return invalid_argument("negative dimension in .npy shape ", quoted_snippet(s_.substr(pos_), 20));
    if (peek() < '0' || peek() > '9') return error("expected a dimension");
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(peek() - '0');
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return invalid_argument("dimension in .npy shape is too large");
      ++pos_;
    }
    eat('L');  // Python 2 long suffix, written by very old numpy
    *out = static_cast<int64_t>(v);
    return Status::Ok();
  }
  Status parse_shape(Shape* shape) {
    shape->clear();
    if (!eat('(')) return error("expected '(' for 'shape'");
    while (true) {
      skip_ws();
      if (eat(')')) break;
      if (shape->size() >= kMaxRank)
        return invalid_argument(".npy shape has more than ", kMaxRank, " dimensions");
      int64_t d = 0;
      OSPREY_RETURN_IF_ERROR(parse_int(&d));
      shape->push_back(d);
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat(')')) break;
      return error("expected ',' or ')' in 'shape'");
    }
    return Status::Ok();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Status parse_descr(const std::string& descr, NpyHeader* h) {
  auto unsupported = [&](const char* what) {
    return unimplemented("unsupported numpy dtype '", descr, "' (", what, ")");
  };
  if (descr.size() < 2) return invalid_argument("invalid numpy dtype '", descr, "'");
  char order = descr[0];
  std::string rest = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '=';  // e.g. 'f4' without a byte-order mark
    rest = descr;
  }
  if (rest.empty()) return invalid_argument("invalid numpy dtype '", descr, "'");
  const char kind = rest[0];
  const std::string size = rest.substr(1);
  DType t = DType::kUndefined;
  switch (kind) {
    case 'b':
    case '?':
      if (size == "1" || (kind == '?' && size.empty())) t = DType::kBool;
      break;
    case 'i':
      if (size == "1") t = DType::kInt8;
      if (size == "2") t = DType::kInt16;
      if (size == "4") t = DType::kInt32;
      if (size == "8") t = DType::kInt64;
      break;
    case 'u':
      if (size == "1") t = DType::kUInt8;
      if (size == "2") t = DType::kUInt16;
      if (size == "4") t = DType::kUInt32;
      if (size == "8") t = DType::kUInt64;
      break;
    case 'f':
      if (size == "2") t = DType::kFloat16;
      if (size == "4") t = DType::kFloat32;
      if (size == "8") t = DType::kFloat64;
      if (size == "16" || size == "12") return unsupported("long double");
      break;
    case 'c': return unsupported("complex");
    case 'U': return unsupported("unicode string");
    case 'S':
    case 'a': return unsupported("byte string");
    case 'O': return unsupported("Python object");
    case 'V': return unsupported("void/structured");
    case 'M':
    case 'm': return unsupported("datetime");
    default: break;
  }
  if (t == DType::kUndefined) return invalid_argument("invalid or unsupported numpy dtype '", descr, "'");
  h->dtype = t;
  h->big_endian = order == '>' || (order == '=' && kHostBigEndian);
  return Status::Ok();
}

uint32_t read_le(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Bytes of array data the header promises, with overflow and limit checks.
Result<size_t> data_bytes(const NpyHeader& h, const NpyReadOptions& options) {
  const int64_t n = shape_numel(h.shape);
  if (n < 0) return resource_exhausted(".npy shape ", shape_to_string(h.shape), " overflows int64 elements");
  if (options.max_elements > 0 && n > options.max_elements)
    return resource_exhausted(".npy shape ", shape_to_string(h.shape), " has ", n, " elements, above the limit of ",
                              options.max_elements);
  const auto esz = static_cast<int64_t>(dtype_size(h.dtype));
  if (n > std::numeric_limits<int64_t>::max() / esz)
    return resource_exhausted(".npy shape ", shape_to_string(h.shape), " is too large");
  return static_cast<size_t>(n * esz);
}

Status check_size(const NpyHeader& h, size_t want, size_t have) {
  if (have < want)
    return invalid_argument("truncated .npy data: ", dtype_name(h.dtype), shape_to_string(h.shape), " needs ", want,
                            " bytes after the header, but only ", have, " are present");
  if (have > want)
    return invalid_argument("corrupt .npy file: ", have - want, " unexpected bytes after the ", dtype_name(h.dtype),
                            shape_to_string(h.shape), " array data");
  return Status::Ok();
}

void byteswap_inplace(void* data, size_t count, size_t esz) {
  auto* p = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < count; ++i, p += esz) std::reverse(p, p + esz);
}

// Copies a Fortran-order (column-major) array into C order.
void fortran_to_c(const unsigned char* src, unsigned char* dst, const Shape& shape, size_t esz) {
  const size_t rank = shape.size();
  const int64_t n = shape_numel(shape);
  std::vector<int64_t> fstride(rank), idx(rank, 0);
  int64_t s = 1;
  for (size_t k = 0; k < rank; ++k) {
    fstride[k] = s;
    s *= shape[k];
  }
  int64_t off = 0;  // source element offset of the current C-order index
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * esz, src + static_cast<size_t>(off) * esz, esz);
    for (size_t k = rank; k-- > 0;) {  // increment the C-order index, last dim fastest
      if (++idx[k] < shape[k]) {
        off += fstride[k];
        break;
      }
      off -= fstride[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
}

// Turns raw file data (already in `t`) into a native, C-order tensor.
Result<Tensor> finish(const NpyHeader& h, Tensor t) {
  const size_t esz = dtype_size(h.dtype);
  if (h.big_endian != kHostBigEndian && esz > 1) byteswap_inplace(t.raw_data(), static_cast<size_t>(t.numel()), esz);
  if (h.dtype == DType::kBool) {
    auto* p = static_cast<unsigned char*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
  }
  if (h.fortran_order && h.shape.size() > 1 && t.numel() > 1) {
    Tensor c(h.dtype, h.shape);
    fortran_to_c(static_cast<const unsigned char*>(t.raw_data()), static_cast<unsigned char*>(c.raw_data()),
                 h.shape, esz);
    return c;
  }
  return t;
}

Result<Tensor> allocate(const NpyHeader& h, const NpyReadOptions& options) {
  auto t = Tensor::create(h.dtype, h.shape, options.max_elements);
  if (!t.ok()) return t.status();
  return t;
}

std::string errno_text() { return std::strerror(errno); }

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

Result<NpyHeader> parse_npy_header(std::string_view bytes) {
  if (bytes.empty()) return invalid_argument("empty file, not an .npy file");
  if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return invalid_argument("not an .npy file (missing the \\x93NUMPY magic; starts with ",
                            quoted_snippet(bytes.substr(0, 8)), ")");
  if (bytes.size() < kMagicLen + 2) return invalid_argument("truncated .npy file: no version bytes");
  NpyHeader h;
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  h.major_version = u[6];
  h.minor_version = u[7];
  if (h.major_version < 1 || h.major_version > 3 || h.minor_version != 0)
    return unimplemented("unsupported .npy format version ", h.major_version, ".", h.minor_version,
                         " (supported: 1.0, 2.0, 3.0)");
  const size_t len_bytes = h.major_version == 1 ? 2 : 4;
  const size_t prefix = kMagicLen + 2 + len_bytes;
  if (bytes.size() < prefix) return invalid_argument("truncated .npy file: incomplete header length");
  const size_t header_len = read_le(u + 8, static_cast<int>(len_bytes));
  if (header_len > kMaxHeaderLen)
    return invalid_argument("corrupt .npy file: header length ", header_len, " exceeds the limit of ", kMaxHeaderLen);
  if (bytes.size() - prefix < header_len)
    return invalid_argument("truncated .npy file: header needs ", header_len, " bytes, only ", bytes.size() - prefix,
                            " present");
  const std::string_view text = bytes.substr(prefix, header_len);
  OSPREY_RETURN_IF_ERROR(HeaderParser(text).parse(&h));
  OSPREY_RETURN_IF_ERROR(parse_descr(h.descr, &h));
  h.data_offset = prefix + header_len;
  return h;
}

Result<Tensor> parse_npy(std::string_view bytes, const NpyReadOptions& options) {
  OSPREY_ASSIGN_OR_RETURN(NpyHeader h, parse_npy_header(bytes));
  OSPREY_ASSIGN_OR_RETURN(size_t want, data_bytes(h, options));
  OSPREY_RETURN_IF_ERROR(check_size(h, want, bytes.size() - h.data_offset));
  OSPREY_ASSIGN_OR_RETURN(Tensor t, allocate(h, options));
  if (want > 0) std::memcpy(t.raw_data(), bytes.data() + h.data_offset, want);
  return finish(h, std::move(t));
}

Result<Tensor> read_npy(const std::string& path, const NpyReadOptions& options) {
  auto fail = [&](const Status& s) -> Result<Tensor> { return s.with_context(path); };
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return fail(not_found("no such file"));
  if (std::filesystem::is_directory(st)) return fail(invalid_argument("is a directory, not an .npy file"));
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) return fail(invalid_argument("cannot open: ", errno_text()));

  // Read the fixed prefix, then the header it announces, then the data straight into the tensor.
  std::string head(12, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), f.get()));
  size_t need = head.size();
  if (head.size() >= 10 && std::memcmp(head.data(), kMagic, kMagicLen) == 0) {
    const auto* u = reinterpret_cast<const unsigned char*>(head.data());
    const bool v1 = u[6] == 1;
    const size_t prefix = v1 ? 10 : 12;
    const size_t header_len = read_le(u + 8, v1 ? 2 : 4);
    if (header_len <= kMaxHeaderLen && head.size() >= prefix) need = prefix + header_len;
  }
  if (need > head.size()) {
    const size_t had = head.size();
    head.resize(need);
    head.resize(had + std::fread(head.data() + had, 1, need - had, f.get()));
  }
  auto h = parse_npy_header(head);
  if (!h.ok()) return fail(h.status());
  auto want = data_bytes(*h, options);
  if (!want.ok()) return fail(want.status());

  size_t have = head.size() - h->data_offset;  // bytes of data already read with the header (normally 0)
  std::error_code size_ec;
  const bool regular = std::filesystem::is_regular_file(st);
  if (regular) {
    const auto file_size = std::filesystem::file_size(path, size_ec);
    if (!size_ec) {
      if (file_size < h->data_offset) return fail(invalid_argument("file shrank while being read"));
      const Status size_ok = check_size(*h, *want, file_size - h->data_offset);
      if (!size_ok.ok()) return fail(size_ok);
    }
  }
  auto t = allocate(*h, options);
  if (!t.ok()) return fail(t.status());
  if (have > *want) return fail(check_size(*h, *want, have));
  auto* dst = static_cast<char*>(t->raw_data());
  if (have > 0) std::memcpy(dst, head.data() + h->data_offset, have);
  const size_t got = *want > have ? std::fread(dst + have, 1, *want - have, f.get()) : 0;
  if (std::ferror(f.get())) return fail(invalid_argument("read error: ", errno_text()));
  have += got;
  if (have < *want) return fail(check_size(*h, *want, have));
  // Anything left after the data is corruption (or a second array we do not read).
  char extra[1];
  if (std::fread(extra, 1, 1, f.get()) == 1) {
    size_t trailing = 1;
    char buf[4096];
    size_t r;
    while ((r = std::fread(buf, 1, sizeof buf, f.get())) > 0) trailing += r;
    return fail(check_size(*h, *want, *want + trailing));
  }
  auto out = finish(*h, std::move(*t));
  if (!out.ok()) return fail(out.status());
  return out;
}

Result<std::string> npy_descr(DType dtype) {
  const char e = kHostBigEndian ? '>' : '<';
  switch (dtype) {
    case DType::kBool: return std::string("|b1");
    case DType::kInt8: return std::string("|i1");
    case DType::kUInt8: return std::string("|u1");
    case DType::kInt16: return std::string(1, e) + "i2";
    case DType::kUInt16: return std::string(1, e) + "u2";
    case DType::kInt32: return std::string(1, e) + "i4";
    case DType::kUInt32: return std::string(1, e) + "u4";
    case DType::kInt64: return std::string(1, e) + "i8";
    case DType::kUInt64: return std::string(1, e) + "u8";
    case DType::kFloat16: return std::string(1, e) + "f2";
    case DType::kFloat32: return std::string(1, e) + "f4";
    case DType::kFloat64: return std::string(1, e) + "f8";
    case DType::kBFloat16:
      return unimplemented("numpy has no bfloat16 dtype; convert the tensor to float32 to write it as .npy");
    case DType::kString: return unimplemented("string tensors cannot be written as .npy");
    case DType::kUndefined: break;
  }
  return invalid_argument("cannot write a tensor of type ", dtype_name(dtype), " as .npy");
}

Result<std::string> serialize_npy(const Tensor& tensor, const NpyWriteOptions& options) {
  if (!tensor.defined()) return invalid_argument("cannot write an undefined tensor as .npy");
  const bool bf16_to_f32 = tensor.dtype() == DType::kBFloat16 && options.bfloat16_as_float32;
  const DType file_type = bf16_to_f32 ? DType::kFloat32 : tensor.dtype();
  OSPREY_ASSIGN_OR_RETURN(std::string descr, npy_descr(file_type));
  for (int64_t d : tensor.shape())
    if (d < 0) return invalid_argument("cannot write a tensor with negative dimension ", shape_to_string(tensor.shape()));

  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    if (i) dict += ", ";
    dict += std::to_string(tensor.shape()[i]);
  }
  if (tensor.shape().size() == 1) dict += ",";
  dict += "), }";
  // Pad with spaces and a final newline so the data starts on a 64-byte boundary.
  size_t prefix = kMagicLen + 2 + 2;
  int major = 1;
  if (dict.size() + 1 + kAlign > 0xffff) {
    prefix = kMagicLen + 2 + 4;
    major = 2;
  }
  const size_t total = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  const size_t esz = dtype_size(file_type);
  const size_t n = static_cast<size_t>(tensor.numel());
  std::string out;
  out.reserve(total + n * esz);
  out.append(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  const auto len = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < prefix - kMagicLen - 2; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += dict;
  if (bf16_to_f32) {
    const auto* src = tensor.data<BFloat16>();
    for (size_t i = 0; i < n; ++i) {
      const float f = src[i];
      out.append(reinterpret_cast<const char*>(&f), sizeof f);
    }
  } else if (tensor.dtype() == DType::kBool) {
    const auto* src = static_cast<const unsigned char*>(tensor.raw_data());
    for (size_t i = 0; i < n; ++i) out += static_cast<char>(src[i] != 0);
  } else if (n > 0) {
    out.append(static_cast<const char*>(tensor.raw_data()), n * esz);
  }
  return out;
}

Status write_npy(const std::string& path, const Tensor& tensor, const NpyWriteOptions& options) {
  auto bytes = serialize_npy(tensor, options);
  if (!bytes.ok()) return bytes.status().with_context(path);
  FilePtr f(std::fopen(path.c_str(), "wb"));
  if (!f) return invalid_argument("cannot create file: ", errno_text()).with_context(path);
  if (std::fwrite(bytes->data(), 1, bytes->size(), f.get()) != bytes->size())
    return invalid_argument("write failed: ", errno_text()).with_context(path);
  if (std::fclose(f.release()) != 0) return invalid_argument("write failed: ", errno_text()).with_context(path);
  return Status::Ok();
}

}  // namespace osprey
