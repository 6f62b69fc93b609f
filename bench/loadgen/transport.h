// A KServe v2 endpoint as the load generator sees it: model metadata, statistics, and workers
// that each hold one connection (HTTP keep-alive) or channel (gRPC) and send the prepared
// request again and again. Implementations: http_transport.cc, grpc_transport.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model_info.h"
#include "osprey/status.h"
#include "request_data.h"
#include "server_stats.h"

namespace osprey::loadgen {

struct InferOutcome {
  bool ok = true;
  std::string error;    // when !ok: a message that groups alike failures
  int64_t send_ns = 0;  // client time writing the request
  int64_t recv_ns = 0;  // client time checking the response once it arrived
};

class InferWorker {
 public:
  virtual ~InferWorker() = default;
  virtual InferOutcome infer() = 0;  // one request, blocking; bounded by the request timeout
};

enum class Protocol { kHttp, kGrpc };

struct Endpoint {
  std::string host;
  int port = 0;
};

// "HOST:PORT", "HOST" (protocol's default port 8000 / 8001) or "http://HOST:PORT".
Result<Endpoint> parse_endpoint(const std::string& url, Protocol protocol);

struct TransportOptions {
  Endpoint endpoint;
  std::string model, version;  // version "" = the server's choice
  double request_timeout_s = 30;
  bool http_json = false;  // HTTP: JSON tensors instead of the binary extension
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual Result<ModelInfo> metadata() = 0;
  virtual Result<ServerStats> statistics() = 0;
  // Encodes the request once; make_worker() after this.
  virtual Status prepare(const std::vector<InputTensor>& inputs) = 0;
  virtual Result<std::unique_ptr<InferWorker>> make_worker() = 0;
};

Result<std::unique_ptr<Transport>> make_http_transport(const TransportOptions& options);
Result<std::unique_ptr<Transport>> make_grpc_transport(const TransportOptions& options);

}  // namespace osprey::loadgen
