#include "record/nccl/interposer.h"

#include <cstdlib>

#include "common/log.h"
#include "common/parse.h"
#include "record/nccl/trace_io.h"

namespace trainmover::nccl {
namespace {

void flush_at_exit() {
  if (RecordEngine* engine = Interposer::get().record())
    engine->flush(Deadline::after(seconds(10)));
}

}  // namespace

Interposer& Interposer::get() {
  static Interposer instance;
  // Registered after the instance, so it runs before its destructor (and
  // before the CUDA runtime's teardown, registered earlier by the program).
  static const bool flush_registered = std::atexit(flush_at_exit) == 0;
  (void)flush_registered;
  return instance;
}

Interposer::Interposer() : real_(RealNccl::load()) {
  auto settings = settings_from_env([](const char* name) { return get_env(name); });
  if (!settings.ok()) {
    startup_ = settings.status();
    log(LogLevel::kError, "nccl: ", startup_.message());
    return;
  }
  settings_ = *settings;
  start();
  if (!startup_.ok()) log(LogLevel::kError, "nccl: ", startup_.message());
}

void Interposer::start() {
  if (settings_.mode == Mode::kRecord) {
    if (!real_.present()) {
      startup_ = missing_real(real_, "record mode");
      return;
    }
    auto sink = open_trace_sink(settings_);
    if (!sink.ok()) {
      startup_ = sink.status();
      return;
    }
    record_ = std::make_unique<RecordEngine>(settings_, real_, std::move(*sink));
    log(LogLevel::kInfo, "nccl: recording ", settings_.record_calls, " calls per communicator to ",
        trace_path(settings_));
  } else if (settings_.mode == Mode::kReplay) {
    auto book = load_replay_book(settings_);
    if (!book.ok()) {
      startup_ = book.status().with_context("replay trace rejected");
      return;
    }
    replay_ = std::make_unique<ReplayEngine>(settings_, std::move(*book));
    log(LogLevel::kInfo, "nccl: replaying ", trace_path(settings_), " without network");
  }
}

void Interposer::warn_once(const std::string& key, const std::string& message) {
  std::lock_guard lock(warned_mu_);
  if (warned_.insert(key).second) log(LogLevel::kWarn, "nccl: ", message);
}

}  // namespace trainmover::nccl
