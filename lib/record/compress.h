// zstd compression of trace bodies. Builds without libzstd still read and
// write uncompressed traces; these functions then fail with
// TM_ERROR_UNSUPPORTED and say what to install.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "common/status.h"

namespace trainmover::record {

bool zstd_available();
Result<std::vector<std::byte>> zstd_compress(std::span<const std::byte> raw);
// Fails unless `stored` is one zstd frame of exactly `raw_bytes` bytes.
Result<std::vector<std::byte>> zstd_decompress(std::span<const std::byte> stored, size_t raw_bytes);

}  // namespace trainmover::record
