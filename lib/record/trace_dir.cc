#include "record/trace_dir.h"

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
  StoreResult result;
  result.path = path_for(mine.meta().role);
  TM_RETURN_IF_ERROR(make_directories(dir_));
  TM_ASSIGN_OR_RETURN(bool placed, write_file_atomic(result.path, file, Replace::kNo));
  if (placed) return result;
  TM_ASSIGN_OR_RETURN(Trace theirs, Trace::load(result.path));
  if (theirs.same_content(mine)) {
    result.outcome = StoreOutcome::kDuplicate;
    return result;
  }
  result.outcome = StoreOutcome::kConflict;
  result.detail =
      str_cat("role '", mine.meta().role.canonical(), "' already has a trace at ", result.path,
              " recorded by slot ", theirs.meta().slot, "; the one of slot ", mine.meta().slot,
              " was dropped: ", difference(theirs, mine));
  return result;
}

Result<Trace> TraceDirectory::load(const Role& role, TraceExpect expect) const {
  expect.role = role;
  return Trace::load(path_for(role), expect);
}

}  // namespace trainmover::record
