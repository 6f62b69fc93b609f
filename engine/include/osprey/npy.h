// The numpy .npy file format (versions 1.0, 2.0 and 3.0), for tensors of every osprey::DType
// except kString.
//
// Reading accepts little- and big-endian data (big-endian is byte-swapped to native), C and
// Fortran order (Fortran-order arrays are transposed to C order), and refuses anything it cannot
// represent exactly — structured or object dtypes, strings, complex numbers — with a clear message.
// Truncated or corrupt files, absurd header lengths, ranks and shapes are errors, never crashes.
//
// Writing produces version 1.0 files (2.0 if the header would not fit), C order, little-endian,
// with the header padded so the data starts on a 64-byte boundary, as numpy.save does.
// numpy has no bfloat16 dtype: writing a bfloat16 tensor is refused unless the caller asks for
// it to be converted to float32.
//
// dtype mapping: bool '|b1', int8 '|i1', uint8 '|u1', int16 '<i2', uint16 '<u2', int32 '<i4',
// uint32 '<u4', int64 '<i8', uint64 '<u8', float16 '<f2', float32 '<f4', float64 '<f8'.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "osprey/status.h"
#include "osprey/tensor.h"

namespace osprey {

struct NpyReadOptions {
  // Largest number of elements accepted (0 = no limit). Checked before anything is allocated.
  int64_t max_elements = int64_t{1} << 31;
};

struct NpyWriteOptions {
  // numpy has no bfloat16: when true, bfloat16 tensors are written as float32 ('<f4');
  // when false, writing one is an error.
  bool bfloat16_as_float32 = false;
};

// Header facts of an .npy file, as parsed (before any conversion).
struct NpyHeader {
  int major_version = 0;
  int minor_version = 0;
  std::string descr;         // e.g. "<f4"
  DType dtype = DType::kUndefined;
  bool big_endian = false;   // data must be byte-swapped on a little-endian host
  bool fortran_order = false;
  Shape shape;
  size_t data_offset = 0;    // bytes from the start of the file to the array data
};

// Parses the header at the start of `bytes` (which may hold only the header, or more).
Result<NpyHeader> parse_npy_header(std::string_view bytes);

// Decodes a whole .npy file held in memory.
Result<Tensor> parse_npy(std::string_view bytes, const NpyReadOptions& options = {});
// Reads an .npy file from disk. Errors name the path.
Result<Tensor> read_npy(const std::string& path, const NpyReadOptions& options = {});

// Encodes a tensor as a complete .npy file.
Result<std::string> serialize_npy(const Tensor& tensor, const NpyWriteOptions& options = {});
// Writes an .npy file (replacing any existing file). Errors name the path.
Status write_npy(const std::string& path, const Tensor& tensor, const NpyWriteOptions& options = {});

// The numpy descr string for a dtype ("<f4"), or an error for kString / kBFloat16 / undefined.
Result<std::string> npy_descr(DType dtype);

}  // namespace osprey
