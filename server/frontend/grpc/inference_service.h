// inference.GRPCInferenceService on gRPC's callback API. ModelInfer hands the request to
// Server::infer_async and finishes the call from the server's completion callback, so no gRPC
// thread waits on inference. Load/unload run on one admin thread; everything else is quick
// and answered inline.
#pragma once

#include <memory>

#include "api/server.h"
#include "frontend/grpc/admin_worker.h"
#include "frontend/grpc/call_tracker.h"
#include "osprey_server/grpc_service.grpc.pb.h"

namespace osprey::server::grpc_frontend {

class InferMessageAllocator;

class InferenceService final : public inference::GRPCInferenceService::CallbackService {
 public:
  // `server` must outlive this service. `stream_window`: requests of one ModelStreamInfer
  // stream in flight at once (>= 1); responses still go out in request order.
  InferenceService(Server* server, int stream_window);
  ~InferenceService() override;

  // Blocks until every call has finished (used by shutdown, after gRPC stopped accepting).
  void wait_idle() { calls_.wait_idle(); }

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* ctx,
                                       const inference::ServerLiveRequest* req,
                                       inference::ServerLiveResponse* resp) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* ctx,
                                        const inference::ServerReadyRequest* req,
                                        inference::ServerReadyResponse* resp) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* ctx,
                                       const inference::ModelReadyRequest* req,
                                       inference::ModelReadyResponse* resp) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* ctx,
                                           const inference::ServerMetadataRequest* req,
                                           inference::ServerMetadataResponse* resp) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* ctx,
                                          const inference::ModelMetadataRequest* req,
                                          inference::ModelMetadataResponse* resp) override;
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* ctx,
                                       const inference::ModelInferRequest* req,
                                       inference::ModelInferResponse* resp) override;
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
  ModelStreamInfer(grpc::CallbackServerContext* ctx) override;
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* ctx,
                                        const inference::ModelConfigRequest* req,
                                        inference::ModelConfigResponse* resp) override;
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* ctx,
                                            const inference::ModelStatisticsRequest* req,
                                            inference::ModelStatisticsResponse* resp) override;
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* ctx,
                                            const inference::RepositoryIndexRequest* req,
                                            inference::RepositoryIndexResponse* resp) override;
  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* ctx, const inference::RepositoryModelLoadRequest* req,
      inference::RepositoryModelLoadResponse* resp) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* ctx, const inference::RepositoryModelUnloadRequest* req,
      inference::RepositoryModelUnloadResponse* resp) override;

 private:
  Server* server_;
  int stream_window_;
  CallTracker calls_;
  std::unique_ptr<InferMessageAllocator> infer_allocator_;
  AdminWorker admin_;  // last member: destroyed first, finishing queued load/unload calls
};

}  // namespace osprey::server::grpc_frontend
