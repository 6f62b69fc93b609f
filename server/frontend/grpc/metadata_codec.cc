#include "frontend/grpc/metadata_codec.h"

namespace osprey::server::grpc_frontend {
namespace {

void encode_tensor(const TensorMetadata& in,
                   inference::ModelMetadataResponse::TensorMetadata* out) {
  out->set_name(in.name);
  out->set_datatype(in.datatype);
  out->mutable_shape()->Add(in.shape.begin(), in.shape.end());
}

void encode_duration(const StatDuration& in, inference::StatisticDuration* out) {
  out->set_count(in.count);
  out->set_ns(in.ns);
}

}  // namespace

void encode_server_metadata(const ServerMetadata& in, inference::ServerMetadataResponse* out) {
  out->set_name(in.name);
  out->set_version(in.version);
  for (const std::string& e : in.extensions) out->add_extensions(e);
}

void encode_model_metadata(const ModelMetadata& in, inference::ModelMetadataResponse* out) {
  out->set_name(in.name);
  for (const std::string& v : in.versions) out->add_versions(v);
  out->set_platform(in.platform);
  for (const TensorMetadata& t : in.inputs) encode_tensor(t, out->add_inputs());
  for (const TensorMetadata& t : in.outputs) encode_tensor(t, out->add_outputs());
}

void encode_statistics(const std::vector<ModelStats>& in, inference::ModelStatisticsResponse* out) {
  for (const ModelStats& m : in) {
    inference::ModelStatistics* s = out->add_model_stats();
    s->set_name(m.name);
    s->set_version(m.version);
    s->set_last_inference(m.last_inference_ms);
    s->set_inference_count(m.inference_count);
    s->set_execution_count(m.execution_count);
    const InferStats& is = m.inference_stats;
    inference::InferStatistics* os = s->mutable_inference_stats();
    encode_duration(is.success, os->mutable_success());
    encode_duration(is.fail, os->mutable_fail());
    encode_duration(is.queue, os->mutable_queue());
    encode_duration(is.compute_input, os->mutable_compute_input());
    encode_duration(is.compute_infer, os->mutable_compute_infer());
    encode_duration(is.compute_output, os->mutable_compute_output());
    for (const BatchStats& b : m.batch_stats) {
      inference::InferBatchStatistics* ob = s->add_batch_stats();
      ob->set_batch_size(b.batch_size);
      encode_duration(b.compute_input, ob->mutable_compute_input());
      encode_duration(b.compute_infer, ob->mutable_compute_infer());
      encode_duration(b.compute_output, ob->mutable_compute_output());
    }
  }
}

void encode_repository_index(const std::vector<RepositoryEntry>& in,
                             inference::RepositoryIndexResponse* out) {
  for (const RepositoryEntry& e : in) {
    auto* m = out->add_models();
    m->set_name(e.name);
    m->set_version(e.version);
    m->set_state(e.state);
    m->set_reason(e.reason);
  }
}

}  // namespace osprey::server::grpc_frontend
