#include "processing/bytes_elements.h"

namespace osprey::server::processing {

Result<std::vector<std::string_view>> split_bytes_elements(std::string_view data, int64_t count) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (data.size() - pos < 4)
      return invalid_argument("BYTES element ", i, ": no room for its 4-byte length (",
                              data.size() - pos, " bytes left)");
    uint32_t len = 0;
    for (int b = 3; b >= 0; --b)
      len = (len << 8) | static_cast<unsigned char>(data[pos + static_cast<size_t>(b)]);
    pos += 4;
    if (len > data.size() - pos)
      return invalid_argument("BYTES element ", i, ": length ", len, " but only ",
                              data.size() - pos, " bytes left");
    out.push_back(data.substr(pos, len));
    pos += len;
  }
  if (pos != data.size())
    return invalid_argument("BYTES data has ", data.size() - pos, " bytes after its ", count,
                            " elements");
  return out;
}

void append_bytes_element(std::string_view element, std::string* out) {
  const auto len = static_cast<uint32_t>(element.size());
  for (int b = 0; b < 4; ++b) out->push_back(static_cast<char>((len >> (8 * b)) & 0xFF));
  out->append(element);
}

}  // namespace osprey::server::processing
