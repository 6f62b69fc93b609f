// Imports a model straight from its file: protobuf reads the file through a small buffer, so
// the serialized model is never held in memory next to the parsed one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "onnx/onnx_internal.h"

namespace osprey::onnx_import {

namespace {
// Large enough that a weight of hundreds of MB costs few read() calls, small enough to stay
// in cache while protobuf copies it out.
constexpr int kReadBlockBytes = 256 << 10;
}  // namespace

ModelFile::ModelFile(ModelFile&& o) noexcept
    : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)), size_(o.size_) {}

ModelFile& ModelFile::operator=(ModelFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = o.size_;
  }
  return *this;
}

ModelFile::~ModelFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<ModelFile> ModelFile::open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return not_found("file not found or not a regular file: ", path);
  ModelFile f;
  f.path_ = path;
  f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd_ < 0) return not_found("cannot open ", path);
  struct stat st {};
  if (::fstat(f.fd_, &st) != 0) return invalid_argument("error reading ", path, ": ", std::strerror(errno));
  f.size_ = static_cast<int64_t>(st.st_size);
  return f;
}

Result<ImportedModel> import_model_file(ModelFile& file, const std::string& model_dir,
                                        const SessionOptions& options) {
  if (file.size() == 0) return invalid_argument("model is empty (0 bytes)");
  if (::lseek(file.fd(), 0, SEEK_SET) != 0)
    return invalid_argument("error reading ", file.path(), ": ", std::strerror(errno));
  onnx::ModelProto m;
  {
    google::protobuf::io::FileInputStream in(file.fd(), kReadBlockBytes);
    if (!m.ParseFromZeroCopyStream(&in)) {
      if (in.GetErrno() != 0)
        return invalid_argument("error reading ", file.path(), ": ", std::strerror(in.GetErrno()));
      return invalid_argument("model is not a valid ONNX protobuf (truncated or corrupt?)");
    }
  }
  return import_model_proto(m, model_dir, options);
}

}  // namespace osprey::onnx_import
