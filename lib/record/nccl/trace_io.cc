#include "record/nccl/trace_io.h"

#include <map>
#include <utility>
#include <vector>

#include "common/log.h"
#include "record/compress.h"
#include "record/trace_builder.h"
#include "record/trace_dir.h"

namespace trainmover::nccl {
namespace {

// Records of api "nccl" carry ncclFunc_t codes (0-7); a communicator's
// creation is stored under this code of the interposer's own, its
// CommEntry as the output bytes.
constexpr uint16_t kOpCommCreated = 0x100;
constexpr uint64_t kMaxCount = uint64_t{1} << 48;
constexpr uint32_t kMaxComms = 1u << 16;

record::CallInfo call_info(uint32_t index, const CallEntry& call) {
  record::CallInfo info;
  info.index = index;
  info.comm = call.comm;
  info.op = static_cast<uint16_t>(call.desc.kind);
  info.redop = call.desc.op < 0 ? record::kNoRedop : static_cast<uint16_t>(call.desc.op);
  info.dtype = static_cast<uint16_t>(call.desc.datatype);
  info.elem_size = static_cast<uint16_t>(call.desc.elem_size);
  info.count = call.desc.count;
  info.peer = call.desc.peer;
  return info;
}

Result<CallDesc> call_desc(const record::CallInfo& info) {
  if (!valid_kind(info.op))
    return error(TM_ERROR_PROTOCOL, "corrupted: unknown NCCL call code ", info.op);
  if (info.count > kMaxCount)
    return error(TM_ERROR_PROTOCOL, "corrupted: count ", info.count, " is implausible");
  int32_t redop = info.redop == record::kNoRedop ? -1 : info.redop;
  auto desc = make_call(static_cast<CallKind>(info.op), info.dtype, redop, info.peer, info.count);
  if (!desc.ok()) return desc.status().with_context("corrupted");
  if (desc->elem_size != info.elem_size)
    return error(TM_ERROR_PROTOCOL, "corrupted: element size ", info.elem_size, " for ",
                 datatype_name(info.dtype));
  return desc;
}

// Assembles the trace in memory (lib/record's TraceBuilder) and stores it in
// the job's trace directory when finished. Calls of one communicator must be
// appended in their order; copies on different streams may land out of
// order, so early ones wait here for their predecessors.
class FileSink : public TraceSink {
 public:
  explicit FileSink(const Settings& settings)
      // Written by the completion writer, off the training stream.
      : dir_(settings.trace_dir), builder_(meta(settings), record::ArenaPages::kHuge) {}

  Status put_comm(const CommEntry& comm) override {
    if (comm.ordinal == 0) {
      builder_.meta().slot = comm.rank;
      builder_.meta().nslots = comm.nranks;
    }
    std::vector<std::byte> bytes;
    encode(comm, bytes);
    record::CallInfo info;
    info.index = next_index_;
    info.comm = comm.ordinal;
    info.op = kOpCommCreated;
    info.dtype = 1;  // ncclUint8
    info.elem_size = 1;
    info.count = bytes.size();
    TM_RETURN_IF_ERROR(builder_.append(info, bytes));
    ++next_index_;
    return Status::Ok();
  }

  Status put_call(const CallEntry& call, std::span<const std::byte> output) override {
    if (call.comm >= next_seq_.size()) next_seq_.resize(call.comm + 1, 0);
    if (call.seq != next_seq_[call.comm]) {
      held_.emplace(std::pair(call.comm, call.seq),
                    Held{call, std::vector<std::byte>(output.begin(), output.end())});
      return Status::Ok();
    }
    TM_RETURN_IF_ERROR(append(call, output));
    for (auto it = held_.find({call.comm, next_seq_[call.comm]}); it != held_.end();
         it = held_.find({call.comm, next_seq_[call.comm]})) {
      TM_RETURN_IF_ERROR(append(it->second.call, it->second.output));
      held_.erase(it);
    }
    return Status::Ok();
  }

  Status finish() override {
    if (!held_.empty())
      return error(TM_ERROR_INTERNAL, "call ", held_.begin()->first.second, " of communicator ",
                   held_.begin()->first.first, " landed but an earlier one never did");
    auto compression =
        record::zstd_available() ? record::Compression::kZstd : record::Compression::kNone;
    TM_ASSIGN_OR_RETURN(auto file, builder_.finish(1, compression));
    TM_ASSIGN_OR_RETURN(auto stored, record::TraceDirectory(dir_).store(file));
    if (stored.outcome == record::StoreOutcome::kConflict)
      log(LogLevel::kWarn, "nccl: trace not stored: ", stored.detail);
    else
      log(LogLevel::kInfo, "nccl: trace of ", builder_.calls(), " records ",
          record::store_outcome_name(stored.outcome), " at ", stored.path);
    return Status::Ok();
  }

 private:
  struct Held {
    CallEntry call;
    std::vector<std::byte> output;
  };

  static record::TraceMeta meta(const Settings& settings) {
    record::TraceMeta meta;
    meta.job_id = settings.job_id;
    meta.api = record::kApiNccl;
    meta.role = settings.role;
    meta.slot = 0;  // until the first communicator says which rank this is
    meta.nslots = 1;
    return meta;
  }

  Status append(const CallEntry& call, std::span<const std::byte> output) {
    TM_RETURN_IF_ERROR(builder_.append(call_info(next_index_, call), output));
    ++next_index_;
    ++next_seq_[call.comm];
    return Status::Ok();
  }

  std::string dir_;
  record::TraceBuilder builder_;
  uint32_t next_index_ = 0;
  std::vector<uint64_t> next_seq_;                      // by communicator
  std::map<std::pair<uint32_t, uint64_t>, Held> held_;  // (comm, seq) landed early
};

}  // namespace

Result<std::unique_ptr<TraceSink>> open_trace_sink(const Settings& settings) {
  return std::unique_ptr<TraceSink>(std::make_unique<FileSink>(settings));
}

Result<ReplayBook> load_replay_book(const Settings& settings) {
  record::TraceExpect expect;
  expect.job_id = settings.job_id;
  expect.api = record::kApiNccl;
  TM_ASSIGN_OR_RETURN(record::Trace trace,
                      record::TraceDirectory(settings.trace_dir).load(settings.role, expect));
  std::string where = str_cat("trace ", trace_path(settings));
  TraceBuilder builder;
  std::vector<uint64_t> seq;
  for (const record::CallView& view : trace.calls()) {
    const record::CallInfo& info = view.info;
    if (info.op == kOpCommCreated) {
      auto comm = decode_comm(view.output);
      if (!comm.ok()) return comm.status().with_context(where);
      if (comm->ordinal != info.comm)
        return error(TM_ERROR_PROTOCOL, where, ": corrupted: communicator ", comm->ordinal,
                     " stored as ", info.comm);
      TM_RETURN_IF_ERROR(builder.add_comm(*comm).with_context(where));
      continue;
    }
    auto desc = call_desc(info);
    if (!desc.ok()) return desc.status().with_context(where);
    if (info.comm >= kMaxComms)
      return error(TM_ERROR_PROTOCOL, where, ": corrupted: communicator ", info.comm);
    if (info.comm >= seq.size()) seq.resize(info.comm + 1, 0);
    CallEntry entry{info.comm, seq[info.comm]++, *desc, view.output.size()};
    TM_RETURN_IF_ERROR(builder.add_call(entry, view.output).with_context(where));
  }
  auto book = builder.build();
  if (!book.ok()) return book.status().with_context(where);
  return book;
}

}  // namespace trainmover::nccl
