// The gRPC side of the KServe v2 protocol (inference.GRPCInferenceService), as a client.
#include <grpcpp/grpcpp.h>

#include <chrono>

#include "osprey_server/grpc_service.grpc.pb.h"
#include "transport.h"

namespace osprey::loadgen {
namespace {

using Clock = std::chrono::steady_clock;
using Stub = inference::GRPCInferenceService::Stub;

std::string target_of(const Endpoint& e) { return e.host + ":" + std::to_string(e.port); }

std::string describe(const grpc::Status& s) {
  return "gRPC " + std::to_string(static_cast<int>(s.error_code())) + ": " + s.error_message();
}

// Each worker gets its own channel (its own HTTP/2 connection), like one HTTP connection each.
std::shared_ptr<grpc::Channel> make_channel(const Endpoint& e) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(target_of(e), grpc::InsecureChannelCredentials(), args);
}

std::chrono::system_clock::time_point deadline_after(double seconds) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

class GrpcWorker : public InferWorker {
 public:
  GrpcWorker(std::shared_ptr<grpc::Channel> channel, const inference::ModelInferRequest& request, double timeout_s)
      : stub_(inference::GRPCInferenceService::NewStub(std::move(channel))), request_(request), timeout_s_(timeout_s) {}

  InferOutcome infer() override {
    InferOutcome out;
    grpc::ClientContext context;
    context.set_deadline(deadline_after(timeout_s_));
    // A channel that lost its connection waits for the reconnect (bounded by the deadline)
    // instead of failing every request at once during gRPC's reconnect back-off.
    context.set_wait_for_ready(true);
    inference::ModelInferResponse response;
    const grpc::Status s = stub_->ModelInfer(&context, request_, &response);
    const auto t = Clock::now();
    if (!s.ok()) {
      out.ok = false;
      out.error = s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                      ? "timed out after " + std::to_string(static_cast<int64_t>(timeout_s_ * 1000)) + " ms"
                      : describe(s);
    }
    out.recv_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
    return out;
  }

 private:
  std::unique_ptr<Stub> stub_;
  const inference::ModelInferRequest& request_;
  double timeout_s_;
};

class GrpcTransport : public Transport {
 public:
  explicit GrpcTransport(TransportOptions o)
      : options_(std::move(o)), stub_(inference::GRPCInferenceService::NewStub(make_channel(options_.endpoint))) {}

  Result<ModelInfo> metadata() override {
    inference::ModelMetadataRequest req;
    req.set_name(options_.model);
    req.set_version(options_.version);
    inference::ModelMetadataResponse resp;
    auto context = control_context();
    const grpc::Status s = stub_->ModelMetadata(context.get(), req, &resp);
    OSPREY_RETURN_IF_ERROR(check(s, "model metadata"));
    ModelInfo info;
    info.name = resp.name();
    for (const auto& t : resp.inputs())
      info.inputs.push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
    for (const auto& t : resp.outputs())
      info.outputs.push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
    if (info.inputs.empty()) return invalid_argument("model metadata: the model lists no inputs");
    return info;
  }

  Result<ServerStats> statistics() override {
    inference::ModelStatisticsRequest req;
    req.set_name(options_.model);
    req.set_version(options_.version);
    inference::ModelStatisticsResponse resp;
    auto context = control_context();
    OSPREY_RETURN_IF_ERROR(check(stub_->ModelStatistics(context.get(), req, &resp), "model statistics"));
    ServerStats s;
    bool found = false;
    for (const auto& m : resp.model_stats()) {
      if (m.name() != options_.model) continue;
      found = true;
      const auto& is = m.inference_stats();
      s.inference_count += m.inference_count();
      s.execution_count += m.execution_count();
      s.success_count += is.success().count();
      s.success_ns += is.success().ns();
      s.fail_count += is.fail().count();
      s.queue_ns += is.queue().ns();
      s.compute_input_ns += is.compute_input().ns();
      s.compute_infer_ns += is.compute_infer().ns();
      s.compute_output_ns += is.compute_output().ns();
    }
    if (!found) return not_found("server statistics: no entry for model '", options_.model, "'");
    return s;
  }

  Status prepare(const std::vector<InputTensor>& inputs) override {
    request_.Clear();
    request_.set_model_name(options_.model);
    request_.set_model_version(options_.version);
    for (const InputTensor& t : inputs) {
      auto* in = request_.add_inputs();
      in->set_name(t.name);
      in->set_datatype(t.datatype);
      for (int64_t d : t.shape) in->add_shape(d);
      request_.add_raw_input_contents(t.bytes);
    }
    return Status();
  }

  // The worker's connection is made here, before any request is timed.
  Result<std::unique_ptr<InferWorker>> make_worker() override {
    auto channel = make_channel(options_.endpoint);
    if (!channel->WaitForConnected(deadline_after(options_.request_timeout_s)))
      return unavailable("gRPC: could not connect a worker channel to ", target_of(options_.endpoint), " within ",
                         options_.request_timeout_s, " s");
    return std::unique_ptr<InferWorker>(new GrpcWorker(std::move(channel), request_, options_.request_timeout_s));
  }

 private:
  std::unique_ptr<grpc::ClientContext> control_context() const {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(deadline_after(options_.request_timeout_s));
    return c;
  }

  Status check(const grpc::Status& s, const char* what) const {
    if (s.ok()) return Status();
    const std::string where = " of '" + options_.model + "' at " + target_of(options_.endpoint) + ": ";
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) return not_found(what, where, describe(s), " (unknown model?)");
    if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) return invalid_argument(what, where, describe(s));
    return unavailable(what, where, describe(s));
  }

  TransportOptions options_;
  std::unique_ptr<Stub> stub_;
  inference::ModelInferRequest request_;
};

}  // namespace

Result<std::unique_ptr<Transport>> make_grpc_transport(const TransportOptions& options) {
  return std::unique_ptr<Transport>(new GrpcTransport(options));
}

}  // namespace osprey::loadgen
