#include "record/trace_builder.h"

#include "common/bytes.h"
#include "common/crc32c.h"
#include "record/compress.h"

namespace trainmover::record {

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
  encode_record(call, output, body_);
  last_iteration_ = call.iteration;
  next_index_ = call.index + 1;
  ++calls_;
  return Status::Ok();
}

Result<std::vector<std::byte>> TraceBuilder::finish(uint32_t iterations,
                                                    Compression compression) const {
  if (calls_ > 0 && iterations <= last_iteration_) {
    return error(TM_ERROR_INVALID_ARGUMENT, "trace of ", iterations,
                 " iterations has a call of iteration ", last_iteration_);
  }
  HeaderFields h;
  h.meta = meta_;
  h.iterations = iterations;
  h.calls = calls_;
  h.raw_body_bytes = body_.size();
  std::vector<std::byte> compressed;
  std::span<const std::byte> stored = body_;
  if (compression == Compression::kZstd) {
    TM_ASSIGN_OR_RETURN(compressed, zstd_compress(body_));
    stored = compressed;
    h.flags |= kFlagZstd;
  }
  h.stored_body_bytes = stored.size();
  std::vector<std::byte> file = encode_header(h);
  file.reserve(file.size() + stored.size() + kTrailerBytes);
  file.insert(file.end(), stored.begin(), stored.end());
  ByteWriter w(file);
  w.bytes(std::as_bytes(std::span(kTrailerMagic)));
  w.u32(crc32c(file));
  return file;
}

}  // namespace trainmover::record
