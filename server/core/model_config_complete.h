// Completing a config from the model it describes (as Triton's auto-complete for ONNX): the
// config.pbtxt is optional, and what it declares must agree with the model.
#pragma once

#include <vector>

#include "osprey/session.h"
#include "osprey/status.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

// Fills inputs/outputs from the model's TensorInfo when the config declares none, and checks
// declared ones: every declared tensor must exist in the model with the same data type, rank
// (dims plus the batch dim when max_batch_size > 0) and fixed sizes; every required model
// input must be declared. When max_batch_size > 0 the model's first dim of every input and
// output must be dynamic (or 1 with max_batch_size 1). Errors name the tensor.
Status complete_model_config(const std::vector<TensorInfo>& model_inputs,
                             const std::vector<TensorInfo>& model_outputs,
                             inference::ModelConfig* config);

}  // namespace osprey::server
