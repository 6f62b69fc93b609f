// `osprey serve`: the KServe v2 inference server over a Triton-layout model repository.
//
// HTTP/REST (--http-port), gRPC (--grpc-port) and Prometheus metrics (--metrics-port) front
// ends over one Server (server/api/server.h). SIGTERM or SIGINT: stop accepting, finish the
// requests in flight, unload, exit 0. Signals are blocked in every thread and taken by the
// main thread with sigwait, so no handler runs inside a worker.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "api/server.h"
#include "commands.h"
#include "frontend/grpc/grpc_server.h"
#include "frontend/http/http_server.h"
#include "frontend/http/router.h"

namespace osprey::cli {
namespace {

struct ServeArgs {
  std::string repository;
  std::string address = "0.0.0.0";
  int http_port = 8000;
  int grpc_port = 8001;
  int metrics_port = 8002;
  bool allow_http = true;
  bool allow_grpc = true;
  bool allow_metrics = true;
  std::string control_mode = "none";
  int poll_secs = 15;
  std::vector<std::string> load_models;
  int64_t max_request_bytes = server::ServerLimits{}.max_request_bytes;
  int64_t max_tensor_elements = server::ServerLimits{}.max_tensor_elements;
  int64_t max_queue_size = server::ServerLimits{}.max_queue_size;
  int threads = 0;
  int http_threads = 2;
  int shutdown_grace_s = 30;
};

Result<server::ModelControlMode> parse_mode(const std::string& mode) {
  if (mode == "none") return server::ModelControlMode::kNone;
  if (mode == "poll") return server::ModelControlMode::kPoll;
  if (mode == "explicit") return server::ModelControlMode::kExplicit;
  return invalid_argument("--model-control-mode must be none, poll or explicit, got '", mode, "'");
}

Status check_port(const char* flag, int port) {
  if (port < 0 || port > 65535) return invalid_argument(flag, " must be in 0..65535, got ", port);
  return Status::Ok();
}

// Blocks SIGTERM/SIGINT in this thread (and every thread it starts later); returns the set.
sigset_t block_shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

Status serve(const ServeArgs& args) {
  OSPREY_ASSIGN_OR_RETURN(server::ModelControlMode mode, parse_mode(args.control_mode));
  OSPREY_RETURN_IF_ERROR(check_port("--http-port", args.http_port));
  OSPREY_RETURN_IF_ERROR(check_port("--grpc-port", args.grpc_port));
  OSPREY_RETURN_IF_ERROR(check_port("--metrics-port", args.metrics_port));
  if (args.poll_secs < 1) return invalid_argument("--repository-poll-secs must be >= 1");
  if (args.max_request_bytes < 1024) return invalid_argument("--max-request-bytes must be >= 1024");
  if (args.max_tensor_elements < 1) return invalid_argument("--max-tensor-elements must be >= 1");
  if (args.max_queue_size < 1) return invalid_argument("--max-queue-size must be >= 1");
  if (args.http_threads < 1) return invalid_argument("--http-threads must be >= 1");
  if (!args.load_models.empty() && mode != server::ModelControlMode::kExplicit)
    return invalid_argument("--load-model needs --model-control-mode explicit");

  const sigset_t signals = block_shutdown_signals();

  server::ServerOptions options;
  options.model_repository = args.repository;
  options.control_mode = mode;
  options.repository_poll_secs = args.poll_secs;
  options.startup_models = args.load_models;
  options.limits.max_request_bytes = args.max_request_bytes;
  options.limits.max_tensor_elements = args.max_tensor_elements;
  options.limits.max_queue_size = args.max_queue_size;
  options.total_threads = args.threads;
  options.server_version = OSPREY_VERSION;
  OSPREY_ASSIGN_OR_RETURN(std::unique_ptr<server::Server> srv, server::Server::create(options));

  std::unique_ptr<server::http::HttpServer> http, metrics;
  std::unique_ptr<server::grpc_frontend::GrpcServer> grpc;
  if (args.allow_http) {
    server::http::HttpServerOptions o;
    o.address = args.address;
    o.port = static_cast<uint16_t>(args.http_port);
    o.io_threads = args.http_threads;
    o.max_body_bytes = static_cast<uint64_t>(args.max_request_bytes);
    auto router = std::make_shared<server::http::Router>(*srv);
    auto started = server::http::HttpServer::start(
        o, [router](server::http::HttpRequest req, server::http::Responder respond) {
          router->handle(std::move(req), std::move(respond));
        });
    if (!started.ok()) return started.status().with_context("HTTP front end");
    http = std::move(started).value();
  }
  if (args.allow_grpc) {
    server::grpc_frontend::GrpcServerOptions o;
    o.address = args.address + ":" + std::to_string(args.grpc_port);
    auto started = server::grpc_frontend::GrpcServer::start(srv.get(), o);
    if (!started.ok()) return started.status().with_context("gRPC front end");
    grpc = std::move(started).value();
  }
  if (args.allow_metrics) {
    server::http::HttpServerOptions o;
    o.address = args.address;
    o.port = static_cast<uint16_t>(args.metrics_port);
    o.io_threads = 1;
    auto started = server::http::HttpServer::start(o, server::http::make_metrics_handler(*srv));
    if (!started.ok()) return started.status().with_context("metrics front end");
    metrics = std::move(started).value();
  }

  size_t ready = 0;
  for (const auto& e : srv->repository_index(true)) ready += e.state == "READY";
  std::fprintf(stderr, "osprey serve: %zu model version(s) ready from %s;", ready,
               args.repository.c_str());
  if (http) std::fprintf(stderr, " HTTP on %s:%u;", args.address.c_str(), http->port());
  if (grpc) std::fprintf(stderr, " gRPC on %s:%d;", args.address.c_str(), grpc->port());
  if (metrics) std::fprintf(stderr, " metrics on %s:%u/metrics;", args.address.c_str(), metrics->port());
  std::fprintf(stderr, " SIGTERM or Ctrl-C stops\n");

  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "osprey serve: %s received: finishing requests in flight\n",
               sig == SIGTERM ? "SIGTERM" : "SIGINT");
  // Front ends first (stop accepting, answer what they hold), then the models drain.
  if (http) http->stop();
  if (grpc) grpc->shutdown(std::chrono::seconds(args.shutdown_grace_s));
  srv->shutdown();
  if (metrics) metrics->stop();
  std::fprintf(stderr, "osprey serve: stopped\n");
  return Status::Ok();
}

}  // namespace

Action add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve a Triton-layout model repository over KServe v2 HTTP and gRPC");
  cmd->add_option("--model-repository", args->repository,
                  "Repository: DIR/<model>/config.pbtxt, DIR/<model>/<version>/model.onnx")
      ->required();
  cmd->add_option("--address", args->address, "Address the front ends bind")->capture_default_str();
  cmd->add_option("--http-port", args->http_port, "HTTP/REST port (0 = any free port)")
      ->capture_default_str();
  cmd->add_option("--grpc-port", args->grpc_port, "gRPC port (0 = any free port)")->capture_default_str();
  cmd->add_option("--metrics-port", args->metrics_port, "Prometheus /metrics port (0 = any free port)")
      ->capture_default_str();
  cmd->add_option("--allow-http", args->allow_http, "Serve HTTP/REST")->capture_default_str();
  cmd->add_option("--allow-grpc", args->allow_grpc, "Serve gRPC")->capture_default_str();
  cmd->add_option("--allow-metrics", args->allow_metrics, "Serve Prometheus metrics")
      ->capture_default_str();
  cmd->add_option("--model-control-mode", args->control_mode,
                  "none: load everything at start; poll: also rescan the repository; "
                  "explicit: load/unload through the repository API")
      ->capture_default_str();
  cmd->add_option("--repository-poll-secs", args->poll_secs, "Rescan interval in poll mode")
      ->capture_default_str();
  cmd->add_option("--load-model", args->load_models,
                  "Model to load at start in explicit mode (repeatable; * = all)");
  cmd->add_option("--max-request-bytes", args->max_request_bytes,
                  "Largest request body / gRPC message accepted")
      ->capture_default_str();
  cmd->add_option("--max-tensor-elements", args->max_tensor_elements,
                  "Largest tensor (elements) a request may carry")
      ->capture_default_str();
  cmd->add_option("--max-queue-size", args->max_queue_size,
                  "Pending requests per model when its config sets no max_queue_size")
      ->capture_default_str();
  cmd->add_option("-t,--threads", args->threads,
                  "Engine threads shared by all model instances (0 = what the CPU quota allows)")
      ->capture_default_str();
  cmd->add_option("--http-threads", args->http_threads, "HTTP I/O threads")->capture_default_str();
  cmd->add_option("--shutdown-grace-secs", args->shutdown_grace_s,
                  "How long gRPC calls in flight may take to finish at shutdown")
      ->capture_default_str();
  return [args] { return serve(*args); };
}

}  // namespace osprey::cli
