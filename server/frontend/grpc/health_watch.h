// grpc.health.v1.Health/Watch: server-streaming health. A stream gets the current status at once
// and again whenever it changes, until the client cancels or the server shuts down.
//
// Nothing polls: HealthWatchers::refresh() re-reads the status of every open stream and is called
// by the server's health notification (Server::subscribe_health) on the thread that changed the
// state, so a change is written to the clients at once. No thread of its own, no timer: idle, it
// uses no CPU. At shutdown every stream gets NOT_SERVING (if it was told anything else) and ends
// with UNAVAILABLE, so open streams never hold up the server's shutdown.
#pragma once

#include <grpcpp/support/server_callback.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "osprey_server/health.pb.h"

namespace osprey::server::grpc_frontend {

using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

class HealthWatchers;

// One Watch stream. Writes one status at a time; only the latest wanted status is written (a
// status that changes and changes back while a write is in flight is not repeated).
class HealthWatchReactor final
    : public grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse> {
 public:
  HealthWatchReactor(HealthWatchers* owner, std::string service);

  const std::string& service() const { return service_; }
  void update(ServingStatus status);  // sends it if it differs from the last one sent
  void close();                       // NOT_SERVING (if not sent last), then UNAVAILABLE

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Decides under the lock what to start next (a write or the finish), then starts it with the
  // lock released. Must be the last thing a caller does.
  void advance(std::unique_lock<std::mutex> lock);

  HealthWatchers* owner_;
  const std::string service_;
  grpc::health::v1::HealthCheckResponse writing_;  // source of the write in progress

  std::mutex mu_;
  std::optional<ServingStatus> wanted_;  // what the client should be told
  std::optional<ServingStatus> sent_;    // what it was told last (or is being told)
  bool write_active_ = false;
  bool closing_ = false;    // the server shuts down: finish after the last write
  bool cancelled_ = false;  // the client went away or a write failed
  bool finished_ = false;   // Finish was called: no more operations
};

// The open Watch streams.
class HealthWatchers {
 public:
  using StatusFn = std::function<ServingStatus(const std::string& service)>;
  explicit HealthWatchers(StatusFn status);
  ~HealthWatchers();  // close_all(), then waits for every stream to be done
  HealthWatchers(const HealthWatchers&) = delete;
  HealthWatchers& operator=(const HealthWatchers&) = delete;

  // A new stream for `service`, already sending its first status (or closing, after close_all).
  HealthWatchReactor* open(const std::string& service);
  // Re-reads the status (once per service name) and sends it to every open stream it changed
  // for. Calls are serialized, and each reads the status after the previous one finished, so
  // the last status a stream is sent is the status read by the last refresh.
  void refresh();
  // Ends every open stream (see above) and refuses new ones. Idempotent.
  void close_all();
  // Returns once every stream is done (gRPC called OnDone).
  void wait_idle();
  int64_t open_count() const;

 private:
  friend class HealthWatchReactor;
  void done(HealthWatchReactor* reactor);  // from OnDone: forgets (and may delete) it

  const StatusFn status_;
  // Held while reading a status and handing it to streams (refresh, and a new stream's first
  // status), so that an older reading is never sent after a newer one. Taken before mu_.
  std::mutex send_mu_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // wait_idle: a stream is done
  // Shared so that refresh can keep a stream alive while it updates it outside mu_.
  std::map<HealthWatchReactor*, std::shared_ptr<HealthWatchReactor>> open_;
  bool closing_ = false;
};

}  // namespace osprey::server::grpc_frontend
