#include "api/server.h"

#include <future>
#include <memory>
#include <utility>

namespace osprey::server {

Status Server::load_model(const std::string& model, const ModelLoadOptions& options) {
  if (options.empty()) return load_model(model);
  return unimplemented("this server does not take load parameters");
}

Result<InferResponse> Server::infer(InferRequest request) {
  auto promise = std::make_shared<std::promise<Result<InferResponse>>>();
  auto future = promise->get_future();
  infer_async(std::move(request),
              [promise](Result<InferResponse> r) { promise->set_value(std::move(r)); });
  return future.get();
}

}  // namespace osprey::server
