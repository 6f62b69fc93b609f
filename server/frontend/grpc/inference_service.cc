#include "frontend/grpc/inference_service.h"

#include <map>
#include <string>
#include <utility>

#include "frontend/grpc/infer_codec.h"
#include "frontend/grpc/metadata_codec.h"
#include "frontend/grpc/status_mapping.h"
#include "frontend/grpc/stream_infer.h"

namespace osprey::server::grpc_frontend {

using InferHolder =
    grpc::MessageHolder<inference::ModelInferRequest, inference::ModelInferResponse>;

// Gives each ModelInfer call request/response messages it owns, so the handler may move the
// tensor bytes out of the request (gRPC hands the handler a const pointer otherwise).
class InferMessages final : public InferHolder {
 public:
  InferMessages() {
    set_request(&request_);
    set_response(&response_);
  }
  void Release() override { delete this; }

 private:
  inference::ModelInferRequest request_;
  inference::ModelInferResponse response_;
};

class InferMessageAllocator final
    : public grpc::MessageAllocator<inference::ModelInferRequest, inference::ModelInferResponse> {
 public:
  InferHolder* AllocateMessages() override { return new InferMessages; }
};

namespace {

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* ctx, const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* ctx, const Status& status) {
  return finish(ctx, to_grpc_status(status));
}

}  // namespace

InferenceService::InferenceService(Server* server, int stream_window)
    : server_(server),
      stream_window_(stream_window < 1 ? 1 : stream_window),
      infer_allocator_(std::make_unique<InferMessageAllocator>()) {
  SetMessageAllocatorFor_ModelInfer(infer_allocator_.get());
}

InferenceService::~InferenceService() = default;

grpc::ServerUnaryReactor* InferenceService::ServerLive(grpc::CallbackServerContext* ctx,
                                                       const inference::ServerLiveRequest*,
                                                       inference::ServerLiveResponse* resp) {
  resp->set_live(server_->live());
  return finish(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* InferenceService::ServerReady(grpc::CallbackServerContext* ctx,
                                                        const inference::ServerReadyRequest*,
                                                        inference::ServerReadyResponse* resp) {
  resp->set_ready(server_->ready());
  return finish(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* InferenceService::ModelReady(grpc::CallbackServerContext* ctx,
                                                       const inference::ModelReadyRequest* req,
                                                       inference::ModelReadyResponse* resp) {
  Result<bool> ready = server_->model_ready(req->name(), req->version());
  if (!ready.ok()) return finish(ctx, ready.status());
  resp->set_ready(*ready);
  return finish(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* InferenceService::ServerMetadata(
    grpc::CallbackServerContext* ctx, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* resp) {
  encode_server_metadata(server_->metadata(), resp);
  return finish(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* InferenceService::ModelMetadata(
    grpc::CallbackServerContext* ctx, const inference::ModelMetadataRequest* req,
    inference::ModelMetadataResponse* resp) {
  Result<osprey::server::ModelMetadata> md = server_->model_metadata(req->name(), req->version());
  if (!md.ok()) return finish(ctx, md.status());
  encode_model_metadata(*md, resp);
  return finish(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* InferenceService::ModelInfer(grpc::CallbackServerContext* ctx,
                                                       const inference::ModelInferRequest*,
                                                       inference::ModelInferResponse* resp) {
  // The allocator above made these messages; the request is ours to consume.
  auto* holder = static_cast<InferHolder*>(ctx->GetRpcAllocatorState());
  Result<InferRequest> request = decode_infer_request(*holder->request(), server_->limits());
  if (!request.ok()) return finish(ctx, request.status());
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.begin();
  server_->infer_async(std::move(request).value(),
                       [this, reactor, resp](Result<InferResponse> result) {
                         if (result.ok()) {
                           encode_infer_response(std::move(result).value(), resp);
                           reactor->Finish(grpc::Status::OK);
                         } else {
                           reactor->Finish(to_grpc_status(result.status()));
                         }
                         calls_.end();
                       });
  return reactor;
}

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
InferenceService::ModelStreamInfer(grpc::CallbackServerContext*) {
  return new StreamInferReactor(server_, stream_window_, &calls_);
}

grpc::ServerUnaryReactor* InferenceService::ModelConfig(grpc::CallbackServerContext* ctx,
                                                        const inference::ModelConfigRequest* req,
                                                        inference::ModelConfigResponse* resp) {
  return finish(ctx, server_->model_config(req->name(), req->version(), resp->mutable_config()));
}

grpc::ServerUnaryReactor* InferenceService::ModelStatistics(
    grpc::CallbackServerContext* ctx, const inference::ModelStatisticsRequest* req,
    inference::ModelStatisticsResponse* resp) {
  Result<std::vector<ModelStats>> stats = server_->statistics(req->name(), req->version());
  if (!stats.ok()) return finish(ctx, stats.status());
  encode_statistics(*stats, resp);
  return finish(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* InferenceService::RepositoryIndex(
    grpc::CallbackServerContext* ctx, const inference::RepositoryIndexRequest* req,
    inference::RepositoryIndexResponse* resp) {
  if (!req->repository_name().empty())
    return finish(ctx, not_found("unknown repository '", req->repository_name(),
                                 "' (this server has one repository; leave the name empty)"));
  encode_repository_index(server_->repository_index(req->ready()), resp);
  return finish(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelLoad(
    grpc::CallbackServerContext* ctx, const inference::RepositoryModelLoadRequest* req,
    inference::RepositoryModelLoadResponse*) {
  if (req->model_name().empty()) return finish(ctx, invalid_argument("model_name is empty"));
  if (!req->repository_name().empty())
    return finish(ctx, not_found("unknown repository '", req->repository_name(), "'"));
  ModelLoadOptions options;
  // Keys in order, so that the error names the same key every time.
  std::map<std::string, const inference::ModelRepositoryParameter*> params;
  for (const auto& [key, value] : req->parameters()) params.emplace(key, &value);
  for (const auto& [key, value] : params) {
    if (Status st = check_load_parameter_key(key); !st.ok()) return finish(ctx, st);
    if (key == "config") {
      if (value->parameter_choice_case() != inference::ModelRepositoryParameter::kStringParam)
        return finish(ctx, invalid_argument("load parameter 'config' must be a string_param "
                                            "holding the model configuration as JSON"));
      options.config = value->string_param();
      continue;
    }
    if (value->parameter_choice_case() != inference::ModelRepositoryParameter::kBytesParam)
      return finish(ctx, invalid_argument("load parameter '", key,
                                          "' must be a bytes_param holding the file"));
    if (Status st = add_load_file(key, value->bytes_param(), &options); !st.ok())
      return finish(ctx, st);
  }
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.begin();
  admin_.post([this, reactor, model = req->model_name(), options = std::move(options)] {
    reactor->Finish(to_grpc_status(server_->load_model(model, options)));
    calls_.end();
  });
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelUnload(
    grpc::CallbackServerContext* ctx, const inference::RepositoryModelUnloadRequest* req,
    inference::RepositoryModelUnloadResponse*) {
  if (req->model_name().empty()) return finish(ctx, invalid_argument("model_name is empty"));
  if (!req->repository_name().empty())
    return finish(ctx, not_found("unknown repository '", req->repository_name(), "'"));
  if (!req->parameters().empty())
    return finish(ctx, unimplemented("unload parameters (unload_dependents) are not supported"));
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.begin();
  admin_.post([this, reactor, model = req->model_name()] {
    reactor->Finish(to_grpc_status(server_->unload_model(model)));
    calls_.end();
  });
  return reactor;
}

}  // namespace osprey::server::grpc_frontend
