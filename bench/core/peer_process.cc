#include "core/peer_process.h"

#include <fcntl.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <utility>

namespace osprey::bench {
namespace {

using Clock = std::chrono::steady_clock;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void ignore_sigpipe() {
  static const bool once = [] {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, nullptr);
    return true;
  }();
  (void)once;
}

std::string describe_exit(int wstatus) {
  if (WIFEXITED(wstatus)) return "exited with code " + std::to_string(WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus))
    return std::string("was killed by signal ") + strsignal(WTERMSIG(wstatus));
  return "stopped";
}

std::string one_line(std::string s, size_t limit) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > limit) s = s.substr(0, limit) + "...";
  return s;
}

std::string to_json(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  v.Accept(w);
  return sb.GetString();
}

std::string str_field(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

int64_t int_field(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsNumber() ? static_cast<int64_t>(it->value.GetDouble())
                                                       : -1;
}

}  // namespace

PeerProcess::PeerProcess(std::string framework, PeerOptions options)
    : name_(std::move(framework)), options_(std::move(options)) {
  ignore_sigpipe();
}

PeerProcess::~PeerProcess() {
  quit();
}

std::string PeerProcess::failure_context() const {
  if (stderr_tail_.empty()) return " (its stderr was empty)";
  std::string t = stderr_tail_;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  for (char& c : t)
    if (c == '\n') c = '|';
  return " (stderr tail: " + t + ")";
}

Status PeerProcess::start() {
  namespace fs = std::filesystem;
  std::vector<std::string> args = options_.command;
  std::error_code ec;
  if (args.empty()) {
    if (access(options_.python.c_str(), X_OK) != 0)
      return not_found("python interpreter '", options_.python,
                       "' is not an executable file (set --python)");
    if (!fs::is_regular_file(options_.script, ec))
      return not_found("no adapter for ", name_, ": ", options_.script, " does not exist");
    args = {options_.python, "-u", options_.script};
  } else if (access(args[0].c_str(), X_OK) != 0 || !fs::is_regular_file(args[0], ec)) {
    return not_found("adapter of ", name_, ": '", args[0], "' is not an executable file");
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return internal_error("pipe: ", std::strerror(errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return internal_error("pipe: ", std::strerror(errno));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    return internal_error("pipe: ", std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    return resource_exhausted("cannot start peer ", name_, ": fork: ", std::strerror(errno));
  }
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execv(argv[0], argv.data());
    const std::string msg = "cannot execute " + args[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  fcntl(stdout_fd_, F_SETFL, fcntl(stdout_fd_, F_GETFL) | O_NONBLOCK);
  fcntl(stderr_fd_, F_SETFL, fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
  pid_ = pid;
  stdout_buf_.clear();
  stderr_tail_.clear();
  return Status::Ok();
}

void PeerProcess::drain_stderr() {
  if (stderr_fd_ < 0) return;
  char buf[4096];
  while (true) {
    const ssize_t n = read(stderr_fd_, buf, sizeof buf);
    if (n <= 0) break;
    stderr_tail_.append(buf, static_cast<size_t>(n));
    if (stderr_tail_.size() > options_.stderr_tail_bytes)
      stderr_tail_.erase(0, stderr_tail_.size() - options_.stderr_tail_bytes);
  }
}

void PeerProcess::stop_hard() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  drain_stderr();
  for (int* fd : {&stdin_fd_, &stdout_fd_, &stderr_fd_})
    if (*fd >= 0) close(*fd), *fd = -1;
  pid_ = -1;
}

void PeerProcess::quit() {
  if (pid_ <= 0) return;
  static const char kQuit[] = "{\"cmd\":\"quit\"}\n";
  (void)!write(stdin_fd_, kQuit, sizeof kQuit - 1);
  close(stdin_fd_);
  stdin_fd_ = -1;
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  while (Clock::now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    usleep(10000);
  }
  stop_hard();
}

Result<std::string> PeerProcess::request(const std::string& cmd, const std::string& json_line) {
  if (pid_ <= 0) OSPREY_RETURN_IF_ERROR(start());
  const std::string line = json_line + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = write(stdin_fd_, line.data() + sent, line.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int wstatus = 0;
      kill(pid_, SIGKILL);
      waitpid(pid_, &wstatus, 0);
      pid_ = -1;
      stop_hard();
      return unavailable("peer ", name_, " exited before taking '", cmd, "'", failure_context());
    }
    sent += static_cast<size_t>(n);
  }
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.timeout_s));
  while (true) {
    size_t nl;
    while ((nl = stdout_buf_.find('\n')) != std::string::npos) {
      std::string reply = stdout_buf_.substr(0, nl);
      stdout_buf_.erase(0, nl + 1);
      if (reply.find_first_not_of(" \t\r") != std::string::npos) return reply;
    }
    if (stdout_buf_.size() > options_.max_reply_bytes) {
      stop_hard();
      return invalid_argument("peer ", name_, " answered '", cmd, "' with a line over ",
                              options_.max_reply_bytes, " bytes", failure_context());
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      stop_hard();
      return unavailable("peer ", name_, " did not answer '", cmd, "' within ", options_.timeout_s,
                         " s and was killed", failure_context());
    }
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    const int r = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r < 0 && errno != EINTR) {
      stop_hard();
      return internal_error("poll on peer ", name_, ": ", std::strerror(errno));
    }
    drain_stderr();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      const ssize_t n = read(stdout_fd_, buf, sizeof buf);
      if (n > 0) {
        stdout_buf_.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        // stdout closed: the peer is exiting. Give it a moment, then make sure it is gone.
        int wstatus = 0;
        bool reaped = false;
        for (int i = 0; i < 200 && !reaped; ++i) {
          reaped = waitpid(pid_, &wstatus, WNOHANG) == pid_;
          if (!reaped) usleep(10000);
        }
        if (reaped) pid_ = -1;
        stop_hard();
        return unavailable("peer ", name_, " ",
                           reaped ? describe_exit(wstatus) : "closed its stdout",
                           " before answering '", cmd, "'", failure_context());
      }
    }
  }
}

namespace {

// Parses a reply line into `doc`; an ok:false reply becomes the peer's own error.
Status parse_reply(const std::string& peer, const std::string& cmd, const std::string& line,
                   rapidjson::Document* doc) {
  doc->Parse(line.c_str(), line.size());
  if (doc->HasParseError() || !doc->IsObject())
    return invalid_argument("peer ", peer, " answered '", cmd,
                            "' with something that is not a JSON object: '", one_line(line, 200),
                            "'");
  auto ok = doc->FindMember("ok");
  if (ok == doc->MemberEnd() || !ok->value.IsBool())
    return invalid_argument("peer ", peer, " answered '", cmd, "' without a boolean \"ok\": '",
                            one_line(line, 200), "'");
  if (!ok->value.GetBool()) {
    std::string err = str_field(*doc, "error");
    return failed_precondition(peer, ": ", err.empty() ? "failed without saying why" : err);
  }
  return Status::Ok();
}

Status bad_field(const std::string& peer, const std::string& cmd, const char* what) {
  return invalid_argument("peer ", peer, " answered '", cmd, "' without ", what);
}

}  // namespace

Result<HelloReply> PeerProcess::hello() {
  OSPREY_ASSIGN_OR_RETURN(std::string line, request("hello", "{\"cmd\":\"hello\"}"));
  rapidjson::Document d;
  if (Status s = parse_reply(name_, "hello", line, &d); !s.ok()) {
    if (s.code() == StatusCode::kInvalidArgument) stop_hard();
    return s;
  }
  auto avail = d.FindMember("available");
  if (avail == d.MemberEnd() || !avail->value.IsBool()) {
    stop_hard();
    return bad_field(name_, "hello", "a boolean \"available\"");
  }
  HelloReply h;
  h.framework = str_field(d, "framework");
  h.version = str_field(d, "version");
  h.available = avail->value.GetBool();
  h.reason = str_field(d, "reason");
  if (auto pin = d.FindMember("pin_threads"); pin != d.MemberEnd() && pin->value.IsBool())
    h.pins_threads = pin->value.GetBool();
  h.pin_threads_note = str_field(d, "pin_threads_note");
  if (!h.pins_threads && h.pin_threads_note.empty())
    h.pin_threads_note = "the adapter does not say that it can pin threads";
  if (!h.available && h.reason.empty())
    h.reason = "the adapter reports it unavailable without a reason";
  return h;
}

Result<LoadReply> PeerProcess::load(const LoadRequest& req) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("cmd"), w.String("load");
  w.Key("model"), w.String(req.model.c_str());
  w.Key("threads"), w.Int(req.threads);
  w.Key("pin_threads"), w.Bool(req.pin_threads);
  w.Key("precision"), w.String(req.precision.c_str());
  w.Key("batch"), w.Int64(req.batch);
  w.Key("inputs"), w.StartObject();
  for (const auto& in : req.inputs) {
    w.Key(in.name.c_str()), w.StartObject();
    w.Key("dtype"), w.String(dtype_name(in.dtype));
    w.Key("shape"), w.StartArray();
    for (int64_t d : in.shape) w.Int64(d);
    w.EndArray(), w.EndObject();
  }
  w.EndObject();
  w.Key("work_dir"), w.String(req.work_dir.c_str());
  w.Key("options"),
      w.RawValue(req.options_json.c_str(), req.options_json.size(), rapidjson::kObjectType);
  w.EndObject();
  OSPREY_ASSIGN_OR_RETURN(std::string line, request("load", sb.GetString()));
  rapidjson::Document d;
  if (Status s = parse_reply(name_, "load", line, &d); !s.ok()) {
    if (s.code() == StatusCode::kInvalidArgument) stop_hard();
    return s;
  }
  auto ms = d.FindMember("load_ms");
  if (ms == d.MemberEnd() || !ms->value.IsNumber()) {
    stop_hard();
    return bad_field(name_, "load", "a number \"load_ms\"");
  }
  LoadReply r;
  r.load_ms = ms->value.GetDouble();
  auto st = d.FindMember("settings");
  if (st != d.MemberEnd() && st->value.IsObject()) r.settings_json = to_json(st->value);
  r.precision_used = str_field(d, "precision_used");
  r.notes = str_field(d, "notes");
  return r;
}

Result<RunReply> PeerProcess::run(const std::string& inputs_dir, int iterations, int warmup) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("cmd"), w.String("run");
  w.Key("inputs_dir"), w.String(inputs_dir.c_str());
  w.Key("iterations"), w.Int(iterations);
  w.Key("warmup"), w.Int(warmup);
  w.EndObject();
  OSPREY_ASSIGN_OR_RETURN(std::string line, request("run", sb.GetString()));
  rapidjson::Document d;
  if (Status s = parse_reply(name_, "run", line, &d); !s.ok()) {
    if (s.code() == StatusCode::kInvalidArgument) stop_hard();
    return s;
  }
  auto lat = d.FindMember("latencies_us");
  if (lat == d.MemberEnd() || !lat->value.IsArray()) {
    stop_hard();
    return bad_field(name_, "run", "an array \"latencies_us\"");
  }
  RunReply r;
  for (const auto& v : lat->value.GetArray()) {
    if (!v.IsNumber() || v.GetDouble() < 0) {
      stop_hard();
      return invalid_argument("peer ", name_,
                              " answered 'run' with a latency that is not a non-negative number");
    }
    r.latencies_us.push_back(v.GetDouble());
  }
  if (r.latencies_us.size() != static_cast<size_t>(iterations)) {
    stop_hard();
    return invalid_argument("peer ", name_, " answered 'run' with ", r.latencies_us.size(),
                            " latencies for ", iterations, " iterations");
  }
  r.rss_bytes = int_field(d, "rss_bytes");
  r.peak_rss_bytes = int_field(d, "peak_rss_bytes");
  return r;
}

Result<std::vector<std::string>> PeerProcess::outputs(const std::string& inputs_dir,
                                                      const std::string& out_dir) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("cmd"), w.String("outputs");
  w.Key("inputs_dir"), w.String(inputs_dir.c_str());
  w.Key("out_dir"), w.String(out_dir.c_str());
  w.EndObject();
  OSPREY_ASSIGN_OR_RETURN(std::string line, request("outputs", sb.GetString()));
  rapidjson::Document d;
  if (Status s = parse_reply(name_, "outputs", line, &d); !s.ok()) {
    if (s.code() == StatusCode::kInvalidArgument) stop_hard();
    return s;
  }
  auto outs = d.FindMember("outputs");
  if (outs == d.MemberEnd() || !outs->value.IsArray()) {
    stop_hard();
    return bad_field(name_, "outputs", "an array \"outputs\"");
  }
  std::vector<std::string> names;
  for (const auto& v : outs->value.GetArray()) {
    if (!v.IsString()) {
      stop_hard();
      return bad_field(name_, "outputs", "output names as strings");
    }
    names.push_back(v.GetString());
  }
  return names;
}

}  // namespace osprey::bench
