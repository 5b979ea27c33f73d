// The task's store choice (task_store.h).
#include "task_store.h"

#include "common/parse.h"
#include "common/str.h"

#include <string>
#include "config.h"  // HAVE_PMIX

namespace trainmover::launcher {

std::string task_store_spec(std::string_view tcp_store, bool pmix) {
  if (!pmix || tcp_store.empty()) return std::string(tcp_store);
  constexpr std::string_view kTcp = "tcp://";
  if (tcp_store.starts_with(kTcp)) tcp_store.remove_prefix(kTcp.size());
  return str_cat("pmix,tcp://", tcp_store);
}

namespace {
bool pmix_client_task() {
#if HAVE_PMIX
  auto set = [](const char* name) { return !get_env(name).value_or("").empty(); };
  return set("PMIX_NAMESPACE") && set("PMIX_RANK");
#else
  return false;
#endif
}
}  // namespace

bool pmix_wireup_wanted() {
  return pmix_client_task() && get_env("TRAINMOVER_PMIX_WIREUP").value_or("1") != "0";
}

bool pmix_events_wanted() {
  return pmix_client_task() && get_env("TRAINMOVER_PMIX_EVENTS").value_or("1") != "0";
}

}  // namespace trainmover::launcher
