#include "kernels/cpu/conv_forms.h"

#include <atomic>

namespace osprey::cpu {
namespace {

constexpr int kForms = 1;
std::atomic<int> g_policy[kForms] = {static_cast<int>(FormPolicy::kAuto)};
std::atomic<int64_t> g_runs[kForms] = {0};

}  // namespace

void set_conv_form_policy(ConvForm form, FormPolicy policy) {
  g_policy[static_cast<int>(form)].store(static_cast<int>(policy));
}
FormPolicy conv_form_policy(ConvForm form) {
  return static_cast<FormPolicy>(g_policy[static_cast<int>(form)].load());
}
int64_t conv_form_runs(ConvForm form) {
  return g_runs[static_cast<int>(form)].load(std::memory_order_relaxed);
}
void count_conv_form_run(ConvForm form) {
  g_runs[static_cast<int>(form)].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace osprey::cpu
