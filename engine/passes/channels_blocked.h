// When the channels_blocked pass converts a region of channels-last convolutions to the blocked
// layout (channels_blocked.cc says what it does and why).
#pragma once

namespace osprey::passes {

// kAuto: where oneDNN has no AVX-512 kernels, for regions large enough to pay for their
// conversions; kAlways: every eligible region whatever the machine (tests, experiments);
// kNever: never. Process-wide. The starting value comes from the environment variable
// OSPREY_CHANNELS_BLOCKED ("auto", "on" or "off"; unset or anything else: auto), read once.
enum class BlockedPolicy { kAuto, kAlways, kNever };
void set_channels_blocked_policy(BlockedPolicy policy);
BlockedPolicy channels_blocked_policy();

// Sets the policy for one scope and restores the previous one (tests).
class BlockedPolicyScope {
 public:
  explicit BlockedPolicyScope(BlockedPolicy p) : old_(channels_blocked_policy()) {
    set_channels_blocked_policy(p);
  }
  ~BlockedPolicyScope() { set_channels_blocked_policy(old_); }
  BlockedPolicyScope(const BlockedPolicyScope&) = delete;
  BlockedPolicyScope& operator=(const BlockedPolicyScope&) = delete;

 private:
  BlockedPolicy old_;
};

}  // namespace osprey::passes
