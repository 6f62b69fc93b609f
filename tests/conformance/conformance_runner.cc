// Runs the ONNX node conformance cases (model.onnx + test_data_set_*/{input,output}_N.pb)
// through the engine and reports passed/failed/total. Cases of the training domain
// (ai.onnx.preview.training) are excluded. Fails when passes fall below --floor, or when a
// case fails that --known-failures does not list with a reason.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <unistd.h>

#include "case_compare.h"
#include "onnx/onnx_import.h"
#include "osprey/session.h"

namespace fs = std::filesystem;
using namespace osprey;

namespace {

const char* g_current_case = "";

void on_crash(int sig) {
  const char* msg = "\nosprey_conformance: crashed while running ";
  (void)!write(2, msg, std::strlen(msg));
  (void)!write(2, g_current_case, std::strlen(g_current_case));
  (void)!write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  // input_10.pb sorts after input_9.pb
  std::sort(out.begin(), out.end(), [&](const fs::path& a, const fs::path& b) {
    auto num = [&](const fs::path& p) {
      std::string s = p.stem().string().substr(prefix.size());
      return s.empty() ? 0L : std::strtol(s.c_str(), nullptr, 10);
    };
    return num(a) < num(b);
  });
  return out;
}

// The ONNX 1.12 test data stores bfloat16 tensors as UINT16 bit patterns: read them as
// the bfloat16 the model declares.
Value as_declared(Value v, const TensorInfo& info) {
  if (v.is_tensor() && info.dtype == DType::kBFloat16 && v.tensor.dtype() == DType::kUInt16)
    v.tensor = Tensor::wrap(DType::kBFloat16, v.tensor.shape(), v.tensor.raw_data(),
                            std::make_shared<Tensor>(v.tensor));
  return v;
}

std::string kind_of(const TensorInfo& i) {
  return i.is_optional ? "optional" : i.is_sequence ? "sequence" : "tensor";
}

// Empty string on success, else the reason.
std::string run_case(const fs::path& dir) {
  auto session = Session::load((dir / "model.onnx").string());
  if (!session.ok()) return "load: " + session.status().to_string();
  const Session& s = **session;
  // All graph inputs of node tests are runtime inputs (in declared order).
  for (const auto& set_dir : sorted_files(dir, "test_data_set_")) {
    std::vector<NamedValue> inputs;
    const auto in_files = sorted_files(set_dir, "input_");
    if (in_files.size() > s.inputs().size())
      return str_cat(set_dir.filename().string(), ": ", in_files.size(), " input files but the model has ",
                     s.inputs().size(), " inputs");
    for (size_t i = 0; i < in_files.size(); ++i) {
      auto bytes = onnx_import::read_file(in_files[i].string());
      if (!bytes.ok()) return bytes.status().to_string();
      auto v = onnx_import::parse_value(*bytes, kind_of(s.inputs()[i]), 0);
      if (!v.ok()) return "input " + std::to_string(i) + ": " + v.status().to_string();
      inputs.emplace_back(s.inputs()[i].name, as_declared(std::move(v.value()), s.inputs()[i]));
    }
    auto outs = s.run_values(inputs);
    if (!outs.ok()) return "run: " + outs.status().to_string();
    const auto out_files = sorted_files(set_dir, "output_");
    if (out_files.size() != outs->size())
      return str_cat(out_files.size(), " expected outputs, engine returned ", outs->size());
    for (size_t i = 0; i < out_files.size(); ++i) {
      auto bytes = onnx_import::read_file(out_files[i].string());
      if (!bytes.ok()) return bytes.status().to_string();
      auto want = onnx_import::parse_value(*bytes, kind_of(s.outputs()[i]), 0);
      if (!want.ok()) return "expected output " + std::to_string(i) + ": " + want.status().to_string();
      const std::string r =
          conformance::compare_values((*outs)[i].second, as_declared(*want, s.outputs()[i]), {});
      if (!r.empty()) return str_cat("output '", s.outputs()[i].name, "': ", r);
    }
  }
  return "";
}

bool is_training_case(const fs::path& dir) {
  auto bytes = onnx_import::read_file((dir / "model.onnx").string());
  return bytes.ok() && bytes->find("ai.onnx.preview.training") != std::string::npos;
}

std::map<std::string, std::string> read_known_failures(const std::string& path) {
  std::map<std::string, std::string> m;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.find_first_of(" \t");
    m[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
  }
  return m;
}

int usage() {
  std::cerr << "usage: osprey_conformance [--data-dir DIR] [--filter REGEX] [--floor FILE]\n"
               "                          [--known-failures FILE] [--quiet]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir = "/usr/share/libonnx-testdata/data/node", filter = ".*", floor_file, known_file;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--data-dir") data_dir = next();
    else if (a == "--filter") filter = next();
    else if (a == "--floor") floor_file = next();
    else if (a == "--known-failures") known_file = next();
    else if (a == "--quiet") quiet = true;
    else return usage();
  }
  if (!fs::is_directory(data_dir)) {
    std::cerr << "osprey_conformance: no test data at " << data_dir << " (install libonnx-testdata)\n";
    return 2;
  }
  std::signal(SIGSEGV, on_crash);
  std::signal(SIGABRT, on_crash);
  std::signal(SIGFPE, on_crash);
  const std::regex re(filter);
  const auto known = known_file.empty() ? std::map<std::string, std::string>{} : read_known_failures(known_file);
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(data_dir))
    if (e.is_directory() && std::regex_search(e.path().filename().string(), re)) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());

  int passed = 0, failed = 0, training = 0;
  std::vector<std::string> unexpected, stale;
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    if (is_training_case(dir)) {
      ++training;
      continue;
    }
    g_current_case = name.c_str();
    const std::string reason = run_case(dir);
    if (reason.empty()) {
      ++passed;
      if (known.count(name)) stale.push_back(name);
    } else {
      ++failed;
      if (!quiet) std::cout << "FAIL " << name << ": " << reason.substr(0, 400) << "\n";
      if (!known.count(name)) unexpected.push_back(name);
    }
  }
  const int total = passed + failed;
  std::printf("conformance: %d passed, %d failed, %d total (%.1f%%); %d training cases excluded\n", passed,
              failed, total, total ? 100.0 * passed / total : 0.0, training);
  int rc = 0;
  if (!floor_file.empty()) {
    std::ifstream f(floor_file);
    int floor = 0;
    f >> floor;
    if (passed < floor) {
      std::printf("conformance: %d passed is below the floor of %d (%s)\n", passed, floor, floor_file.c_str());
      rc = 1;
    }
  }
  if (!known_file.empty()) {
    for (const auto& n : unexpected) std::printf("conformance: %s failed and is not in the known-failures list\n", n.c_str());
    for (const auto& n : stale) std::printf("conformance: %s passes now: remove it from the known-failures list\n", n.c_str());
    if (!unexpected.empty()) rc = 1;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return rc;
}
