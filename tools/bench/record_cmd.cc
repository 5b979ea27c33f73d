#include "record_cmd.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "cli/command_line.h"
#include "comm/config.h"
#include "common/json.h"
#include "common/median.h"
#include "common/parse.h"
#include "job_runner.h"
#include "launcher/local_job.h"
#include "record/trace_dir.h"
#include "record/trace_format.h"
#include "workload.h"

namespace trainmover::bench {
namespace {

constexpr uint64_t kMaxBytes = uint64_t{1} << 30;
constexpr double kMaxJobTimeoutS = 7 * 24 * 3600;

Status parse_bytes(std::string_view text, uint64_t& out) {
  TM_ASSIGN_OR_RETURN(uint64_t bytes, parse_size(text));
  if (bytes == 0 || bytes % sizeof(float) != 0 || bytes > kMaxBytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text,
                 "' is not a positive multiple of 4 bytes (float32) up to 1G");
  }
  out = bytes;
  return Status::Ok();
}

Status parse_reserve(std::string_view text, uint64_t& out) {
  if (text == "auto") {
    out = RecordOptions::kAutoReserve;
    return Status::Ok();
  }
  TM_ASSIGN_OR_RETURN(uint64_t bytes, parse_size(text));
  if (bytes == 0) return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is not positive");
  out = bytes;
  return Status::Ok();
}

Status parse_compute_ms(std::string_view text, double& out) {
  TM_ASSIGN_OR_RETURN(int64_t ms, parse_int(text, 1, 10000));
  out = static_cast<double>(ms) / 1000.0;
  return Status::Ok();
}

// The one description of the options: it parses them into `o` (and
// --no-bind into `no_bind`) and prints --help. The recording job's
// TRAINMOVER_RECORD_* and TRAINMOVER_TRACE_COMPRESS come from the options,
// so a value of the caller's environment is their default, not overridden.
cli::CommandLine record_command_line(RecordOptions& o, bool& no_bind) {
  cli::CommandLine command_line(
      "trainmover-bench record", "trainmover-bench record [OPTIONS]",
      "Measure recording collectives for standbys and replaying them in a sandbox, on a\n"
      "data-parallel loop: compute step, allreduce of the gradients, update.\n");
  command_line.integer("nranks,n", "N", 1, 64, o.nranks, "worker processes (default 2)")
      .custom(
          "bytes,b", "SIZE", [&o](std::string_view t) { return parse_bytes(t, o.bytes); },
          "gradient buffer allreduced per iteration, a multiple of 4 (default 4M)")
      .custom(
          "compute-ms,c", "MS",
          [&o](std::string_view t) { return parse_compute_ms(t, o.compute_s); },
          "compute step, calibrated on this machine (default 15)")
      .integer("passes,p", "N", 1, 1000000, o.passes, "compute passes instead of calibrating")
      .integer("record-iterations,k", "K", 1, 1000, o.recorded, "iterations recorded (default 2)")
      .from_env("TRAINMOVER_RECORD_ITERATIONS")
      .integer("after,a", "M", 1, 100000, o.after,
               "iterations measured after recording while the trace is saved, then M more "
               "after the save (default 10)")
      .integer("warmup,w", "W", 0, 100000, o.warmup,
               "unrecorded warm-up iterations first (default 12)")
      .integer("rounds,r", "R", 1, 1000, o.rounds, "rounds; medians are reported (default 5)")
      .flag("compress,z", o.compress, "zstd-compress the traces")
      .from_env("TRAINMOVER_TRACE_COMPRESS")
      .custom(
          "reserve", "SIZE|auto", [&o](std::string_view t) { return parse_reserve(t, o.reserve); },
          "TRAINMOVER_RECORD_RESERVE of the recording job (default: the library's, 32M; "
          "auto: what its K iterations record)")
      .from_env("TRAINMOVER_RECORD_RESERVE")
      .flag("control", o.control,
            "also run a second job that never records and report it against the first "
            "(noise_*_pct): the noise floor")
      .integer("cpus-per-rank", "C", 1, 4096, o.cpus_per_rank,
               "bind rank i to the i-th C allowed CPUs, round robin, as srun "
               "--cpu-bind=cores (default 1)")
      .flag("no-bind", no_bind, "leave ranks unbound")
      .flag("json,j", o.json, "one JSON object instead of the table")
      .duration("job-timeout,t", "SEC", 1e-3, kMaxJobTimeoutS, o.job_timeout_s,
                "limit per job (default 300)");
  return command_line;
}

double mean(const std::vector<double>& v, size_t from, size_t to) {
  double sum = 0;
  for (size_t i = from; i < to; ++i) sum += v[i];
  return to > from ? sum / static_cast<double>(to - from) : 0;
}

// What the ranks of one job printed, per phase: per iteration the slowest
// rank's time and the most minor page faults a rank's training thread took,
// rank 0's CRCs, the compute samples, and the longest wait for the trace's
// save.
struct PhaseLines {
  std::vector<double> iteration_s;
  std::vector<double> minflt;
  std::vector<long long> crc;
  std::vector<double> compute_s;
  double save_wait_s = 0;
};

Result<PhaseLines> parse_lines(const launcher::LocalJobResult& result, const std::string& phase) {
  PhaseLines out;
  for (const auto& rank : result.ranks) {
    for (std::string_view line : split(rank.output, '\n')) {
      if (line.empty() || line.front() != '{') continue;
      TM_ASSIGN_OR_RETURN(Json o, parse_json_object(line));
      TM_ASSIGN_OR_RETURN(double elapsed, json_number(o, "elapsed_s"));
      const std::optional<std::string> line_phase = json_string(o, "phase");
      if (line_phase == "compute") {
        out.compute_s.push_back(elapsed);
        continue;
      }
      if (line_phase == "save_wait") {
        out.save_wait_s = std::max(out.save_wait_s, elapsed);
        continue;
      }
      if (line_phase != phase) continue;
      TM_ASSIGN_OR_RETURN(double iter, json_number(o, "iter"));
      TM_ASSIGN_OR_RETURN(double crc, json_number(o, "crc"));
      TM_ASSIGN_OR_RETURN(double faults, json_number(o, "minflt"));
      auto i = static_cast<size_t>(iter);
      if (out.iteration_s.size() <= i) {
        out.iteration_s.resize(i + 1, 0.0);
        out.minflt.resize(i + 1, 0.0);
      }
      out.iteration_s[i] = std::max(out.iteration_s[i], elapsed);
      out.minflt[i] = std::max(out.minflt[i], faults);
      if (rank.rank == 0) {
        if (out.crc.size() <= i) out.crc.resize(i + 1, -1);
        out.crc[i] = static_cast<long long>(crc);
      }
    }
  }
  return out;
}

class RecordBench {
 public:
  RecordBench(RecordOptions o, std::string self, std::string dir, double first_touch_us)
      : o_(std::move(o)),
        self_(std::move(self)),
        dir_(std::move(dir)),
        first_touch_us_(first_touch_us) {}

  Status run_round(int round);
  void print(bool json) const;

 private:
  Result<launcher::LocalJobResult> job(const std::string& phase, int nprocs,
                                       std::vector<std::pair<std::string, std::string>> env);
  // What the recording job faults in ahead: --reserve; with auto, what its
  // K iterations record (one allreduce output and one record header each).
  uint64_t reserve_bytes() const {
    if (o_.reserve == 0) return kDefaultRecordReserveBytes;
    if (o_.reserve != RecordOptions::kAutoReserve) return o_.reserve;
    return static_cast<uint64_t>(o_.recorded) * (o_.bytes + record::kRecordFixedBytes);
  }
  std::map<std::string, std::vector<double>> samples_;  // key -> one value per round
  bool replay_matches_ = true;
  size_t trace_files_ = 0;
  RecordOptions o_;
  std::string self_, dir_;
  double first_touch_us_;  // per 4 KiB page: which kind of host the figures come from
};

Result<launcher::LocalJobResult> RecordBench::job(
    const std::string& phase, int nprocs, std::vector<std::pair<std::string, std::string>> env) {
  launcher::LocalJobOptions job;
  job.argv = {self_,        "record-worker",
              "--phase",    phase,
              "--count",    std::to_string(o_.bytes / sizeof(float)),
              "--passes",   std::to_string(o_.passes),
              "--warmup",   std::to_string(o_.warmup),
              "--recorded", std::to_string(o_.recorded),
              "--after",    std::to_string(o_.after),
              "--bind",     std::to_string(o_.cpus_per_rank)};
  job.nprocs = nprocs;
  job.timeout = seconds(o_.job_timeout_s);
  job.capture_stdout = true;
  job.extra_env = std::move(env);
  TM_ASSIGN_OR_RETURN(auto result, launcher::run_local_job(job));
  if (result.first_failed_rank >= 0) {
    return error(TM_ERROR_PEER_FAILED, phase,
                 " job: ", result.ranks[result.first_failed_rank].describe());
  }
  if (result.timed_out) return error(TM_ERROR_TIMEOUT, phase, " job ran past --job-timeout");
  return result;
}

Status RecordBench::run_round(int round) {
  const size_t k = static_cast<size_t>(o_.recorded), after = static_cast<size_t>(o_.after);
  const size_t saving = k + after, total = saving + after;
  // The same job without recording is the reference. It and the control
  // (a second job that never records) take turns before and after the
  // recording job, so that a drift of the machine favours none of them.
  std::string traces = str_cat(dir_, "/round-", round);
  auto run_plain = [&] { return job("live", o_.nranks, {{"TRAINMOVER_TRACE_DIR", ""}}); };
  auto run_recording = [&] {
    return job("live", o_.nranks,
               {{"TRAINMOVER_TRACE_DIR", traces},
                {"TRAINMOVER_RECORD_ITERATIONS", std::to_string(o_.recorded)},
                {"TRAINMOVER_RECORD_RESERVE", std::to_string(reserve_bytes())},
                {"TRAINMOVER_TRACE_COMPRESS", o_.compress ? "1" : "0"}});
  };
  const bool plain_first = round % 2 == 0;
  std::optional<PhaseLines> control;
  auto run_control = [&]() -> Status {
    if (!o_.control) return Status::Ok();
    TM_ASSIGN_OR_RETURN(auto control_job, run_plain());
    TM_ASSIGN_OR_RETURN(control, parse_lines(control_job, "live"));
    return Status::Ok();
  };
  if (!plain_first) TM_RETURN_IF_ERROR(run_control());
  TM_ASSIGN_OR_RETURN(auto first, plain_first ? run_plain() : run_recording());
  TM_ASSIGN_OR_RETURN(auto second, plain_first ? run_recording() : run_plain());
  if (plain_first) TM_RETURN_IF_ERROR(run_control());
  const launcher::LocalJobResult& plain_job = plain_first ? first : second;
  const launcher::LocalJobResult& rec_job = plain_first ? second : first;
  TM_ASSIGN_OR_RETURN(PhaseLines plain, parse_lines(plain_job, "live"));
  TM_ASSIGN_OR_RETURN(PhaseLines rec, parse_lines(rec_job, "live"));
  if (plain.iteration_s.size() != total || rec.iteration_s.size() != total ||
      (control && control->iteration_s.size() != total)) {
    return error(TM_ERROR_PROTOCOL, "live jobs reported ", rec.iteration_s.size(), ", ",
                 plain.iteration_s.size(), " and ", control ? control->iteration_s.size() : total,
                 " iterations, expected ", total);
  }
  record::TraceDirectory dir(traces);
  TM_ASSIGN_OR_RETURN(auto trace, dir.load(record::Role{}));
  trace_files_ = 0;
  for (const auto& e : std::filesystem::directory_iterator(traces))
    trace_files_ += e.path().extension() == ".tmtrace";
  TM_ASSIGN_OR_RETURN(auto replay_job,
                      job("replay", 1,
                          {{"TRAINMOVER_TRACE_DIR", traces},
                           {"TRAINMOVER_JOB_ID", std::to_string(trace.meta().job_id)},
                           {"TRAINMOVER_SLOT", "0"}}));
  TM_ASSIGN_OR_RETURN(PhaseLines replay, parse_lines(replay_job, "replay"));
  if (replay.iteration_s.size() != k || replay.compute_s.empty())
    return error(TM_ERROR_PROTOCOL, "the replay reported ", replay.iteration_s.size(),
                 " iterations");
  for (size_t i = 0; i < k; ++i) replay_matches_ &= replay.crc[i] == rec.crc[i];

  // Each job's three windows: recorded, while saving, after the save.
  auto add_windows = [&](const std::string& job, const PhaseLines& p) {
    samples_[job + "_recorded_window_s"].push_back(mean(p.iteration_s, 0, k));
    samples_[job + "_after_window_s"].push_back(mean(p.iteration_s, k, saving));
    samples_[job + "_settled_window_s"].push_back(mean(p.iteration_s, saving, total));
    samples_[job + "_recorded_minflt"].push_back(mean(p.minflt, 0, k));
    samples_[job + "_after_minflt"].push_back(mean(p.minflt, k, saving));
    samples_[job + "_settled_minflt"].push_back(mean(p.minflt, saving, total));
  };
  add_windows("plain", plain);
  add_windows("recording", rec);
  if (control) add_windows("control", *control);
  samples_["save_wait_s"].push_back(rec.save_wait_s);
  samples_["replay_iter_time_s"].push_back(mean(replay.iteration_s, 0, k));
  samples_["compute_time_s"].push_back(median(replay.compute_s));
  samples_["trace_bytes_per_role"].push_back(static_cast<double>(trace.file_bytes()));
  std::filesystem::remove_all(traces);
  return Status::Ok();
}

void RecordBench::print(bool json) const {
  auto med = [&](const char* key) { return median(samples_.at(key)); };
  double rec = med("recording_recorded_window_s"), after = med("recording_after_window_s");
  double plain_rec = med("plain_recorded_window_s"), plain_after = med("plain_after_window_s");
  double replay = med("replay_iter_time_s"), compute = med("compute_time_s");
  double settled = med("recording_settled_window_s");
  double plain_settled = med("plain_settled_window_s");
  double overhead = (rec / plain_rec - 1) * 100, after_overhead = (after / plain_after - 1) * 100;
  double settled_overhead = (settled / plain_settled - 1) * 100;
  double replay_overhead = (replay / compute - 1) * 100;
  auto trace_bytes = static_cast<long long>(med("trace_bytes_per_role"));
  // The control against the reference, window by window: the same ratio as
  // the overheads, for two jobs that both never record.
  auto noise = [&](const char* control, double reference) {
    return (med(control) / reference - 1) * 100;
  };
  double noise_rec = 0, noise_after = 0, noise_settled = 0;
  if (o_.control) {
    noise_rec = noise("control_recorded_window_s", plain_rec);
    noise_after = noise("control_after_window_s", plain_after);
    noise_settled = noise("control_settled_window_s", plain_settled);
  }
  if (json) {
    Json line = {{"bench", "record"},
                 {"nranks", o_.nranks},
                 {"bytes", o_.bytes},
                 {"passes", o_.passes},
                 {"record_iterations", o_.recorded},
                 {"rounds", o_.rounds},
                 {"compressed", o_.compress ? 1 : 0},
                 {"cpu_bind", o_.cpus_per_rank},
                 {"record_reserve_bytes", reserve_bytes()},
                 {"iter_time_s", after},
                 {"iter_time_recording_s", rec},
                 {"overhead_pct", overhead},
                 {"baseline_iter_time_s", plain_after},
                 {"overhead_after_pct", after_overhead},
                 {"iter_time_settled_s", settled},
                 {"overhead_settled_pct", settled_overhead},
                 {"save_wait_s", med("save_wait_s")},
                 {"trace_bytes_per_role", trace_bytes},
                 {"trace_files", trace_files_},
                 {"replay_iter_time_s", replay},
                 {"compute_time_s", compute},
                 {"replay_overhead_pct", replay_overhead},
                 {"replay_matches", replay_matches_ ? 1 : 0}};
    line["first_touch_us_per_page"] = first_touch_us_;
    line["minflt_recorded"] = med("recording_recorded_minflt");
    line["minflt_recorded_plain"] = med("plain_recorded_minflt");
    line["minflt_after"] = med("recording_after_minflt");
    line["minflt_after_plain"] = med("plain_after_minflt");
    line["minflt_settled"] = med("recording_settled_minflt");
    line["minflt_settled_plain"] = med("plain_settled_minflt");
    if (o_.control) {
      line["noise_pct"] = noise_rec;
      line["noise_after_pct"] = noise_after;
      line["noise_settled_pct"] = noise_settled;
    }
    std::printf("%s\n", json_line(line).c_str());
    return;
  }
  std::printf(
      "record: %d ranks, %s gradients, compute %d passes, %d recorded + %d more iterations, "
      "%s reserve, median of %d rounds\n",
      o_.nranks, format_bytes(static_cast<double>(o_.bytes)).c_str(), o_.passes, o_.recorded,
      o_.after, format_bytes(static_cast<double>(reserve_bytes())).c_str(), o_.rounds);
  std::printf("  recorded iterations   %8.2f ms  (same iterations unrecorded %.2f ms: %+.1f%%)\n",
              rec * 1e3, plain_rec * 1e3, overhead);
  std::printf("  after recording       %8.2f ms  (job never recording %.2f ms: %+.1f%%)\n",
              after * 1e3, plain_after * 1e3, after_overhead);
  std::printf(
      "  after the save        %8.2f ms  (job never recording %.2f ms: %+.1f%%), "
      "waited %.2f ms for it\n",
      settled * 1e3, plain_settled * 1e3, settled_overhead, med("save_wait_s") * 1e3);
  if (o_.control) {
    std::printf(
        "  noise floor           a second job that never records: %+.1f%% recorded, %+.1f%% "
        "after recording, %+.1f%% after the save\n",
        noise_rec, noise_after, noise_settled);
  }
  std::printf(
      "  page faults           first touch %.2f us per 4 KiB page; per iteration, training "
      "thread: recorded %.1f (unrecorded %.1f), after recording %.1f (%.1f), after the save "
      "%.1f (%.1f)\n",
      first_touch_us_, med("recording_recorded_minflt"), med("plain_recorded_minflt"),
      med("recording_after_minflt"), med("plain_after_minflt"), med("recording_settled_minflt"),
      med("plain_settled_minflt"));
  std::printf("  trace per role        %8s     (%zu file for %d ranks)\n",
              format_bytes(static_cast<double>(trace_bytes)).c_str(), trace_files_, o_.nranks);
  std::printf("  replay iteration      %8.2f ms  (compute alone %.2f ms: %+.1f%%), outputs %s\n",
              replay * 1e3, compute * 1e3, replay_overhead,
              replay_matches_ ? "identical to the recording" : "DIFFER from the recording");
}

// A private scratch directory for the round's traces.
Result<std::string> scratch_dir() {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "trainmover-bench-record.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return system_error("mkdtemp", errno);
  return tmpl;
}

}  // namespace

int record_main(int argc, char** argv) {
  RecordOptions o;
  bool no_bind = false;
  if (auto exit_code = record_command_line(o, no_bind).parse(argc, argv)) return *exit_code;
  if (no_bind) o.cpus_per_rank = 0;
  if (o.passes == 0) o.passes = calibrate_passes(o.bytes / sizeof(float), o.compute_s);
  auto self = self_executable();
  auto dir = scratch_dir();
  if (!self.ok() || !dir.ok()) {
    std::fprintf(stderr, "trainmover-bench record: %s\n",
                 (!self.ok() ? self.status() : dir.status()).message().c_str());
    return 1;
  }
  RecordBench bench(o, self.value(), dir.value(), first_touch_us_per_page());
  Status st;
  for (int round = 0; round < o.rounds && st.ok(); ++round) st = bench.run_round(round);
  std::filesystem::remove_all(dir.value());
  if (!st.ok()) {
    std::fprintf(stderr, "trainmover-bench record: %s\n", st.message().c_str());
    return 1;
  }
  bench.print(o.json);
  return 0;
}

}  // namespace trainmover::bench
