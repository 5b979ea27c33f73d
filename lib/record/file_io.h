// Whole-file reads and atomic writes, for traces.
//
// A write goes to a temporary file in the same directory (mode 0640, never
// world-readable or writable), is fsync'ed, then renamed or linked into
// place and the directory fsync'ed: a reader sees the old file, the whole
// new one, or none, never a partial one.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainmover::record {

enum class Replace { kYes, kNo };

// With Replace::kNo an existing file is kept and the result is false (the
// new bytes are discarded); otherwise the result is true.
Result<bool> write_file_atomic(const std::string& path, std::span<const std::byte> bytes,
                               Replace replace);
// The same, for a file made of `parts` written one after the other.
Result<bool> write_file_atomic(const std::string& path,
                               std::span<const std::span<const std::byte>> parts, Replace replace);
// Fails with TM_ERROR_NOT_FOUND when the file does not exist, and with
// TM_ERROR_INVALID_ARGUMENT when it is larger than max_bytes.
Result<std::vector<std::byte>> read_file(const std::string& path, size_t max_bytes);
// Reads `path` from its start in chunks of at most 256 KiB, each one full
// but the last, into one buffer reused for all of them, and hands each to
// `visit`; stops early when `visit` returns false. For reading a large file
// without holding all of it. TM_ERROR_NOT_FOUND when it does not exist.
Status read_file_chunks(const std::string& path,
                        const std::function<bool(std::span<const std::byte>)>& visit);
// Creates the directory (mode 0750) and its missing parents.
Status make_directories(const std::string& path);

}  // namespace trainmover::record
