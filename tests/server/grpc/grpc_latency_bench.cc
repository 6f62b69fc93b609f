// Round-trip latency over localhost at concurrency 1: ServerLive (gRPC's floor), then
// ModelInfer against the fake server's echo models: `echo_inline` answers inside infer_async (gRPC
// + front-end cost only), `echo` answers from the fake's worker thread (adds one thread hop, like a
// real server). The time includes the client's own work, so it is an upper bound on the server-side
// overhead. Usage: osprey_grpc_bench [requests=5000] [floats_per_request=16]
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_server.h"
#include "frontend/grpc/grpc_server.h"
#include "osprey_server/grpc_service.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

void report(const std::string& what, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  auto pct = [&](double p) { return us[static_cast<size_t>(p * (us.size() - 1))]; };
  std::printf("%-12s n=%zu  mean %.1f us  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", what.c_str(),
              us.size(), sum / us.size(), pct(0.5), pct(0.9), pct(0.99), us.back());
}

// ServerLive: gRPC's own round-trip floor, with no codec and no inference.
void run_live(inference::GRPCInferenceService::Stub& stub, int requests) {
  std::vector<double> us;
  for (int i = 0; i < requests + requests / 10; ++i) {  // the first 10% warm up
    grpc::ClientContext ctx;
    inference::ServerLiveResponse resp;
    const auto t0 = Clock::now();
    grpc::Status s = stub.ServerLive(&ctx, {}, &resp);
    const auto t1 = Clock::now();
    if (!s.ok()) std::exit(1);
    if (i >= requests / 10)
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  report("ServerLive", std::move(us));
}

void run(inference::GRPCInferenceService::Stub& stub, const std::string& model, int requests,
         int floats) {
  inference::ModelInferRequest req;
  req.set_model_name(model);
  auto* in = req.add_inputs();
  in->set_name("INPUT0");
  in->set_datatype("FP32");
  in->add_shape(1);
  in->add_shape(floats);
  req.add_raw_input_contents(std::string(floats * sizeof(float), '\x01'));
  std::vector<double> us;
  us.reserve(requests);
  for (int i = 0; i < requests + requests / 10; ++i) {  // the first 10% warm up
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    const auto t0 = Clock::now();
    grpc::Status s = stub.ModelInfer(&ctx, req, &resp);
    const auto t1 = Clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", model.c_str(), s.error_message().c_str());
      std::exit(1);
    }
    if (i >= requests / 10)
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  report(model, std::move(us));
}

}  // namespace

int main(int argc, char** argv) {
  const int requests = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int floats = argc > 2 ? std::atoi(argv[2]) : 16;
  osprey::server::testing::FakeServer fake;
  osprey::server::grpc_frontend::GrpcServerOptions options;
  options.address = "127.0.0.1:0";
  auto server = osprey::server::grpc_frontend::GrpcServer::start(&fake, options);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().to_string().c_str());
    return 1;
  }
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*server)->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = inference::GRPCInferenceService::NewStub(channel);
  run_live(*stub, requests);
  run(*stub, "echo_inline", requests, floats);
  run(*stub, "echo", requests, floats);
  return 0;
}
