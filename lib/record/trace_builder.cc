#include "record/trace_builder.h"

#include <algorithm>
#include <cstring>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "record/compress.h"

namespace trainmover::record {

std::vector<std::span<const std::byte>> EncodedTrace::parts() const {
  std::vector<std::span<const std::byte>> out;
  out.reserve(body.size() + 2);
  out.emplace_back(header);
  out.insert(out.end(), body.begin(), body.end());
  out.emplace_back(trailer);
  return out;
}

size_t EncodedTrace::size() const {
  size_t n = 0;
  for (auto p : parts()) n += p.size();
  return n;
}

std::vector<std::byte> EncodedTrace::concatenate() const {
  std::vector<std::byte> out;
  out.reserve(size());
  for (auto p : parts()) out.insert(out.end(), p.begin(), p.end());
  return out;
}

uint32_t TraceBuilder::next_index(uint32_t iteration) const {
  if (calls_ == 0 || iteration != last_iteration_) return 0;
  return next_index_;
}

Status TraceBuilder::append(const CallInfo& call, std::span<const std::byte> output) {
  if (calls_ > 0 && call.iteration < last_iteration_) {
    return error(TM_ERROR_INVALID_ARGUMENT, "trace call of iteration ", call.iteration,
                 " after a call of iteration ", last_iteration_);
  }
  uint32_t expected = next_index(call.iteration);
  if (call.index != expected) {
    return error(TM_ERROR_INVALID_ARGUMENT, "trace call ", call.index, " of iteration ",
                 call.iteration, ": the next index is ", expected);
  }
  TM_ASSIGN_OR_RETURN(std::span<std::byte> record,
                      body_.allocate(kRecordFixedBytes + output.size()));
  encode_record(call, output, record);
  last_iteration_ = call.iteration;
  next_index_ = call.index + 1;
  ++calls_;
  return Status::Ok();
}

Result<EncodedTrace> TraceBuilder::encode(uint32_t iterations, Compression compression) {
  if (calls_ > 0 && iterations <= last_iteration_) {
    return error(TM_ERROR_INVALID_ARGUMENT, "trace of ", iterations,
                 " iterations has a call of iteration ", last_iteration_);
  }
  if (iterations > kMaxIterations) {
    return error(TM_ERROR_INVALID_ARGUMENT, "a trace holds at most ", kMaxIterations,
                 " iterations, not ", iterations);
  }
  size_t offset = 0;  // of the piece in the body
  for (std::span<std::byte> piece : body_.mutable_pieces()) {
    for (size_t at = std::max(sealed_bytes_, offset) - offset; at < piece.size();) {
      size_t n = seal_record(piece.subspan(at));
      if (n == 0) return error(TM_ERROR_INTERNAL, "trace record at ", offset + at, " is cut");
      at += n;
    }
    offset += piece.size();
  }
  sealed_bytes_ = offset;
  EncodedTrace out;
  out.meta = meta_;
  out.body = body_.pieces();
  HeaderFields h;
  h.meta = meta_;
  h.iterations = iterations;
  h.calls = calls_;
  h.raw_body_bytes = body_.size();
  h.stored_body_bytes = body_.size();
  if (compression == Compression::kZstd) {
    std::vector<std::byte> raw;
    raw.reserve(body_.size());
    for (auto p : out.body) raw.insert(raw.end(), p.begin(), p.end());
    TM_ASSIGN_OR_RETURN(out.owned, zstd_compress(raw));
    out.body = {std::span<const std::byte>(out.owned)};
    h.flags |= kFlagZstd;
    h.stored_body_bytes = out.owned.size();
  }
  out.raw_body = body_.pieces();
  out.fields = h;
  out.header = encode_header(h);
  uint32_t crc = crc32c(out.header);
  for (auto p : out.body) {
    // Uncompressed, the body is the sealed records: their CRCs make the
    // file's without reading the outputs again.
    crc = (h.flags & kFlagZstd) != 0 ? crc32c(p, crc) : extend_crc_over_records(crc, p);
  }
  ByteWriter w(out.trailer);
  w.bytes(std::as_bytes(std::span(kTrailerMagic)));
  w.u32(crc32c(std::span<const std::byte>(out.trailer), crc));
  return out;
}

void TraceBuilder::free_calls() {
  body_.free_written();
  calls_ = 0;
  last_iteration_ = 0;
  next_index_ = 0;
  sealed_bytes_ = 0;
}

Result<std::vector<std::byte>> TraceBuilder::finish(uint32_t iterations, Compression compression) {
  TM_ASSIGN_OR_RETURN(EncodedTrace encoded, encode(iterations, compression));
  return encoded.concatenate();
}

}  // namespace trainmover::record
