// The trace file format: the collective calls a process made during its
// first iterations, with their output bytes, so that a standby can replay
// them without talking to the job.
//
// Little-endian throughout:
//
//   header   magic "TMTRACE\0" (8), u16 version, u16 flags, u32 length L of
//            the header body, then the body: u64 job id, blob api, blob role,
//            i32 slot, i32 nslots, u32 iterations, u64 calls, u64 stored
//            body bytes, u64 raw body bytes; then u32 CRC-32C of all of the
//            above. (blob: u32 length, then bytes.)
//   body     the call records, zstd-compressed when flags has kFlagZstd.
//            Record: u32 iteration, u32 index within the iteration, u32
//            comm, u16 op, u16 redop, u16 dtype, u16 element size, u64
//            element count, i32 root or peer, u64 output length, the output
//            bytes, u32 CRC-32C of the record.
//   trailer  magic "TMTREND\0" (8), u32 CRC-32C of every byte before it.
//
// The version comes before anything that may change between versions, so a
// reader names a wrong version instead of reporting corruption. The `api`
// names the code space of op, redop and dtype: "trainmover" (tm_* calls,
// codes below) or "nccl" (ncclFunc / ncclRedOp_t / ncclDataType_t values,
// written by the NCCL interposer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "record/role.h"

namespace trainmover::record {

inline constexpr char kTraceMagic[8] = {'T', 'M', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr char kTrailerMagic[8] = {'T', 'M', 'T', 'R', 'E', 'N', 'D', '\0'};
inline constexpr uint16_t kTraceVersion = 1;
inline constexpr uint16_t kFlagZstd = 1;
inline constexpr uint16_t kKnownFlags = kFlagZstd;
inline constexpr size_t kPrologueBytes = 16;  // magic, version, flags, header body length
inline constexpr size_t kMaxHeaderBody = 1024;
inline constexpr size_t kTrailerBytes = 12;
inline constexpr size_t kRecordFixedBytes = 44;  // a record without its output bytes
inline constexpr size_t kMaxApiText = 32;
inline constexpr uint32_t kMaxIterations = 1u << 20;  // bounds the reader's iteration index

inline constexpr const char* kApiTrainmover = "trainmover";
inline constexpr const char* kApiNccl = "nccl";

// Op codes of the "trainmover" api.
enum class TraceOp : uint16_t {
  kAllreduce = 1,
  kReduceScatter = 2,
  kAllgather = 3,
  kBroadcast = 4,
  kBarrier = 5,
  kSend = 6,
  kRecv = 7,
};
const char* trace_op_name(uint16_t op);  // "allreduce"..., "op<N>" if unknown
inline constexpr uint16_t kNoRedop = 0xFFFF;
inline constexpr int32_t kNoPeer = -1;

// Who recorded, and for what. Identity = everything but `slot`: data-parallel
// replicas of a role record from different slots and are still duplicates.
struct TraceMeta {
  uint64_t job_id = 0;
  std::string api = kApiTrainmover;
  Role role;
  int32_t slot = -1;  // the recording slot, for information
  int32_t nslots = 0;
  bool operator==(const TraceMeta&) const = default;
};

// One call, without its output bytes.
struct CallInfo {
  uint32_t iteration = 0;
  uint32_t index = 0;  // 0-based sequence number within the iteration
  uint32_t comm = 0;   // which communicator of the process (0 when only one)
  uint16_t op = 0;
  uint16_t redop = kNoRedop;
  uint16_t dtype = 0;
  uint16_t elem_size = 0;
  uint64_t count = 0;
  int32_t peer = kNoPeer;  // broadcast root, send/recv peer
  bool operator==(const CallInfo&) const = default;
};

struct CallView {
  CallInfo info;
  std::span<const std::byte> output;
};

// What a header says besides the meta data.
struct HeaderFields {
  TraceMeta meta;
  uint16_t flags = 0;
  uint32_t iterations = 0;
  uint64_t calls = 0;
  uint64_t stored_body_bytes = 0;
  uint64_t raw_body_bytes = 0;
};

// Header bytes, CRC included.
std::vector<std::byte> encode_header(const HeaderFields& header);
// Writes one record into `out`, which has exactly kRecordFixedBytes +
// output.size() bytes, with its CRC left zero until seal_record().
void encode_record(const CallInfo& call, std::span<const std::byte> output,
                   std::span<std::byte> out);
// Writes the CRC of the record that starts `records` and returns its size
// (0 when `records` is too short to hold the record its length says).
size_t seal_record(std::span<std::byte> records);
// Extends `crc` (a CRC-32C of what precedes) over sealed records, whole
// records including their stored CRCs, reading only those CRCs and lengths:
// the file checksum without a second pass over the outputs. Bytes that do
// not form a record are read.
uint32_t extend_crc_over_records(uint32_t crc, std::span<const std::byte> records);
// "allreduce(sum) dtype 0 x 1024 peer -1" in the trace's api.
std::string describe_call(const CallInfo& call, const std::string& api);

}  // namespace trainmover::record
