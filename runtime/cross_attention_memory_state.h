// What a CrossAttentionMemory holds: an encoder output's keys and values, packed per (item,
// key/value head) in the layout of its operator's attention kernel, and their valid lengths.
#ifndef EDGEATTN_RUNTIME_CROSS_ATTENTION_MEMORY_STATE_H_
#define EDGEATTN_RUNTIME_CROSS_ATTENTION_MEMORY_STATE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "hwy/aligned_allocator.h"
#include "simd/attention.h"

namespace edgeattn {

struct EDGEATTN_HIDDEN CrossAttentionMemory::State {
  std::uint64_t owner;  // the id of the operator it was made for
  std::size_t batch, max_length, kv_heads;
  std::size_t length = 0;                  // frames of the encoder output projected last
  std::vector<std::size_t> lengths;        // its valid frames per item
  const simd::AttentionKernel* attention;  // whose layout the keys and values are in
  std::size_t keys_stride, values_stride;  // bytes per (item, key/value head)
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> keys, values;
  // Readers (DecodeCross) at once, or -1 while ProjectMemory writes (ReadingUse, WritingUse).
  mutable std::atomic<int> users{0};
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_CROSS_ATTENTION_MEMORY_STATE_H_
