// Metadata, statistics, repository index and status-code translation.
#include "frontend/grpc/metadata_codec.h"

#include <gtest/gtest.h>

#include "frontend/grpc/status_mapping.h"

namespace osprey::server::grpc_frontend {
namespace {

TEST(GrpcMetadataCodec, ServerMetadata) {
  inference::ServerMetadataResponse out;
  encode_server_metadata({"osprey", "1.2", {"statistics", "model_repository"}}, &out);
  EXPECT_EQ(out.name(), "osprey");
  EXPECT_EQ(out.version(), "1.2");
  ASSERT_EQ(out.extensions_size(), 2);
  EXPECT_EQ(out.extensions(1), "model_repository");
}

TEST(GrpcMetadataCodec, ModelMetadata) {
  ModelMetadata md{"resnet",
                   {"1", "2"},
                   "onnxruntime_onnx",
                   {{"x", "FP32", {-1, 3, 224, 224}}},
                   {{"y", "FP32", {-1, 1000}}, {"z", "INT64", {}}}};
  inference::ModelMetadataResponse out;
  encode_model_metadata(md, &out);
  EXPECT_EQ(out.name(), "resnet");
  ASSERT_EQ(out.versions_size(), 2);
  EXPECT_EQ(out.versions(1), "2");
  EXPECT_EQ(out.platform(), "onnxruntime_onnx");
  ASSERT_EQ(out.inputs_size(), 1);
  EXPECT_EQ(out.inputs(0).name(), "x");
  ASSERT_EQ(out.inputs(0).shape_size(), 4);
  EXPECT_EQ(out.inputs(0).shape(0), -1);
  EXPECT_EQ(out.inputs(0).shape(3), 224);
  ASSERT_EQ(out.outputs_size(), 2);
  EXPECT_EQ(out.outputs(1).datatype(), "INT64");
  EXPECT_EQ(out.outputs(1).shape_size(), 0);
}

TEST(GrpcMetadataCodec, Statistics) {
  ModelStats s;
  s.name = "m";
  s.version = "4";
  s.last_inference_ms = 123;
  s.inference_count = 10;
  s.execution_count = 5;
  s.inference_stats.success = {5, 500};
  s.inference_stats.fail = {1, 7};
  s.inference_stats.queue = {5, 50};
  s.inference_stats.compute_input = {5, 20};
  s.inference_stats.compute_infer = {5, 400};
  s.inference_stats.compute_output = {5, 30};
  s.batch_stats.push_back({2, {5, 1}, {5, 2}, {5, 3}});
  inference::ModelStatisticsResponse out;
  encode_statistics({s}, &out);
  ASSERT_EQ(out.model_stats_size(), 1);
  const auto& m = out.model_stats(0);
  EXPECT_EQ(m.name(), "m");
  EXPECT_EQ(m.version(), "4");
  EXPECT_EQ(m.last_inference(), 123u);
  EXPECT_EQ(m.inference_count(), 10u);
  EXPECT_EQ(m.execution_count(), 5u);
  EXPECT_EQ(m.inference_stats().success().count(), 5u);
  EXPECT_EQ(m.inference_stats().success().ns(), 500u);
  EXPECT_EQ(m.inference_stats().fail().ns(), 7u);
  EXPECT_EQ(m.inference_stats().queue().ns(), 50u);
  EXPECT_EQ(m.inference_stats().compute_input().ns(), 20u);
  EXPECT_EQ(m.inference_stats().compute_infer().ns(), 400u);
  EXPECT_EQ(m.inference_stats().compute_output().ns(), 30u);
  ASSERT_EQ(m.batch_stats_size(), 1);
  EXPECT_EQ(m.batch_stats(0).batch_size(), 2u);
  EXPECT_EQ(m.batch_stats(0).compute_input().ns(), 1u);
  EXPECT_EQ(m.batch_stats(0).compute_infer().ns(), 2u);
  EXPECT_EQ(m.batch_stats(0).compute_output().ns(), 3u);
}

TEST(GrpcMetadataCodec, RepositoryIndex) {
  inference::RepositoryIndexResponse out;
  encode_repository_index({{"a", "1", "READY", ""}, {"b", "", "UNAVAILABLE", "bad file"}}, &out);
  ASSERT_EQ(out.models_size(), 2);
  EXPECT_EQ(out.models(0).name(), "a");
  EXPECT_EQ(out.models(0).version(), "1");
  EXPECT_EQ(out.models(0).state(), "READY");
  EXPECT_EQ(out.models(1).reason(), "bad file");
}

TEST(GrpcStatusMapping, Codes) {
  EXPECT_EQ(to_grpc_code(StatusCode::kOk), grpc::StatusCode::OK);
  EXPECT_EQ(to_grpc_code(StatusCode::kInvalidArgument), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(to_grpc_code(StatusCode::kResourceExhausted), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(to_grpc_code(StatusCode::kFailedPrecondition), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(to_grpc_code(StatusCode::kNotFound), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(to_grpc_code(StatusCode::kUnavailable), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(to_grpc_code(StatusCode::kUnimplemented), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(to_grpc_code(StatusCode::kInternal), grpc::StatusCode::INTERNAL);
  grpc::Status s = to_grpc_status(not_found("model 'x' is unknown"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model 'x' is unknown");
  EXPECT_TRUE(to_grpc_status(Status::Ok()).ok());
}

}  // namespace
}  // namespace osprey::server::grpc_frontend
