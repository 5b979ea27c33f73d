#include "record/nccl/replay_book.h"

#include <algorithm>
#include <utility>

namespace trainmover::nccl {
namespace {

// Bounds what a corrupted trace can make us allocate before checks run.
constexpr uint32_t kMaxComms = 1u << 16;

}  // namespace

Status TraceBuilder::add_comm(const CommEntry& comm) {
  if (comm.ordinal >= kMaxComms)
    return error(TM_ERROR_PROTOCOL, "NCCL trace: communicator ordinal ", comm.ordinal,
                 " is out of range");
  if (comm.ordinal >= comms_.size()) comms_.resize(comm.ordinal + 1);
  if (comms_[comm.ordinal])
    return error(TM_ERROR_PROTOCOL, "NCCL trace: communicator ", comm.ordinal, " appears twice");
  comms_[comm.ordinal] = comm;
  return Status::Ok();
}

Status TraceBuilder::add_call(const CallEntry& call, std::span<const std::byte> output) {
  if (output.size() != call.output_bytes)
    return error(TM_ERROR_PROTOCOL, "NCCL trace: call ", call.seq, " on communicator ", call.comm,
                 " has ", output.size(), " output bytes, its entry says ", call.output_bytes);
  calls_.push_back(Call{call, payload_.size()});
  payload_.insert(payload_.end(), output.begin(), output.end());
  return Status::Ok();
}

Result<ReplayBook> TraceBuilder::build() {
  ReplayBook book;
  for (size_t i = 0; i < comms_.size(); ++i) {
    if (!comms_[i]) return error(TM_ERROR_PROTOCOL, "NCCL trace: communicator ", i, " is missing");
    book.comms_.push_back(*comms_[i]);
  }
  book.calls_.resize(book.comms_.size());
  book.cursor_.assign(book.comms_.size(), 0);
  std::stable_sort(calls_.begin(), calls_.end(), [](const Call& a, const Call& b) {
    return a.entry.comm != b.entry.comm ? a.entry.comm < b.entry.comm : a.entry.seq < b.entry.seq;
  });
  for (const Call& call : calls_) {
    const CallEntry& e = call.entry;
    if (e.comm >= book.comms_.size())
      return error(TM_ERROR_PROTOCOL, "NCCL trace: call ", e.seq, " on unknown communicator ",
                   e.comm);
    auto& list = book.calls_[e.comm];
    if (e.seq != list.size())
      return error(TM_ERROR_PROTOCOL, "NCCL trace: communicator ", e.comm, " has call ", e.seq,
                   " where call ", list.size(), " was expected (missing or repeated)");
    const CommEntry& c = book.comms_[e.comm];
    if (e.output_bytes != output_bytes(e.desc, c.rank, c.nranks))
      return error(TM_ERROR_PROTOCOL, "NCCL trace: call ", e.seq, " on communicator ", e.comm, " (",
                   describe(e.desc), ") stores ", e.output_bytes, " bytes, expected ",
                   output_bytes(e.desc, c.rank, c.nranks));
    list.push_back(ReplayBook::Call{e, call.offset});
  }
  book.payload_ = std::move(payload_);
  *this = TraceBuilder();
  return book;
}

Result<CommEntry> ReplayBook::open_next(const char* how) {
  if (opened_ >= comms_.size())
    return error(TM_ERROR_NOT_FOUND, "the program creates communicator ", opened_, " with ", how,
                 " but the trace recorded only ", comms_.size());
  return comms_[opened_];
}

Result<CommEntry> ReplayBook::open_init(int nranks, int rank) {
  TM_ASSIGN_OR_RETURN(CommEntry c, open_next("ncclCommInitRank"));
  if (c.origin != CommOrigin::kInit || c.nranks != nranks || c.rank != rank)
    return error(TM_ERROR_INVALID_ARGUMENT, "the program creates communicator ", opened_,
                 " with ncclCommInitRank (rank ", rank, " of ", nranks, ") but the trace recorded ",
                 describe(c));
  ++opened_;
  return c;
}

Result<CommEntry> ReplayBook::open_split(uint32_t parent, int color, int key) {
  TM_ASSIGN_OR_RETURN(CommEntry c, open_next("ncclCommSplit"));
  if (c.origin != CommOrigin::kSplit || c.parent != static_cast<int32_t>(parent) ||
      c.color != color || c.key != key)
    return error(TM_ERROR_INVALID_ARGUMENT, "the program creates communicator ", opened_,
                 " by splitting ", parent, " with color ", color, " key ", key,
                 " but the trace recorded ", describe(c));
  ++opened_;
  return c;
}

Result<std::optional<ReplayBook::Answer>> ReplayBook::next(uint32_t comm, const CallDesc& asked) {
  if (comm >= comms_.size())
    return error(TM_ERROR_INVALID_ARGUMENT, "NCCL call on communicator ", comm,
                 ", which the trace does not have");
  uint64_t& at = cursor_[comm];
  if (at >= calls_[comm].size()) return std::optional<Answer>();
  const Call& call = calls_[comm][at];
  if (!(call.entry.desc == asked))
    return error(TM_ERROR_INVALID_ARGUMENT, "call ", at, " on ", describe(comms_[comm]),
                 ": the program calls ", describe(asked), " but the trace recorded ",
                 describe(call.entry.desc));
  ++at;
  auto output = std::span<const std::byte>(payload_).subspan(call.offset, call.entry.output_bytes);
  return std::optional<Answer>(Answer{&call.entry, output});
}

}  // namespace trainmover::nccl
