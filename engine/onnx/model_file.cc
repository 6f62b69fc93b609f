// Imports a model straight from its file. The file is walked once at the wire level: every
// field is copied into a (small) serialized model except the raw_data of the main graph's
// initializers, whose place in the file is noted instead; that model is parsed, and each
// initializer's bytes are then read from the file straight into its tensor. So the weights are
// read once and held once: never as file bytes, proto strings and tensors at the same time.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>

#include "onnx/onnx_internal.h"

namespace osprey::onnx_import {

namespace {
// Read buffer for the fields that are copied (the weights are skipped by seeking).
constexpr int kReadBlockBytes = 256 << 10;
// protobuf's limit on a serialized message (positions are int); larger models must keep their
// weights in external data files.
constexpr int64_t kMaxModelFileBytes = INT32_MAX;

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

// Field numbers from onnx.proto.
constexpr int kModelGraph = 7;        // ModelProto.graph
constexpr int kGraphInitializer = 5;  // GraphProto.initializer
constexpr int kTensorRawData = 9;     // TensorProto.raw_data

bool is_field(uint32_t tag, int number) {
  return WireFormatLite::GetTagFieldNumber(tag) == number &&
         WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// Reads a length-delimited field's length and limits `in` to it.
bool enter(CodedInputStream& in, CodedInputStream::Limit* limit) {
  uint32_t len = 0;
  if (!in.ReadVarint32(&len) || len > static_cast<uint32_t>(in.BytesUntilTotalBytesLimit()))
    return false;
  *limit = in.PushLimit(static_cast<int>(len));
  return true;
}

// Whether a loop over a message's fields (ReadTag() == 0) ended at the message's end, not at a
// bad tag: the top-level message ends with the file, a nested one exactly at its limit (not at
// the end of a truncated file).
bool ended_at_file_end(CodedInputStream& in) {
  return in.ConsumedEntireMessage();
}
bool ended_at_limit(CodedInputStream& in) {
  return in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
}

void write_field(CodedOutputStream& out, int number, const std::string& bytes) {
  out.WriteTag(WireFormatLite::MakeTag(number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
  out.WriteVarint32(static_cast<uint32_t>(bytes.size()));
  out.WriteString(bytes);
}

// One initializer: every field but raw_data into *tensor; raw_data's place into *raw.
bool split_tensor(CodedInputStream& in, const ModelFile& file, std::string* tensor,
                  std::optional<RawDataInFile>* raw) {
  StringOutputStream stream(tensor);
  CodedOutputStream out(&stream);
  while (const uint32_t tag = in.ReadTag()) {
    if (is_field(tag, kTensorRawData)) {
      uint32_t len = 0;
      if (!in.ReadVarint32(&len) || len > static_cast<uint32_t>(in.BytesUntilLimit())) return false;
      // Skipping may seek past the end of the file without failing: check against its size.
      const int64_t at = in.CurrentPosition();
      if (at + static_cast<int64_t>(len) > file.size()) return false;
      *raw = RawDataInFile{file.fd(), at, static_cast<int64_t>(len)};  // the last one wins
      if (!in.Skip(static_cast<int>(len))) return false;
    } else if (!WireFormatLite::SkipField(&in, tag, &out)) {
      return false;
    }
  }
  return ended_at_limit(in);
}

// The main graph: its fields, then its initializers without their raw_data.
bool split_graph(CodedInputStream& in, const ModelFile& file, std::string* graph,
                 std::vector<std::optional<RawDataInFile>>* raw) {
  std::string inits;
  {
    StringOutputStream graph_stream(graph), inits_stream(&inits);
    CodedOutputStream graph_out(&graph_stream), inits_out(&inits_stream);
    while (const uint32_t tag = in.ReadTag()) {
      if (is_field(tag, kGraphInitializer)) {
        CodedInputStream::Limit limit;
        if (!enter(in, &limit)) return false;
        std::string tensor;
        std::optional<RawDataInFile> r;
        if (!split_tensor(in, file, &tensor, &r)) return false;
        in.PopLimit(limit);
        write_field(inits_out, kGraphInitializer, tensor);
        raw->push_back(r);
      } else if (!WireFormatLite::SkipField(&in, tag, &graph_out)) {
        return false;
      }
    }
    if (!ended_at_limit(in)) return false;
  }
  graph->append(inits);  // a repeated field keeps its order; the fields' interleaving is free
  return true;
}

bool split_model(CodedInputStream& in, const ModelFile& file, std::string* model,
                 std::vector<std::optional<RawDataInFile>>* raw) {
  StringOutputStream stream(model);
  CodedOutputStream out(&stream);
  while (const uint32_t tag = in.ReadTag()) {
    if (is_field(tag, kModelGraph)) {  // a repeated occurrence merges, as protobuf does
      CodedInputStream::Limit limit;
      if (!enter(in, &limit)) return false;
      std::string graph;
      if (!split_graph(in, file, &graph, raw)) return false;
      in.PopLimit(limit);
      write_field(out, kModelGraph, graph);
    } else if (!WireFormatLite::SkipField(&in, tag, &out)) {
      return false;
    }
  }
  return ended_at_file_end(in);
}

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
  if (::fstat(f.fd_, &st) != 0)
    return invalid_argument("error reading ", path, ": ", std::strerror(errno));
  f.size_ = static_cast<int64_t>(st.st_size);
  return f;
}

Result<ImportedModel> import_model_file(ModelFile& file, const std::string& model_dir,
                                        const SessionOptions& options) {
  if (file.size() == 0) return invalid_argument("model is empty (0 bytes)");
  if (file.size() > kMaxModelFileBytes)
    return invalid_argument("model file has ", file.size(), " bytes, above protobuf's limit of ",
                            kMaxModelFileBytes, " bytes; store the weights as external data");
  if (::lseek(file.fd(), 0, SEEK_SET) != 0)
    return invalid_argument("error reading ", file.path(), ": ", std::strerror(errno));
  std::string model_bytes;
  std::vector<std::optional<RawDataInFile>> raw;
  {
    google::protobuf::io::FileInputStream stream(file.fd(), kReadBlockBytes);
    CodedInputStream in(&stream);
    const bool split = split_model(in, file, &model_bytes, &raw);
    if (stream.GetErrno() != 0)
      return invalid_argument("error reading ", file.path(), ": ",
                              std::strerror(stream.GetErrno()));
    if (!split)
      return invalid_argument("model is not a valid ONNX protobuf (truncated or corrupt?)");
  }
  onnx::ModelProto m;
  if (!m.ParseFromString(model_bytes))
    return invalid_argument("model is not a valid ONNX protobuf (truncated or corrupt?)");
  std::string().swap(model_bytes);
  return import_model_proto(m, model_dir, options, &raw);
}

}  // namespace osprey::onnx_import
