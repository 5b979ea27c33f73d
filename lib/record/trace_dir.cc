#include "record/trace_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/log.h"
#include "record/compress.h"
#include "record/file_io.h"
#include "record/file_lock.h"

namespace trainmover::record {
namespace {

// How long a replica waits for another that is writing its role's trace.
constexpr std::chrono::seconds kRoleLockWait{60};

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

// Whether a stored header describes the same trace as `mine`, but for the
// recording slot.
bool same_identity(const HeaderFields& theirs, const EncodedTrace& mine) {
  TraceMeta a = theirs.meta, b = mine.meta;
  a.slot = b.slot = 0;
  return a == b && theirs.iterations == mine.fields.iterations &&
         theirs.calls == mine.fields.calls && theirs.raw_body_bytes == mine.fields.raw_body_bytes;
}

// Whether `file` holds the same content as `mine` (all but the slot), with
// one pass of comparison and no checksum work.
bool same_as(std::span<const std::byte> file, const EncodedTrace& mine) {
  auto header = parse_header(file);
  if (!header.ok()) return false;
  auto [theirs, body_at] = std::move(header.value());
  if (!same_identity(theirs, mine) ||
      theirs.stored_body_bytes + kTrailerBytes != file.size() - body_at) {
    return false;  // cut short, or bytes after the end
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

enum class Match { kSame, kDifferent, kUndecided };

// Compares a stored trace with `mine` (all but the slot) chunk by chunk as
// the file is read: for data-parallel replicas, the common case, one pass
// over the file and no copy of it. A compressed file is left undecided.
class StreamMatcher {
 public:
  explicit StreamMatcher(const EncodedTrace& mine) : mine_(mine) {}
  // The file's next chunk; the first must hold the whole header (chunks of
  // read_file_chunks() do). False once the outcome is known early.
  bool feed(std::span<const std::byte> chunk);
  Match outcome() const;

 private:
  bool start(std::span<const std::byte>& chunk);
  bool compare_body(std::span<const std::byte>& chunk);
  bool decide(Match m) {
    early_ = m;
    return false;
  }

  const EncodedTrace& mine_;
  Match early_ = Match::kSame;  // kDifferent or kUndecided once decided early
  bool started_ = false;
  uint64_t body_left_ = 0;
  size_t piece_ = 0, piece_at_ = 0;  // how far into mine_.raw_body
  uint64_t trailer_bytes_ = 0;
};

bool StreamMatcher::start(std::span<const std::byte>& chunk) {
  started_ = true;
  auto header = parse_header(chunk);
  if (!header.ok()) return decide(Match::kDifferent);
  const auto& [theirs, body_at] = header.value();
  if ((theirs.flags & kFlagZstd) != 0) return decide(Match::kUndecided);
  if (!same_identity(theirs, mine_) || theirs.stored_body_bytes != theirs.raw_body_bytes)
    return decide(Match::kDifferent);
  body_left_ = theirs.stored_body_bytes;
  chunk = chunk.subspan(body_at);
  return true;
}

bool StreamMatcher::compare_body(std::span<const std::byte>& chunk) {
  while (body_left_ > 0 && !chunk.empty()) {
    while (piece_ < mine_.raw_body.size() && piece_at_ == mine_.raw_body[piece_].size()) {
      ++piece_;
      piece_at_ = 0;
    }
    if (piece_ == mine_.raw_body.size()) return decide(Match::kDifferent);
    auto piece = mine_.raw_body[piece_].subspan(piece_at_);
    size_t n = std::min({piece.size(), chunk.size(), static_cast<size_t>(body_left_)});
    if (std::memcmp(piece.data(), chunk.data(), n) != 0) return decide(Match::kDifferent);
    chunk = chunk.subspan(n);
    body_left_ -= n;
    piece_at_ += n;
  }
  return true;
}

bool StreamMatcher::feed(std::span<const std::byte> chunk) {
  if (!started_ && !start(chunk)) return false;
  if (!compare_body(chunk)) return false;
  trailer_bytes_ += chunk.size();  // what follows the body
  return trailer_bytes_ <= kTrailerBytes || decide(Match::kDifferent);
}

Match StreamMatcher::outcome() const {
  if (early_ != Match::kSame) return early_;
  if (!started_ || body_left_ != 0 || trailer_bytes_ != kTrailerBytes) return Match::kDifferent;
  // The body's length equals mine (the header said so): all of mine was seen.
  return Match::kSame;
}

// Writes `trace` at `path` unless a trace is there already; true if it did.
// Replicas finish recording together: without the lock each would find no
// trace yet and write one, only for link() to keep the first. Where the lock
// cannot be had (no locks on this filesystem, a holder stuck past the wait)
// link() still lets one win.
Result<bool> write_unless_present(const std::string& path, const EncodedTrace& trace) {
  auto lock = FileLock::acquire(path + ".lock", kRoleLockWait);
  if (!lock.ok()) log(LogLevel::kDebug, "trace written unlocked: ", lock.status().message());
  if (::access(path.c_str(), F_OK) == 0) return false;
  auto parts = trace.parts();
  return write_file_atomic(path, parts, Replace::kNo);
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

namespace {
// Anyone who can write the directory could plant or swap a role's trace,
// which standbys then replay: refuse it rather than use it silently.
Status check_not_world_writable(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return system_error(str_cat("trace directory ", dir), errno);
  if ((st.st_mode & S_IWOTH) == 0) return Status::Ok();
  return error(TM_ERROR_INVALID_ARGUMENT, "trace directory ", dir,
               " is writable by every user (mode ", str_cat(std::oct, st.st_mode & 07777),
               "): anyone could replace the traces standbys replay; use a directory only the "
               "job's user can write (chmod o-w)");
}
}  // namespace

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
  TM_RETURN_IF_ERROR(check_not_world_writable(dir_));
  // Another replica was first (the common case for data-parallel replicas,
  // which record the same outputs): compare without writing a copy.
  TM_ASSIGN_OR_RETURN(bool written, write_unless_present(result.path, trace));
  if (written) return result;
  StreamMatcher matcher(trace);
  TM_RETURN_IF_ERROR(read_file_chunks(
      result.path, [&](std::span<const std::byte> chunk) { return matcher.feed(chunk); }));
  if (matcher.outcome() == Match::kSame) {
    result.outcome = StoreOutcome::kDuplicate;
    return result;
  }
  // Compressed, or different: the whole file, to say how they differ.
  TM_ASSIGN_OR_RETURN(auto file, read_file(result.path, kDefaultMaxTraceBytes));
  if (matcher.outcome() == Match::kUndecided && same_as(file, trace)) {
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
  TM_RETURN_IF_ERROR(check_not_world_writable(dir_));
  return Trace::load(path_for(role), expect);
}

}  // namespace trainmover::record
