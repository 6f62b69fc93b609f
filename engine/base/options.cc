#include "osprey/options.h"

namespace osprey {

const char* precision_name(Precision p) {
  return p == Precision::kFast ? "fast" : "exact";
}

}  // namespace osprey
