#include "frontend/http/http_server.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "frontend/http/metadata_json.h"

namespace osprey::server::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using ErrorCode = beast::error_code;

namespace {

// After an error response that leaves request bytes unread, read and drop up to this much
// (for at most a second) so closing does not reset the connection before the client reads it.
constexpr size_t kDrainBytes = size_t{1} << 20;

class Session;

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  HttpHandler handler;
  net::io_context ioc;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  bool stopped = false;
  std::mutex sessions_mu;
  std::vector<std::weak_ptr<Session>> sessions;

  Impl(const HttpServerOptions& o, HttpHandler h)
      : options(o),
        handler(std::move(h)),
        ioc(o.io_threads < 1 ? 1 : o.io_threads),
        acceptor(net::make_strand(ioc)) {}

  void do_accept();
  void on_accept(ErrorCode ec, tcp::socket socket);
};

namespace {

constexpr size_t kReadBufferBytes = 64 * 1024;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::Impl& server)
      : stream_(std::move(socket)), server_(server) {
    // Beast reads at most the buffer's free capacity (>= 512 bytes) per receive, and the body
    // parser empties the buffer after each one, so an unreserved buffer never grows: a 600 kB
    // tensor body took ~1,100 receives and handler dispatches. 64 kB is Beast's read cap.
    buffer_.reserve(kReadBufferBytes);
  }

  auto executor() { return stream_.get_executor(); }

  void start() { net::dispatch(executor(), [self = shared_from_this()] { self->do_read(); }); }

  // Runs on the session's strand when the server stops: idle connections close now, a request
  // being handled finishes and closes after its response.
  void on_stop() {
    if (!busy_) close();
  }

 private:
  void do_read() {
    if (server_.stopping) return close();
    parser_.emplace();
    parser_->body_limit(server_.options.max_body_bytes);
    parser_->header_limit(server_.options.max_header_bytes);
    stream_.expires_after(server_.options.idle_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](ErrorCode ec, size_t) { self->on_header(ec); });
  }

  void on_header(ErrorCode ec) {
    if (ec == bhttp::error::header_limit)
      return send_error(431, str_cat("request header exceeds the limit of ",
                                     server_.options.max_header_bytes, " bytes"));
    // Beast refuses a declared Content-Length over body_limit while parsing the header.
    if (ec == bhttp::error::body_limit) return send_error(413, body_limit_message(0));
    if (ec) return fail_read(ec);
    const auto& req = parser_->get();
    if (auto len = parser_->content_length(); len && *len > server_.options.max_body_bytes)
      return send_error(413, body_limit_message(*len));
    if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_,
                                                                       req.version());
      bhttp::async_write(stream_, *cont, [self = shared_from_this(), cont](ErrorCode ec, size_t) {
        if (ec) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    stream_.expires_after(server_.options.idle_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](ErrorCode ec, size_t) { self->on_body(ec); });
  }

  void on_body(ErrorCode ec) {
    if (ec == bhttp::error::body_limit) return send_error(413, body_limit_message(0));
    if (ec) return fail_read(ec);
    stream_.expires_never();
    busy_ = true;
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    version_ = msg.version();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    if (auto it = msg.find(kInferHeaderContentLength); it != msg.end())
      req.inference_header_length = std::string(it->value());
    req.body = std::move(msg.body());
    parser_.reset();

    // The responder may run on any thread, now or later; it holds a work guard so the I/O
    // threads keep running while the request is in flight.
    struct Pending {
      std::shared_ptr<Session> session;
      std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
    };
    auto pending = std::make_shared<Pending>();
    pending->session = shared_from_this();
    pending->work.emplace(server_.ioc.get_executor());
    Responder respond = [pending](HttpResponse resp) {
      std::shared_ptr<Session> self = std::move(pending->session);
      if (!self) return;  // answered twice: the first answer wins
      net::dispatch(self->executor(), [self, resp = std::move(resp)]() mutable {
        self->send(std::move(resp), false);
      });
      pending->work.reset();
    };
    try {
      server_.handler(std::move(req), std::move(respond));
    } catch (const std::exception& e) {
      if (!pending->session) return;  // already answered
      pending->session.reset();
      pending->work.reset();
      send_error(500, str_cat("internal error while handling the request: ", e.what()));
    }
  }

  std::string body_limit_message(uint64_t length) const {
    return str_cat("request body", length ? str_cat(" of ", length, " bytes") : std::string(),
                   " exceeds the limit of ", server_.options.max_body_bytes,
                   " bytes (max_request_bytes)");
  }

  void fail_read(ErrorCode ec) {
    if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset ||
        ec == net::error::eof || server_.stopping)
      return close();
    send_error(400, str_cat("malformed HTTP request: ", ec.message()));
  }

  // An error found while reading: answer and close (the rest of the request is not read).
  void send_error(int status, const std::string& message) {
    HttpResponse r;
    r.status = status;
    r.content_type = "application/json";
    r.body = error_json(message);
    busy_ = true;
    send(std::move(r), true);
  }

  void send(HttpResponse r, bool close_after) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(
        static_cast<bhttp::status>(r.status), version_ ? version_ : 11);
    if (!r.content_type.empty()) res->set(bhttp::field::content_type, r.content_type);
    if (r.inference_header_length)
      res->set(kInferHeaderContentLength, std::to_string(*r.inference_header_length));
    res->body() = std::move(r.body);
    const bool keep = keep_alive_ && !close_after && !server_.stopping;
    res->keep_alive(keep);
    res->prepare_payload();
    stream_.expires_after(server_.options.idle_timeout);
    bhttp::async_write(stream_, *res,
                       [self = shared_from_this(), res, keep, close_after](ErrorCode ec, size_t) {
                         self->busy_ = false;
                         if (ec) return self->close();
                         if (close_after) return self->drain_and_close();
                         if (!keep) return self->close();
                         self->do_read();
                       });
  }

  void drain_and_close() {
    ErrorCode ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    drained_ = 0;
    stream_.expires_after(std::chrono::seconds(1));
    drain();
  }

  void drain() {
    stream_.async_read_some(net::buffer(drain_buf_),
                            [self = shared_from_this()](ErrorCode ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kDrainBytes) return self->close();
                              self->drain();
                            });
  }

  void close() {
    ErrorCode ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  HttpServer::Impl& server_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bool busy_ = false;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  size_t drained_ = 0;
  char drain_buf_[16 * 1024];
};

}  // namespace

void HttpServer::Impl::do_accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](ErrorCode ec, tcp::socket socket) {
    on_accept(ec, std::move(socket));
  });
}

void HttpServer::Impl::on_accept(ErrorCode ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || stopping) return;
  if (!ec) {
    ErrorCode opt_ec;
    socket.set_option(tcp::no_delay(true), opt_ec);
    auto session = std::make_shared<Session>(std::move(socket), *this);
    {
      std::lock_guard<std::mutex> lock(sessions_mu);
      std::erase_if(sessions, [](const std::weak_ptr<Session>& w) { return w.expired(); });
      sessions.push_back(session);
    }
    session->start();
  }
  do_accept();
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

uint16_t HttpServer::port() const {
  ErrorCode ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const HttpServerOptions& options,
                                                      HttpHandler handler) {
  auto impl = std::make_unique<Impl>(options, std::move(handler));
  ErrorCode ec;
  auto address = net::ip::make_address(options.address, ec);
  if (ec) return invalid_argument("bad HTTP listen address '", options.address, "': ", ec.message());
  tcp::endpoint endpoint(address, options.port);
  const std::string where = str_cat(options.address, ":", options.port);
  tcp::acceptor& acc = impl->acceptor;
  acc.open(endpoint.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(endpoint, ec);
  if (ec) return unavailable("cannot bind the HTTP listener to ", where, ": ", ec.message());
  acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return unavailable("cannot listen on ", where, ": ", ec.message());
  impl->do_accept();
  Impl* raw = impl.get();
  for (int i = 0; i < (options.io_threads < 1 ? 1 : options.io_threads); ++i)
    impl->threads.emplace_back([raw] { raw->ioc.run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  s.stopping = true;
  net::post(s.acceptor.get_executor(), [&s] {
    ErrorCode ec;
    s.acceptor.close(ec);
  });
  {
    std::lock_guard<std::mutex> lock(s.sessions_mu);
    for (auto& w : s.sessions)
      if (auto session = w.lock())
        net::post(session->executor(), [session] { session->on_stop(); });
    s.sessions.clear();
  }
  for (auto& t : s.threads) t.join();
  s.threads.clear();
}

}  // namespace osprey::server::http
