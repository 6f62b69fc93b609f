// The alternative ways a convolution can run besides one direct oneDNN primitive, and the
// process-wide policy for each (tests force a form on any machine; kAuto is the measured
// default):
//   - kTaps: one 1x1 product per kernel row over copied pixels (conv_taps.h).
#pragma once

#include <cstdint>

namespace osprey::cpu {

enum class ConvForm { kTaps = 0 };
enum class FormPolicy { kAuto, kAlways, kNever };

void set_conv_form_policy(ConvForm form, FormPolicy policy);
FormPolicy conv_form_policy(ConvForm form);

// How many convolutions have run in `form` in this process (tests check the form was taken).
int64_t conv_form_runs(ConvForm form);
void count_conv_form_run(ConvForm form);

}  // namespace osprey::cpu
