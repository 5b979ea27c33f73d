#include "record/trace.h"

#include <algorithm>
#include <cstring>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "record/compress.h"
#include "record/file_io.h"

namespace trainmover::record {
namespace {

Status truncated(size_t have, uint64_t need, const char* what) {
  return error(TM_ERROR_PROTOCOL, "truncated: the file has ", have, " bytes, its ", what, " needs ",
               need);
}

template <typename... Args>
Status corrupted(const Args&... parts) {
  return error(TM_ERROR_PROTOCOL, "corrupted: ", parts...);
}

bool has_magic(std::span<const std::byte> bytes, const char (&magic)[8]) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), magic, 8) == 0;
}

// Magic, version, flags and the header body length, in that order, so a
// wrong version is named before its header is interpreted.
Result<size_t> check_prologue(std::span<const std::byte> file, HeaderFields& h) {
  if (file.empty()) return truncated(0, kPrologueBytes, "prologue");
  size_t magic_len = std::min<size_t>(file.size(), 8);
  if (std::memcmp(file.data(), kTraceMagic, magic_len) != 0) {
    return error(TM_ERROR_PROTOCOL, "not a trace: the file does not start with TMTRACE");
  }
  if (file.size() < kPrologueBytes) return truncated(file.size(), kPrologueBytes, "prologue");
  ByteReader r(file.subspan(8, 8));
  uint16_t version = r.u16();
  h.flags = r.u16();
  uint32_t body_len = r.u32();
  if (version != kTraceVersion) {
    return error(TM_ERROR_PROTOCOL, "wrong version: the trace has format version ", version,
                 ", this build reads version ", kTraceVersion);
  }
  if ((h.flags & ~kKnownFlags) != 0) return corrupted("unknown header flags 0x", std::hex, h.flags);
  if (body_len > kMaxHeaderBody) return corrupted("header length ", body_len, " is too large");
  size_t header_end = kPrologueBytes + body_len + 4;
  if (file.size() < header_end) return truncated(file.size(), header_end, "header");
  ByteReader crc(file.subspan(header_end - 4, 4));
  if (crc.u32() != crc32c(file.first(header_end - 4))) {
    return corrupted("header checksum mismatch");
  }
  return header_end;
}

Status read_header_body(std::span<const std::byte> body, HeaderFields& h) {
  ByteReader r(body);
  h.meta.job_id = r.u64();
  h.meta.api = r.blob(kMaxApiText);
  std::string role = r.blob(kMaxRoleText);
  h.meta.slot = r.i32();
  h.meta.nslots = r.i32();
  h.iterations = r.u32();
  h.calls = r.u64();
  h.stored_body_bytes = r.u64();
  h.raw_body_bytes = r.u64();
  if (!r.ok() || r.remaining() != 0) return corrupted("malformed header fields");
  auto parsed = Role::parse(role);
  if (!parsed.ok()) return corrupted("bad role in header: ", parsed.status().message());
  h.meta.role = std::move(parsed.value());
  if (h.meta.api.empty()) return corrupted("empty api name in header");
  if (h.iterations > kMaxIterations) {
    return corrupted("header declares ", h.iterations, " iterations, more than ", kMaxIterations);
  }
  if (h.meta.nslots < 1 || h.meta.slot < 0 || h.meta.slot >= h.meta.nslots) {
    return corrupted("slot ", h.meta.slot, " of ", h.meta.nslots, " slots in header");
  }
  if ((h.flags & kFlagZstd) == 0 && h.raw_body_bytes != h.stored_body_bytes) {
    return corrupted("uncompressed body of ", h.stored_body_bytes, " bytes declares ",
                     h.raw_body_bytes, " raw bytes");
  }
  return Status::Ok();
}

Status check_identity(const TraceMeta& meta, const TraceExpect& expect) {
  if (expect.job_id && *expect.job_id != meta.job_id) {
    return error(TM_ERROR_INVALID_ARGUMENT, "wrong job: the trace was recorded by job ",
                 meta.job_id, ", not job ", *expect.job_id);
  }
  if (expect.role && *expect.role != meta.role) {
    return error(TM_ERROR_INVALID_ARGUMENT, "wrong role: the trace records role '",
                 meta.role.canonical(), "', not '", expect.role->canonical(), "'");
  }
  if (expect.api && *expect.api != meta.api) {
    return error(TM_ERROR_INVALID_ARGUMENT, "wrong api: the trace records ", meta.api,
                 " calls, not ", *expect.api, " calls");
  }
  return Status::Ok();
}

// Whole-file size and trailer: everything the header promised is there and
// the file checksum holds.
Status check_extent(std::span<const std::byte> file, size_t header_end, const HeaderFields& h) {
  uint64_t body_room = file.size() - header_end;
  if (h.stored_body_bytes > body_room) {
    return error(TM_ERROR_PROTOCOL, "truncated: the file has ", file.size(),
                 " bytes, its header declares a body of ", h.stored_body_bytes, " more");
  }
  if (body_room - h.stored_body_bytes < kTrailerBytes) {
    return truncated(file.size(), header_end + h.stored_body_bytes + kTrailerBytes, "trailer");
  }
  size_t trailer_at = header_end + h.stored_body_bytes;
  if (file.size() > trailer_at + kTrailerBytes) {
    return corrupted(file.size() - trailer_at - kTrailerBytes, " bytes after the trailer");
  }
  std::span<const std::byte> trailer = file.subspan(trailer_at);
  if (!has_magic(trailer, kTrailerMagic)) return corrupted("no trailer after the body");
  ByteReader r(trailer.subspan(8));
  if (r.u32() != crc32c(file.first(trailer_at + 8))) return corrupted("file checksum mismatch");
  return Status::Ok();
}

}  // namespace

Result<std::pair<HeaderFields, size_t>> parse_header(std::span<const std::byte> file) {
  HeaderFields h;
  TM_ASSIGN_OR_RETURN(size_t header_end, check_prologue(file, h));
  TM_RETURN_IF_ERROR(
      read_header_body(file.subspan(kPrologueBytes, header_end - kPrologueBytes - 4), h));
  return std::pair<HeaderFields, size_t>(std::move(h), header_end);
}

Result<Trace> Trace::parse(std::vector<std::byte> file, const TraceExpect& expect,
                           size_t max_body_bytes) {
  Trace t;
  t.file_bytes_ = file.size();
  TM_ASSIGN_OR_RETURN(size_t header_end, check_prologue(file, t.header_));
  TM_RETURN_IF_ERROR(read_header_body(
      std::span<const std::byte>(file).subspan(kPrologueBytes, header_end - kPrologueBytes - 4),
      t.header_));
  TM_RETURN_IF_ERROR(check_extent(file, header_end, t.header_));
  TM_RETURN_IF_ERROR(check_identity(t.header_.meta, expect));
  if (t.header_.raw_body_bytes > max_body_bytes) {
    return corrupted("body of ", t.header_.raw_body_bytes, " bytes exceeds the limit of ",
                     max_body_bytes);
  }
  if (t.compressed()) {
    auto stored = std::span<const std::byte>(file).subspan(header_end, t.header_.stored_body_bytes);
    TM_ASSIGN_OR_RETURN(t.storage_, zstd_decompress(stored, t.header_.raw_body_bytes));
  } else {
    file.resize(header_end + t.header_.stored_body_bytes);
    file.erase(file.begin(), file.begin() + static_cast<ptrdiff_t>(header_end));
    t.storage_ = std::move(file);
  }
  TM_RETURN_IF_ERROR(t.parse_body(t.storage_));
  return t;
}

Status Trace::parse_body(std::span<const std::byte> body) {
  // Every record has at least its fixed part: bounds the reservation.
  if (header_.calls > body.size() / kRecordFixedBytes) {
    return corrupted("header declares ", header_.calls, " calls in a body of ", body.size(),
                     " bytes");
  }
  calls_.reserve(header_.calls);
  iteration_start_.assign(1, 0);
  size_t at = 0;
  while (at < body.size()) {
    ByteReader r(body.subspan(at));
    CallInfo c;
    c.iteration = r.u32();
    c.index = r.u32();
    c.comm = r.u32();
    c.op = r.u16();
    c.redop = r.u16();
    c.dtype = r.u16();
    c.elem_size = r.u16();
    c.count = r.u64();
    c.peer = r.i32();
    uint64_t out_len = r.u64();
    size_t n = calls_.size();
    if (!r.ok() || out_len > r.remaining() || r.remaining() - out_len < 4) {
      return corrupted("call record ", n, " runs past the end of the body");
    }
    std::span<const std::byte> output = r.bytes(out_len);
    size_t record_len = kRecordFixedBytes + out_len;
    if (r.u32() != crc32c(body.subspan(at, record_len - 4))) {
      return corrupted("checksum mismatch in call ", c.index, " of iteration ", c.iteration);
    }
    if (c.iteration >= header_.iterations || c.iteration + 1 < iteration_start_.size()) {
      return corrupted("call record ", n, " has iteration ", c.iteration, " out of order");
    }
    while (iteration_start_.size() <= c.iteration) iteration_start_.push_back(n);
    if (c.index != n - iteration_start_[c.iteration]) {
      return corrupted("call record ", n, " has index ", c.index, " in iteration ", c.iteration,
                       ", expected ", n - iteration_start_[c.iteration]);
    }
    calls_.push_back(CallView{c, output});
    at += record_len;
  }
  if (calls_.size() != header_.calls) {
    return corrupted("body holds ", calls_.size(), " calls, the header declares ", header_.calls);
  }
  while (iteration_start_.size() <= header_.iterations) iteration_start_.push_back(calls_.size());
  return Status::Ok();
}

Result<Trace> Trace::load(const std::string& path, const TraceExpect& expect) {
  auto bytes = read_file(path, kDefaultMaxTraceBytes);
  if (!bytes.ok()) return bytes.status();
  auto trace = parse(std::move(bytes.value()), expect);
  if (!trace.ok()) return trace.status().with_context(str_cat("trace ", path));
  return trace;
}

std::span<const CallView> Trace::iteration(uint32_t i) const {
  if (i >= header_.iterations) return {};
  return std::span<const CallView>(calls_).subspan(iteration_start_[i],
                                                   iteration_start_[i + 1] - iteration_start_[i]);
}

bool Trace::same_content(const Trace& other) const {
  TraceMeta a = meta(), b = other.meta();
  a.slot = b.slot = 0;
  if (a != b || iterations() != other.iterations() || calls_.size() != other.calls_.size()) {
    return false;
  }
  for (size_t i = 0; i < calls_.size(); ++i) {
    const CallView &x = calls_[i], &y = other.calls_[i];
    if (!(x.info == y.info) || x.output.size() != y.output.size() ||
        !std::equal(x.output.begin(), x.output.end(), y.output.begin())) {
      return false;
    }
  }
  return true;
}

Status TraceCursor::begin_iteration() {
  if (in_iteration_) {
    return error(TM_ERROR_PROTOCOL, "iteration ", iteration_,
                 " began again before it ended (tm_iteration_end missing)");
  }
  if (done_ >= trace_->iterations()) {
    return error(TM_ERROR_PROTOCOL, "past the end of the trace: it records ", trace_->iterations(),
                 " iterations, iteration ", done_, " was asked for");
  }
  iteration_ = done_;
  index_ = 0;
  in_iteration_ = true;
  return Status::Ok();
}

Result<const CallView*> TraceCursor::next() {
  if (!in_iteration_) {
    return error(TM_ERROR_PROTOCOL,
                 "call outside an iteration: the trace records only calls "
                 "between tm_iteration_begin and tm_iteration_end");
  }
  std::span<const CallView> calls = trace_->iteration(iteration_);
  if (index_ >= calls.size()) {
    return error(TM_ERROR_PROTOCOL, "iteration ", iteration_, ", call ", index_,
                 ": past the end of the iteration, which recorded ", calls.size(), " calls");
  }
  return &calls[index_++];
}

Status TraceCursor::end_iteration() {
  if (!in_iteration_) return error(TM_ERROR_PROTOCOL, "iteration end without a begin");
  size_t recorded = trace_->iteration(iteration_).size();
  if (index_ != recorded) {
    return error(TM_ERROR_PROTOCOL, "iteration ", iteration_, " ended after ", index_,
                 " calls, the trace recorded ", recorded);
  }
  in_iteration_ = false;
  ++done_;
  return Status::Ok();
}

}  // namespace trainmover::record
