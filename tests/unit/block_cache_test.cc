// The large-buffer cache behind tensor storage: reuse of a released buffer of the same rounded
// size, the cap, trim, and tensors (zeroed and uninitialized) drawing from it.
#include "base/block_cache.h"

#include <gtest/gtest.h>

#include <cstring>

#include "osprey/tensor.h"

namespace osprey {
namespace {

TEST(BlockCache, ReleasedLargeBuffersAreReusedAndTrimmed) {
  trim_memory();
  EXPECT_EQ(detail::block_size_for(1000), 1000u);
  EXPECT_EQ(detail::block_size_for(detail::kMinBytes + 1), 2 * detail::kMinBytes);
  void* a = detail::acquire_block(3 * detail::kMinBytes - 100);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % detail::kBlockAlign, 0u);
  std::memset(a, 7, 3 * detail::kMinBytes);  // the whole rounded size is usable
  detail::release_block(a, 3 * detail::kMinBytes - 100);
  EXPECT_EQ(cached_memory_bytes(), 3 * detail::kMinBytes);
  void* b = detail::acquire_block(3 * detail::kMinBytes - 5);  // same rounded size
  EXPECT_EQ(a, b);
  EXPECT_EQ(cached_memory_bytes(), 0u);
  detail::release_block(b, 3 * detail::kMinBytes - 5);
  void* small = detail::acquire_block(4096);
  detail::release_block(small, 4096);  // small buffers are not cached
  EXPECT_EQ(cached_memory_bytes(), 3 * detail::kMinBytes);
  trim_memory();
  EXPECT_EQ(cached_memory_bytes(), 0u);
}

TEST(BlockCache, CapIsHonoured) {
  trim_memory();
  const size_t big = detail::kMaxCachedBytes / 2 + detail::kMinBytes;
  void* a = detail::acquire_block(big);
  void* b = detail::acquire_block(big);
  detail::release_block(a, big);
  detail::release_block(b, big);  // would exceed the cap: freed
  EXPECT_EQ(cached_memory_bytes(), detail::block_size_for(big));
  trim_memory();
}

TEST(BlockCache, TensorsComeZeroedUnlessAskedOtherwise) {
  trim_memory();
  const Shape shape = {1, 512, 1024};  // 2 MiB of float32
  {
    auto t = Tensor::create(DType::kFloat32, shape, 0);
    ASSERT_TRUE(t.ok());
    std::memset(t->raw_data(), 0xff, t->nbytes());
  }
  EXPECT_GE(cached_memory_bytes(), size_t{2} << 20);
  auto z = Tensor::create(DType::kFloat32, shape, 0);  // the dirty buffer again, zeroed
  ASSERT_TRUE(z.ok());
  for (int64_t i = 0; i < z->numel(); i += 4099) ASSERT_EQ(z->data<float>()[i], 0.0f);
  auto u = Tensor::create_uninitialized(DType::kFloat32, {1, 2, 3}, 0);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->shape(), (Shape{1, 2, 3}));
  auto refused = Tensor::create_uninitialized(DType::kFloat32, {1 << 20, 1 << 20}, 1000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  trim_memory();
}

}  // namespace
}  // namespace osprey
