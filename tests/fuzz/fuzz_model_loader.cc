// Feeds arbitrary bytes to the model loader (parse, validate, resolve kernels).
// Any crash, leak or sanitizer report is a bug: bad models must come back as a Status.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)osprey::fuzz::load(data, size);
  return 0;
}
