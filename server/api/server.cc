#include "api/server.h"

#include <future>
#include <memory>
#include <utility>

namespace osprey::server {

Status check_load_parameter_key(const std::string& key) {
  if (key == "config") return Status::Ok();
  if (key.rfind("file:", 0) == 0)
    return unimplemented("load parameter '", key,
                         "': model files sent with a load are not supported; put them in the "
                         "model repository");
  return invalid_argument("unknown load parameter '", key, "' (known: \"config\")");
}

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
