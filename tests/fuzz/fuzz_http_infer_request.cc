// Feeds arbitrary bytes to the HTTP infer request decoder, and re-encodes whatever it accepts as
// a response (every decoded input echoed as an output, half of them binary).
// Input layout: byte 0 bit 0 = whether an Inference-Header-Content-Length is given; bytes 1-3 =
// that length (little-endian, taken modulo the body size + 1); the rest is the body.
// Any crash, leak or sanitizer report is a bug: bad requests must come back as a Status.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "frontend/http/infer_codec.h"

using namespace osprey::server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  std::string body(reinterpret_cast<const char*>(data) + 4, size - 4);
  std::optional<uint64_t> json_length;
  if (data[0] & 1) {
    uint64_t n = data[1] | (uint64_t{data[2]} << 8) | (uint64_t{data[3]} << 16);
    json_length = n % (body.size() + 1);
  }
  auto request = http::decode_infer_request(std::move(body), json_length, int64_t{1} << 16);
  if (!request.ok()) return 0;
  auto encoding = http::output_encoding_of(*request);
  if (!encoding.ok()) return 0;
  InferResponse response;
  response.id = request->id;
  bool binary = false;
  for (WireTensor& t : request->inputs) {
    encoding->binary_by_name[t.name] = binary;
    binary = !binary;
    response.outputs.push_back(std::move(t));
  }
  auto encoded = http::encode_infer_response(response, *encoding);
  if (!encoded.ok()) __builtin_trap();  // decoded inputs are always encodable
  return 0;
}
