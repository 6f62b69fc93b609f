#include "core/processing_model.h"

#include <algorithm>
#include <chrono>
#include <variant>

#include "core/datatype.h"
#include "osprey/tensor.h"
#include "processing/bytes_elements.h"
#include "processing/classification.h"
#include "processing/image_preprocess.h"

namespace osprey::server {
namespace {

using processing::ImagePreprocessSpec;

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// The "classification" K a request asks of `output`, 0 when none.
Result<int64_t> classification_count(const InferRequest& r, const std::string& output) {
  for (const auto& o : r.outputs) {
    if (o.name != output) continue;
    auto it = o.parameters.find("classification");
    if (it == o.parameters.end()) return 0;
    const auto* k = std::get_if<int64_t>(&it->second);
    if (!k || *k < 1)
      return invalid_argument("output '", output,
                              "': parameter 'classification' must be a positive integer");
    return *k;
  }
  return 0;
}

class ProcessingModel : public LoadedModel {
 public:
  ProcessingModel(std::unique_ptr<LoadedModel> inner, inference::ModelConfig config,
                  ProcessingStages stages)
      : inner_(std::move(inner)), config_(std::move(config)), stages_(std::move(stages)) {}

  const inference::ModelConfig& config() const override { return config_; }
  int instance_count() const override { return inner_->instance_count(); }

  std::vector<Result<InferResponse>> execute(int instance,
                                             const std::vector<const InferRequest*>& batch,
                                             BatchTiming* timing) override {
    std::vector<Status> failed(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) failed[i] = check_classification(*batch[i]);
    // Stage 1: images -> FP32 model input, per request (a bad image fails its request only).
    const uint64_t t0 = now_ns();
    std::vector<InferRequest> rewritten;
    std::vector<size_t> runnable;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!failed[i].ok()) continue;
      if (stages_.image) {
        auto r = preprocess(*batch[i]);
        if (!r.ok()) {
          failed[i] = r.status();
          continue;
        }
        rewritten.push_back(std::move(r).value());
      }
      runnable.push_back(i);
    }
    const uint64_t preprocess_ns = now_ns() - t0;
    std::vector<const InferRequest*> inner_batch;
    for (size_t j = 0; j < runnable.size(); ++j)
      inner_batch.push_back(stages_.image ? &rewritten[j] : batch[runnable[j]]);
    BatchTiming inner_timing;
    std::vector<Result<InferResponse>> inner_results;
    if (!inner_batch.empty()) inner_results = inner_->execute(instance, inner_batch, &inner_timing);
    // Stage 2: classification of the requested outputs.
    const uint64_t t1 = now_ns();
    bool classified = false;
    std::vector<std::optional<InferResponse>> answers(batch.size());
    for (size_t j = 0; j < runnable.size(); ++j) {
      const size_t i = runnable[j];
      if (j >= inner_results.size()) {
        failed[i] = internal_error("the backend gave no result");
        continue;
      }
      if (!inner_results[j].ok()) {
        failed[i] = inner_results[j].status();
        continue;
      }
      answers[i] = std::move(inner_results[j]).value();
      failed[i] = classify(*batch[i], &*answers[i], &classified);
    }
    const uint64_t postprocess_ns = now_ns() - t1;
    if (timing) {
      *timing = inner_timing;
      if (stages_.image) {
        timing->preprocess_ns = preprocess_ns;
        timing->compute_input_ns += preprocess_ns;
      }
      if (classified) {
        timing->postprocess_ns = postprocess_ns;
        timing->compute_output_ns += postprocess_ns;
      }
    }
    std::vector<Result<InferResponse>> results;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (failed[i].ok() && answers[i])
        results.emplace_back(std::move(*answers[i]));
      else
        results.emplace_back(failed[i].ok() ? internal_error("no answer") : failed[i]);
    }
    return results;
  }

 private:
  static Status check_classification(const InferRequest& r) {
    for (const auto& o : r.outputs)
      OSPREY_RETURN_IF_ERROR(classification_count(r, o.name).status());
    return Status::Ok();
  }

  Result<InferRequest> preprocess(const InferRequest& r) const {
    const ImagePreprocessSpec& spec = *stages_.image;
    InferRequest out;
    out.model_name = r.model_name;
    out.model_version = r.model_version;
    out.id = r.id;
    out.parameters = r.parameters;
    out.outputs = r.outputs;
    for (const auto& t : r.inputs) {
      if (t.name != spec.bytes_input) {
        out.inputs.push_back(t);
        continue;
      }
      const std::string what = str_cat("input '", t.name, "'");
      const int64_t count = shape_numel(t.shape);
      auto elements = processing::split_bytes_elements(t.data, count);
      if (!elements.ok()) return elements.status().with_context(what);
      WireTensor image;
      image.name = spec.model_input;
      image.datatype = "FP32";
      if (config_.max_batch_size() > 0) image.shape.push_back(count);
      for (int64_t d : spec.model_dims()) image.shape.push_back(d);
      const int64_t per_image = spec.elements_per_image();
      image.data.resize(static_cast<size_t>(count * per_image) * sizeof(float));
      auto* dst = reinterpret_cast<float*>(image.data.data());
      for (int64_t i = 0; i < count; ++i) {
        Status st = processing::preprocess_image((*elements)[static_cast<size_t>(i)], spec,
                                                 dst + i * per_image);
        if (!st.ok()) return invalid_argument(what, " image ", i, ": ", st.message());
      }
      out.inputs.push_back(std::move(image));
    }
    return out;
  }

  Status classify(const InferRequest& r, InferResponse* response, bool* classified) const {
    for (auto& t : response->outputs) {
      OSPREY_ASSIGN_OR_RETURN(int64_t k, classification_count(r, t.name));
      if (k == 0) continue;
      *classified = true;
      const std::string what = str_cat("output '", t.name, "'");
      if (t.datatype != "FP32")
        return invalid_argument(what, ": classification needs an FP32 output, not ", t.datatype);
      const bool batching = config_.max_batch_size() > 0;
      const int64_t items = batching && !t.shape.empty() ? t.shape[0] : 1;
      const int64_t numel = static_cast<int64_t>(t.data.size() / sizeof(float));
      if (items <= 0 || numel % items != 0)
        return internal_error(what, ": ", numel, " scores do not split into ", items, " items");
      const int64_t classes = numel / items;
      const auto* scores = reinterpret_cast<const float*>(t.data.data());
      auto labels_it = stages_.labels.find(t.name);
      static const std::vector<std::string> kNoLabels;
      const auto& labels = labels_it == stages_.labels.end() ? kNoLabels : labels_it->second;
      const int64_t kept = std::min(k, classes);
      std::string data;
      for (int64_t b = 0; b < items; ++b) {
        std::vector<float> row(scores + b * classes, scores + (b + 1) * classes);
        if (stages_.softmax) processing::softmax(&row);
        for (const auto& s : processing::top_k_classes(row, kept, labels))
          processing::append_bytes_element(s, &data);
      }
      t.datatype = "BYTES";
      t.shape = batching ? std::vector<int64_t>{items, kept} : std::vector<int64_t>{kept};
      t.data = std::move(data);
    }
    return Status::Ok();
  }

  std::unique_ptr<LoadedModel> inner_;
  inference::ModelConfig config_;
  ProcessingStages stages_;
};

}  // namespace

Result<ProcessingStages> ProcessingStages::from(const VersionSource& source) {
  ProcessingStages s;
  OSPREY_ASSIGN_OR_RETURN(s.image, processing::parse_image_preprocess(source.config));
  OSPREY_ASSIGN_OR_RETURN(s.softmax, processing::parse_classification_softmax(source.config));
  for (const auto& out : source.config.output()) {
    if (out.label_filename().empty()) continue;
    auto labels = processing::load_labels(source.model_dir, out.label_filename());
    if (!labels.ok()) return labels.status().with_context(str_cat("output '", out.name(), "'"));
    s.labels[out.name()] = std::move(labels).value();
  }
  return s;
}

inference::ModelConfig backend_config(const inference::ModelConfig& declared,
                                      const ProcessingStages& stages) {
  if (!stages.image) return declared;
  inference::ModelConfig c = declared;
  for (auto& in : *c.mutable_input()) {
    if (in.name() != stages.image->bytes_input) continue;
    inference::ModelInput fp32;
    fp32.set_name(stages.image->model_input);
    fp32.set_data_type(inference::TYPE_FP32);
    for (int64_t d : stages.image->model_dims()) fp32.add_dims(d);
    in = std::move(fp32);
  }
  return c;
}

Result<std::unique_ptr<LoadedModel>> wrap_with_processing(std::unique_ptr<LoadedModel> inner,
                                                          const inference::ModelConfig& declared,
                                                          ProcessingStages stages,
                                                          int64_t max_tensor_elements) {
  inference::ModelConfig config = inner->config();
  if (stages.image) {
    const ImagePreprocessSpec& spec = *stages.image;
    const inference::ModelInput* bytes_decl = nullptr;
    for (const auto& in : declared.input())
      if (in.name() == spec.bytes_input) bytes_decl = &in;
    bool replaced = false;
    for (auto& in : *config.mutable_input()) {
      if (in.name() != spec.model_input) continue;
      const std::string what = str_cat("parameter 'image_input' = '", spec.model_input, "'");
      if (in.data_type() != inference::TYPE_FP32)
        return invalid_argument(what, ": the model input is ",
                                inference::DataType_Name(in.data_type()),
                                ", the image stage feeds TYPE_FP32");
      if (bytes_decl) in = *bytes_decl;
      replaced = true;
    }
    if (!replaced || !bytes_decl)
      return invalid_argument("parameter 'image_input' = '", spec.model_input,
                              "': the model has no such input");
    const int64_t items = std::max<int64_t>(1, config.max_batch_size());
    if (spec.elements_per_image() * items > max_tensor_elements)
      return invalid_argument("parameter 'size': ", items, " images of ", spec.elements_per_image(),
                              " elements are over the limit of ", max_tensor_elements, " elements");
  }
  for (const auto& [name, labels] : stages.labels) {
    (void)labels;
    bool found = false;
    for (const auto& out : config.output()) found = found || out.name() == name;
    if (!found)
      return invalid_argument("output '", name,
                              "' with label_filename: the model has no such output");
  }
  return std::unique_ptr<LoadedModel>(
      new ProcessingModel(std::move(inner), std::move(config), std::move(stages)));
}

}  // namespace osprey::server
