// Pre- and post-processing around a loaded model, run in the serving version's worker threads
// (inside LoadedModel::execute, never on a front end's I/O threads):
//  - the image stage (processing/preprocess_config.h): the config's TYPE_STRING input carries
//    encoded JPEG/PNG images, decoded and normalized into the model's FP32 input;
//  - classification (processing/classification.h): a requested output with the parameter
//    "classification": K comes back as a BYTES tensor of K strings per batch item
//    ("<score>:<index>[:<label>]", labels from the output's label_filename), optionally after
//    a softmax ("classification_softmax").
// Timing: BatchTiming::preprocess_ns / postprocess_ns are set when a stage ran, and are also
// counted in compute_input_ns / compute_output_ns (Triton's statistics fields).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "processing/preprocess_config.h"

namespace osprey::server {

struct ProcessingStages {
  std::optional<processing::ImagePreprocessSpec> image;
  bool softmax = false;
  std::map<std::string, std::vector<std::string>> labels;  // output name -> labels

  // Parses and checks the stages `source.config` declares (labels read from the model dir).
  static Result<ProcessingStages> from(const VersionSource& source);
};

// The config the backend loads: with an image stage, the TYPE_STRING input is replaced by the
// model's FP32 input (dims from the stage's size and layout); otherwise unchanged.
inference::ModelConfig backend_config(const inference::ModelConfig& declared,
                                      const ProcessingStages& stages);

// Wraps `inner` (loaded from backend_config(declared, stages)). The wrapper's config() shows
// clients the declared TYPE_STRING input in place of the model's FP32 one. Checks that the
// model input matches the stage and fits `max_tensor_elements` at the largest batch.
Result<std::unique_ptr<LoadedModel>> wrap_with_processing(std::unique_ptr<LoadedModel> inner,
                                                          const inference::ModelConfig& declared,
                                                          ProcessingStages stages,
                                                          int64_t max_tensor_elements);

}  // namespace osprey::server
