#include "frontend/grpc/stream_infer.h"

#include <utility>

#include "frontend/grpc/infer_codec.h"

namespace osprey::server::grpc_frontend {

StreamInferReactor::StreamInferReactor(Server* server, int window, CallTracker* calls)
    : server_(server), window_(static_cast<size_t>(window)), calls_(calls) {
  calls_->begin();
  StartRead(&request_);
}

void StreamInferReactor::OnReadDone(bool ok) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ok) {
    reading_ = false;
    read_closed_ = true;
    advance(std::move(lock));
    return;
  }
  // reading_ stays true while request_ is decoded, so no other thread starts the next read
  // into it (and the stream cannot finish) until this callback is done with it.
  pending_.push_back(std::make_unique<Slot>());
  Slot* slot = pending_.back().get();
  lock.unlock();

  std::string id = request_.id();
  Result<InferRequest> request = decode_infer_request(request_, server_->limits());
  const bool decoded = request.ok();
  if (!decoded) {
    inference::ModelInferResponse* r = slot->response.mutable_infer_response();
    r->set_model_name(request_.model_name());
    r->set_model_version(request_.model_version());
    r->set_id(std::move(id));
    slot->response.set_error_message(request.status().message());
  }
  request_.Clear();
  if (decoded) {
    // The slot (and so this reactor) stays until its callback has run.
    server_->infer_async(std::move(request).value(),
                         [this, slot, id = std::move(id)](Result<InferResponse> result) {
                           if (!result.ok()) slot->response.mutable_infer_response()->set_id(id);
                           complete(slot, std::move(result));
                         });
  }
  lock.lock();
  if (!decoded) slot->ready = true;
  reading_ = false;
  advance(std::move(lock));
}

void StreamInferReactor::complete(Slot* slot, Result<InferResponse> result) {
  if (result.ok()) {
    encode_infer_response(std::move(result).value(), slot->response.mutable_infer_response());
  } else {
    slot->response.set_error_message(result.status().message());
  }
  std::unique_lock<std::mutex> lock(mu_);
  slot->ready = true;
  advance(std::move(lock));
}

void StreamInferReactor::OnWriteDone(bool ok) {
  std::unique_lock<std::mutex> lock(mu_);
  write_active_ = false;
  if (!ok) broken_ = true;
  advance(std::move(lock));
}

void StreamInferReactor::advance(std::unique_lock<std::mutex> lock) {
  bool start_write = false;
  bool start_read = false;
  bool finish = false;
  if (broken_) {  // the client is gone: drop answered requests, keep waiting for the rest
    while (!pending_.empty() && pending_.front()->ready) pending_.pop_front();
  } else if (!write_active_ && !pending_.empty() && pending_.front()->ready) {
    writing_ = std::move(pending_.front()->response);
    pending_.pop_front();
    write_active_ = start_write = true;
  }
  if (!reading_ && !read_closed_ && !broken_ && pending_.size() < window_) {
    reading_ = start_read = true;
  }
  if (broken_ && !reading_) read_closed_ = true;
  if (read_closed_ && !reading_ && pending_.empty() && !write_active_ && !finished_) {
    finished_ = finish = true;
  }
  const bool broken = broken_;
  lock.unlock();
  // Nothing below may touch members once Finish is called: OnDone may run at once.
  if (start_write) StartWrite(&writing_);
  if (start_read) StartRead(&request_);
  if (finish) {
    Finish(broken ? grpc::Status(grpc::StatusCode::CANCELLED, "stream write failed")
                  : grpc::Status::OK);
  }
}

void StreamInferReactor::OnDone() {
  CallTracker* calls = calls_;
  delete this;
  calls->end();
}

}  // namespace osprey::server::grpc_frontend
