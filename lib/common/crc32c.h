// CRC-32C (Castagnoli), used to detect corrupted frame headers and traces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace trainmover {

uint32_t crc32c(std::span<const std::byte> data, uint32_t seed = 0);

// The CRC-32C of A followed by B, from crc32c(A), crc32c(B) and B's length,
// without reading either: a trace's file checksum from its records'.
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

}  // namespace trainmover
