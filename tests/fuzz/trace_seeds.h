// Shared by fuzz_trace and the seed generator: the fuzzer's input layout,
// checksum resealing (so mutations get past the CRCs to the checks behind
// them), and a sample trace.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/crc32c.h"
#include "record/trace_builder.h"

namespace trainmover::fuzz {

// fuzz_trace input: one flag byte, then the trace file.
inline constexpr uint8_t kTraceReseal = 1;  // recompute every CRC before parsing
inline constexpr uint8_t kTraceExpect = 2;  // require job kTraceJob and role stage=first
inline constexpr uint64_t kTraceJob = 0x46555A5A;
inline constexpr size_t kTraceMaxBody = size_t{1} << 20;

inline void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

inline uint64_t get_le(const std::vector<uint8_t>& b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

inline uint32_t crc_of(const std::vector<uint8_t>& b, size_t from, size_t n) {
  return crc32c(std::span<const std::byte>(reinterpret_cast<const std::byte*>(b.data()) + from, n));
}

// Rewrites the header CRC, each record CRC of an uncompressed body, and the
// file CRC, as far as the lengths in the file allow.
inline void reseal_trace(std::vector<uint8_t>& b) {
  if (b.size() < record::kPrologueBytes) return;
  size_t header_end = record::kPrologueBytes + get_le(b, 12, 4) + 4;
  if (header_end > b.size()) return;
  put_u32(b, header_end - 4, crc_of(b, 0, header_end - 4));
  size_t trailer =
      b.size() >= header_end + record::kTrailerBytes ? b.size() - record::kTrailerBytes : 0;
  bool compressed = (get_le(b, 10, 2) & record::kFlagZstd) != 0;
  for (size_t at = header_end;
       !compressed && trailer > 0 && at + record::kRecordFixedBytes <= trailer;) {
    uint64_t out_len = get_le(b, at + 32, 8);
    if (out_len > trailer - at - record::kRecordFixedBytes) break;
    size_t len = record::kRecordFixedBytes + out_len;
    put_u32(b, at + len - 4, crc_of(b, at, len - 4));
    at += len;
  }
  if (trailer > 0) put_u32(b, b.size() - 4, crc_of(b, 0, b.size() - 4));
}

// Two iterations of a few calls, of job kTraceJob and role stage=first.
inline std::vector<std::byte> sample_trace(record::Compression compression) {
  record::TraceMeta meta;
  meta.job_id = kTraceJob;
  meta.role.stage = record::Stage::kFirst;
  meta.slot = 1;
  meta.nslots = 2;
  record::TraceBuilder b(meta);
  std::vector<std::byte> out(48, std::byte{7});
  for (uint32_t it = 0; it < 2; ++it) {
    for (uint32_t i = 0; i < 3; ++i) {
      record::CallInfo c;
      c.iteration = it;
      c.index = i;
      c.op = static_cast<uint16_t>(i + 1);
      c.elem_size = 4;
      c.count = 4 * i;
      if (!b.append(c, std::span(out).first(16 * i)).ok()) return {};
    }
  }
  auto file = b.finish(2, compression);
  return file.ok() ? file.value() : std::vector<std::byte>();
}

}  // namespace trainmover::fuzz
