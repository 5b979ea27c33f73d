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

bool pmix_wireup_wanted(int nslots) {
#if HAVE_PMIX
  auto set = [](const char* name) { return !get_env(name).value_or("").empty(); };
  auto ntasks = get_env("SLURM_STEP_NUM_TASKS");
  if (!ntasks) ntasks = get_env("SLURM_NTASKS");
  return set("PMIX_NAMESPACE") && set("PMIX_RANK") && ntasks == std::to_string(nslots) &&
         get_env("TRAINMOVER_PMIX_WIREUP").value_or("1") != "0";
#else
  return false;
#endif
}

}  // namespace trainmover::launcher
