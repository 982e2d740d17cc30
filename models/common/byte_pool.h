// Byte buffers kept for reuse: frames, DDP segments, DMA data and TLP payloads are made and freed
// a few times for every frame, and buffers of a frame's size are past what the C library keeps
// at hand (its per-thread cache ends at about 1 KiB), so each cost a search of its bins. A buffer
// given back here is handed out again by the next take of its size class (powers of two from
// 64 B to 64 KiB, at most kKeptPerClass each); what is bigger, or beyond that count, is freed.
// Buffers are per thread. Nothing about a buffer's contents carries over: a take is empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rnic {

using Bytes = std::vector<uint8_t>;

// An empty buffer that holds at least `capacity` bytes without growing.
Bytes take_bytes(size_t capacity);
// `b` is done with: its storage goes back for reuse (or is freed).
void give_bytes(Bytes&& b);
// A shared, read-only buffer whose storage goes back for reuse when the last owner lets go.
std::shared_ptr<const Bytes> share_bytes(Bytes&& b);

// Buffers currently kept, over all classes (for tests).
size_t kept_bytes_buffers();

}  // namespace rnic
