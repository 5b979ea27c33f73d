// CRC-32C (Castagnoli), used to detect corrupted frame headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace trainmover {

uint32_t crc32c(std::span<const std::byte> data, uint32_t seed = 0);

}  // namespace trainmover
