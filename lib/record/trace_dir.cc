#include "record/trace_dir.h"

#include <unistd.h>

#include "record/compress.h"
#include "record/file_io.h"

namespace trainmover::record {
namespace {

// How two traces of one role differ, for a conflict report.
std::string difference(const Trace& kept, const Trace& dropped) {
  if (kept.meta().job_id != dropped.meta().job_id) return "they come from different jobs";
  if (kept.meta().api != dropped.meta().api || kept.meta().nslots != dropped.meta().nslots) {
    return "their api or number of slots differ";
  }
  if (kept.iterations() != dropped.iterations()) return "their numbers of iterations differ";
  const auto& a = kept.calls();
  const auto& b = dropped.calls();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (!(a[i].info == b[i].info)) {
      return str_cat("call ", a[i].info.index, " of iteration ", a[i].info.iteration,
                     " differs: ", describe_call(a[i].info, kept.meta().api), " vs ",
                     describe_call(b[i].info, dropped.meta().api));
    }
    if (!std::equal(a[i].output.begin(), a[i].output.end(), b[i].output.begin(),
                    b[i].output.end())) {
      return str_cat("the output of call ", a[i].info.index, " of iteration ", a[i].info.iteration,
                     " differs (slot-dependent output: declare a distinguishing role attribute, "
                     "e.g. dp=<replica>)");
    }
  }
  return str_cat("they record ", a.size(), " and ", b.size(), " calls");
}

// Whether `file` holds the same content as `mine` (all but the slot), with
// one pass of comparison and no checksum work: the common outcome for
// data-parallel replicas, decided cheaply.
bool same_as(std::span<const std::byte> file, const EncodedTrace& mine) {
  auto header = parse_header(file);
  if (!header.ok()) return false;
  auto [theirs, body_at] = std::move(header.value());
  TraceMeta a = theirs.meta, b = mine.meta;
  a.slot = b.slot = 0;
  if (a != b || theirs.iterations != mine.fields.iterations || theirs.calls != mine.fields.calls ||
      theirs.raw_body_bytes != mine.fields.raw_body_bytes ||
      theirs.stored_body_bytes > file.size() - body_at) {
    return false;
  }
  std::span<const std::byte> stored = file.subspan(body_at, theirs.stored_body_bytes);
  std::vector<std::byte> raw;
  if ((theirs.flags & kFlagZstd) != 0) {
    auto unpacked = zstd_decompress(stored, theirs.raw_body_bytes);
    if (!unpacked.ok()) return false;
    raw = std::move(unpacked.value());
    stored = raw;
  }
  size_t at = 0;
  for (auto piece : mine.raw_body) {
    if (piece.size() > stored.size() - at ||
        !std::equal(piece.begin(), piece.end(), stored.begin() + static_cast<ptrdiff_t>(at))) {
      return false;
    }
    at += piece.size();
  }
  return at == stored.size();
}

}  // namespace

const char* store_outcome_name(StoreOutcome outcome) {
  switch (outcome) {
    case StoreOutcome::kWritten:
      return "written";
    case StoreOutcome::kDuplicate:
      return "duplicate";
    case StoreOutcome::kConflict:
      return "conflict";
  }
  return "invalid";
}

std::string TraceDirectory::path_for(const Role& role) const {
  return str_cat(dir_, "/", role.file_name());
}

Result<StoreResult> TraceDirectory::store(std::span<const std::byte> file) const {
  TM_ASSIGN_OR_RETURN(Trace mine, Trace::parse(std::vector<std::byte>(file.begin(), file.end())));
  EncodedTrace whole;
  whole.meta = mine.meta();
  whole.body = {file};
  return store(whole);
}

Result<StoreResult> TraceDirectory::store(const EncodedTrace& trace) const {
  StoreResult result;
  result.path = path_for(trace.meta.role);
  TM_RETURN_IF_ERROR(make_directories(dir_));
  // Another replica was first (the common case for data-parallel replicas,
  // which record the same outputs): compare without writing a copy. When
  // two get here at once, link() lets one win and the other compares.
  if (::access(result.path.c_str(), F_OK) != 0) {
    auto parts = trace.parts();
    TM_ASSIGN_OR_RETURN(bool placed, write_file_atomic(result.path, parts, Replace::kNo));
    if (placed) return result;
  }
  TM_ASSIGN_OR_RETURN(auto file, read_file(result.path, kDefaultMaxTraceBytes));
  if (same_as(file, trace)) {
    result.outcome = StoreOutcome::kDuplicate;
    return result;
  }
  auto parsed = Trace::parse(std::move(file));
  if (!parsed.ok()) return parsed.status().with_context(str_cat("trace ", result.path));
  Trace& theirs = parsed.value();
  auto mine = Trace::parse(trace.concatenate());
  if (!mine.ok()) return mine.status().with_context("the trace being stored");
  if (theirs.same_content(mine.value())) {
    result.outcome = StoreOutcome::kDuplicate;
    return result;
  }
  result.outcome = StoreOutcome::kConflict;
  result.detail =
      str_cat("role '", trace.meta.role.canonical(), "' already has a trace at ", result.path,
              " recorded by slot ", theirs.meta().slot, "; the one of slot ", trace.meta.slot,
              " was dropped: ", difference(theirs, mine.value()));
  return result;
}

Result<Trace> TraceDirectory::load(const Role& role, TraceExpect expect) const {
  expect.role = role;
  return Trace::load(path_for(role), expect);
}

}  // namespace trainmover::record
