// Request-target handling for the router: path segments, percent-decoding, name checks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "osprey/status.h"

namespace osprey::server::http {

// Splits the path of an origin-form target ("/v2/models/m%20x/ready?q=1") into its
// percent-decoded segments {"v2","models","m x","ready"}; the query is ignored. Empty segments
// are kept (so "/v2//x" matches no route). Bad escapes are kInvalidArgument.
Result<std::vector<std::string>> split_target(std::string_view target);

// A model name from a URL: non-empty, at most 256 bytes, no '/', '\\', control characters,
// and not "." or "..".
Status check_model_name(const std::string& name);
// A model version from a URL: 1-18 decimal digits.
Status check_model_version(const std::string& version);

}  // namespace osprey::server::http
