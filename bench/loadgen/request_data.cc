#include "request_data.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstring>
#include <random>

#include "osprey/npy.h"

namespace osprey::loadgen {
namespace {

constexpr int64_t kMaxTensorBytes = int64_t{1} << 30;

const char* npy_dtype_for(const std::string& datatype) {
  static const std::pair<const char*, const char*> kMap[] = {
      {"FP32", "float32"}, {"FP64", "float64"}, {"FP16", "float16"}, {"INT8", "int8"},
      {"INT16", "int16"},  {"INT32", "int32"},  {"INT64", "int64"},   {"UINT8", "uint8"},
      {"UINT16", "uint16"}, {"UINT32", "uint32"}, {"UINT64", "uint64"}, {"BOOL", "bool"}};
  for (const auto& [k, v] : kMap)
    if (datatype == k) return v;
  return nullptr;
}

template <class T, class Dist>
void fill(std::string* bytes, std::mt19937_64* rng, Dist dist) {
  const size_t n = bytes->size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    const T v = static_cast<T>(dist(*rng));
    std::memcpy(bytes->data() + i * sizeof(T), &v, sizeof(T));
  }
}

void fill_random(InputTensor* t, std::mt19937_64* rng) {
  const std::string& d = t->datatype;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 100);
  if (d == "FP32") fill<float>(&t->bytes, rng, unit);
  else if (d == "FP64") fill<double>(&t->bytes, rng, unit);
  else if (d == "INT32") fill<int32_t>(&t->bytes, rng, small);
  else if (d == "INT64") fill<int64_t>(&t->bytes, rng, small);
  else if (d == "BOOL") fill<uint8_t>(&t->bytes, rng, std::uniform_int_distribution<int>(0, 1));
  else if (d == "FP16" || d == "BF16") fill<uint16_t>(&t->bytes, rng, [](auto&) { return 0x3800; });
  else fill<uint8_t>(&t->bytes, rng, std::uniform_int_distribution<int>(0, 100));
}

Status load_npy(const std::string& dir, InputTensor* t) {
  const std::string path = dir + "/" + t->name + ".npy";
  OSPREY_ASSIGN_OR_RETURN(Tensor tensor, read_npy(path));
  const char* want = npy_dtype_for(t->datatype);
  if (want == nullptr || std::string(dtype_name(tensor.dtype())) != want)
    return invalid_argument(path, ": dtype ", dtype_name(tensor.dtype()), " but input '", t->name,
                            "' is ", t->datatype);
  const auto& dims = tensor.shape();
  if (std::vector<int64_t>(dims.begin(), dims.end()) != t->shape)
    return invalid_argument(path, ": shape does not match the request shape of '", t->name,
                            "' (give --shape to change it)");
  if (tensor.nbytes() != t->bytes.size())
    return invalid_argument(path, ": holds ", tensor.nbytes(), " bytes, expected ", t->bytes.size());
  std::memcpy(t->bytes.data(), tensor.raw_data(), t->bytes.size());
  return Status();
}

}  // namespace

InputSource parse_input_source(const std::string& text, uint64_t seed) {
  if (text == "random") return {InputKind::kRandom, "", seed};
  if (text == "zero") return {InputKind::kZero, "", seed};
  return {InputKind::kDirectory, text, seed};
}

Result<std::vector<InputTensor>> make_inputs(const ModelInfo& model,
                                             const std::vector<std::vector<int64_t>>& shapes,
                                             const InputSource& source) {
  std::mt19937_64 rng(source.seed);
  std::vector<InputTensor> out;
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const TensorSpec& spec = model.inputs[i];
    const size_t elem = datatype_size(spec.datatype);
    if (elem == 0)
      return unimplemented("input '", spec.name, "': datatype ", spec.datatype,
                           " is not supported by osprey perf");
    int64_t count = 1;
    for (int64_t d : shapes[i]) {
      count *= d;
      if (count * static_cast<int64_t>(elem) > kMaxTensorBytes)
        return resource_exhausted("input '", spec.name, "' exceeds the 1 GiB limit per tensor");
    }
    InputTensor t{spec.name, spec.datatype, shapes[i], std::string(count * elem, '\0')};
    if (source.kind == InputKind::kRandom) fill_random(&t, &rng);
    if (source.kind == InputKind::kDirectory) OSPREY_RETURN_IF_ERROR(load_npy(source.directory, &t));
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void write_tensor_head(JsonWriter& w, const InputTensor& t) {
  w.Key("name");
  w.String(t.name.c_str());
  w.Key("datatype");
  w.String(t.datatype.c_str());
  w.Key("shape");
  w.StartArray();
  for (int64_t d : t.shape) w.Int64(d);
  w.EndArray();
}

template <class T>
T load(const std::string& bytes, size_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

Status write_data(JsonWriter& w, const InputTensor& t) {
  const std::string& d = t.datatype;
  const size_t n = t.bytes.size() / datatype_size(d);
  w.Key("data");
  w.StartArray();
  for (size_t i = 0; i < n; ++i) {
    if (d == "FP32") w.Double(load<float>(t.bytes, i));
    else if (d == "FP64") w.Double(load<double>(t.bytes, i));
    else if (d == "INT8") w.Int(load<int8_t>(t.bytes, i));
    else if (d == "INT16") w.Int(load<int16_t>(t.bytes, i));
    else if (d == "INT32") w.Int(load<int32_t>(t.bytes, i));
    else if (d == "INT64") w.Int64(load<int64_t>(t.bytes, i));
    else if (d == "UINT8") w.Uint(load<uint8_t>(t.bytes, i));
    else if (d == "UINT16") w.Uint(load<uint16_t>(t.bytes, i));
    else if (d == "UINT32") w.Uint(load<uint32_t>(t.bytes, i));
    else if (d == "UINT64") w.Uint64(load<uint64_t>(t.bytes, i));
    else if (d == "BOOL") w.Bool(load<uint8_t>(t.bytes, i) != 0);
    else return unimplemented("--http-json: datatype ", d, " of '", t.name, "' has no JSON form here");
  }
  w.EndArray();
  return Status();
}

}  // namespace

HttpBody encode_binary_body(const std::vector<InputTensor>& inputs) {
  rapidjson::StringBuffer b;
  JsonWriter w(b);
  w.StartObject();
  w.Key("inputs");
  w.StartArray();
  for (const InputTensor& t : inputs) {
    w.StartObject();
    write_tensor_head(w, t);
    w.Key("parameters");
    w.StartObject();
    w.Key("binary_data_size");
    w.Uint64(t.bytes.size());
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("parameters");
  w.StartObject();
  w.Key("binary_data_output");
  w.Bool(true);
  w.EndObject();
  w.EndObject();
  HttpBody body{std::string(b.GetString(), b.GetSize()), b.GetSize()};
  for (const InputTensor& t : inputs) body.body += t.bytes;
  return body;
}

Result<HttpBody> encode_json_body(const std::vector<InputTensor>& inputs) {
  rapidjson::StringBuffer b;
  JsonWriter w(b);
  w.StartObject();
  w.Key("inputs");
  w.StartArray();
  for (const InputTensor& t : inputs) {
    w.StartObject();
    write_tensor_head(w, t);
    OSPREY_RETURN_IF_ERROR(write_data(w, t));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return HttpBody{std::string(b.GetString(), b.GetSize()), 0};
}

}  // namespace osprey::loadgen
