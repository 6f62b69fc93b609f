// ModelStreamInfer: a bidirectional stream on which every request gets exactly one response,
// in request order. Up to `window` requests are in the server at once (reading pauses when the
// window is full). A bad or failed request is answered with `error_message` and the stream
// stays open; the stream ends OK once the client half-closes and every response is written.
#pragma once

#include <grpcpp/support/server_callback.h>

#include <deque>
#include <memory>
#include <mutex>

#include "api/server.h"
#include "frontend/grpc/call_tracker.h"
#include "osprey_server/grpc_service.pb.h"

namespace osprey::server::grpc_frontend {

class StreamInferReactor final
    : public grpc::ServerBidiReactor<inference::ModelInferRequest,
                                     inference::ModelStreamInferResponse> {
 public:
  // Starts reading at once; deletes itself when gRPC reports the stream done.
  StreamInferReactor(Server* server, int window, CallTracker* calls);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  // One request's place in the response order; `ready` once its response is filled in.
  struct Slot {
    bool ready = false;
    inference::ModelStreamInferResponse response;
  };

  // Decides under the lock what to start next (a write, a read, or finishing the stream),
  // then starts it with the lock released. Must be the last thing a callback does.
  void advance(std::unique_lock<std::mutex> lock);
  void complete(Slot* slot, Result<InferResponse> result);

  Server* server_;
  const size_t window_;
  CallTracker* calls_;
  inference::ModelInferRequest request_;         // target of the read in progress
  inference::ModelStreamInferResponse writing_;  // source of the write in progress

  std::mutex mu_;
  std::deque<std::unique_ptr<Slot>> pending_;  // in request order
  bool reading_ = true;                        // a read is outstanding
  bool write_active_ = false;                  // a write is outstanding
  bool read_closed_ = false;                   // the client half-closed (or the stream broke)
  bool broken_ = false;                        // a write failed: responses are dropped from now on
  bool finished_ = false;
};

}  // namespace osprey::server::grpc_frontend
