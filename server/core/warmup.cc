#include "core/warmup.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/datatype.h"
#include "core/request_validator.h"
#include "osprey/tensor.h"
#include "processing/bytes_elements.h"

namespace osprey::server {
namespace {

namespace fs = std::filesystem;

template <class T>
void fill_random(std::string* data, std::mt19937* rng, int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  data->resize(static_cast<size_t>(n) * sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    T v = static_cast<T>(dist(*rng));
    std::memcpy(data->data() + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
  }
}

Status random_data(inference::DataType type, int64_t n, std::mt19937* rng, std::string* data) {
  switch (type) {
    case inference::TYPE_FP32: fill_random<float>(data, rng, n, 0, 1); break;
    case inference::TYPE_FP64: fill_random<double>(data, rng, n, 0, 1); break;
    case inference::TYPE_INT8: fill_random<int8_t>(data, rng, n, 0, 100); break;
    case inference::TYPE_UINT8: fill_random<uint8_t>(data, rng, n, 0, 255); break;
    case inference::TYPE_INT16: fill_random<int16_t>(data, rng, n, 0, 100); break;
    case inference::TYPE_UINT16: fill_random<uint16_t>(data, rng, n, 0, 100); break;
    case inference::TYPE_INT32: fill_random<int32_t>(data, rng, n, 0, 100); break;
    case inference::TYPE_UINT32: fill_random<uint32_t>(data, rng, n, 0, 100); break;
    case inference::TYPE_INT64: fill_random<int64_t>(data, rng, n, 0, 100); break;
    case inference::TYPE_UINT64: fill_random<uint64_t>(data, rng, n, 0, 100); break;
    case inference::TYPE_BOOL: fill_random<uint8_t>(data, rng, n, 0, 1.999); break;
    case inference::TYPE_FP16: {
      data->resize(static_cast<size_t>(n) * 2);
      std::uniform_real_distribution<float> dist(0, 1);
      for (int64_t i = 0; i < n; ++i) {
        uint16_t bits = Float16::from_float(dist(*rng));
        std::memcpy(data->data() + i * 2, &bits, 2);
      }
      break;
    }
    case inference::TYPE_BF16: {
      data->resize(static_cast<size_t>(n) * 2);
      std::uniform_real_distribution<float> dist(0, 1);
      for (int64_t i = 0; i < n; ++i) {
        uint16_t bits = BFloat16::from_float(dist(*rng));
        std::memcpy(data->data() + i * 2, &bits, 2);
      }
      break;
    }
    case inference::TYPE_STRING: {
      // Short random strings of digits (so that they also parse as numbers), framed as BYTES.
      data->clear();
      std::uniform_int_distribution<int> digit('0', '9'), length(1, 8);
      for (int64_t i = 0; i < n; ++i) {
        std::string element(static_cast<size_t>(length(*rng)), '0');
        for (char& c : element) c = static_cast<char>(digit(*rng));
        processing::append_bytes_element(element, data);
      }
      break;
    }
    default:
      return invalid_argument("random_data for ", inference::DataType_Name(type), " is not supported");
  }
  return Status::Ok();
}

Result<std::string> read_warmup_file(const std::string& model_dir, const std::string& file,
                                     size_t expected_bytes) {
  fs::path dir = fs::path(model_dir) / "warmup";
  std::error_code ec;
  fs::path path = fs::canonical(dir / file, ec);
  if (ec) return not_found((dir / file).string(), ": ", ec.message());
  fs::path canon_dir = fs::canonical(dir, ec);
  if (ec || path.parent_path() != canon_dir)
    return invalid_argument((dir / file).string(), " resolves outside the warmup directory");
  auto size = fs::file_size(path, ec);
  // BYTES data (expected_bytes 0 = not fixed) is checked by its framing later.
  if (ec || (expected_bytes > 0 && size != expected_bytes))
    return invalid_argument(path.string(), ": ", ec ? 0 : size, " bytes but the input needs ",
                            expected_bytes);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<std::vector<WarmupSample>> build_warmup_samples(const inference::ModelConfig& config,
                                                       const std::string& model_dir,
                                                       int64_t max_tensor_elements) {
  std::vector<WarmupSample> samples;
  std::mt19937 rng(12345);
  for (int i = 0; i < config.model_warmup_size(); ++i) {
    const auto& w = config.model_warmup(i);
    WarmupSample s;
    s.name = w.name().empty() ? str_cat("model_warmup[", i, "]") : w.name();
    s.count = w.count() == 0 ? 1 : static_cast<int>(w.count());
    s.request.model_name = config.name();
    s.request.id = "warmup:" + s.name;
    for (const auto& [name, in] : w.inputs()) {
      std::string what = str_cat("warmup '", s.name, "' input '", name, "'");
      WireTensor t;
      t.name = name;
      t.datatype = wire_datatype(in.data_type());
      if (config.max_batch_size() > 0) t.shape.push_back(w.batch_size());
      t.shape.insert(t.shape.end(), in.dims().begin(), in.dims().end());
      int64_t n = shape_numel(t.shape);
      if (n < 0 || n > max_tensor_elements)
        return invalid_argument(what, ": shape ", shape_to_string(t.shape), " is over the limit of ",
                                max_tensor_elements, " elements");
      size_t bytes = static_cast<size_t>(n * config_datatype_size(in.data_type()));
      using In = inference::ModelWarmup::Input;
      if (in.input_data_type_case() == In::kRandomData) {
        Status st = random_data(in.data_type(), n, &rng, &t.data);
        if (!st.ok()) return st.with_context(what);
      } else if (in.input_data_type_case() == In::kInputDataFile) {
        auto data = read_warmup_file(model_dir, in.input_data_file(), bytes);
        if (!data.ok()) return data.status().with_context(what);
        t.data = std::move(data).value();
      } else if (in.data_type() == inference::TYPE_STRING) {
        t.data.assign(static_cast<size_t>(n) * 4, '\0');  // n empty strings
      } else {
        t.data.assign(bytes, '\0');
      }
      s.request.inputs.push_back(std::move(t));
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

Status run_warmup(LoadedModel& model, const std::string& model_dir, int64_t max_tensor_elements) {
  OSPREY_ASSIGN_OR_RETURN(auto samples,
                          build_warmup_samples(model.config(), model_dir, max_tensor_elements));
  for (const auto& s : samples) {
    auto shape = validate_request(s.request, model.config(), max_tensor_elements);
    if (!shape.ok()) return shape.status().with_context(str_cat("warmup '", s.name, "'"));
    for (int instance = 0; instance < model.instance_count(); ++instance) {
      for (int k = 0; k < s.count; ++k) {
        auto results = model.execute(instance, {&s.request}, nullptr);
        if (results.empty() || !results[0].ok())
          return (results.empty() ? internal_error("no result") : results[0].status())
              .with_context(str_cat("warmup '", s.name, "'"));
      }
    }
  }
  return Status::Ok();
}

}  // namespace osprey::server
