#include "child_env.h"

#include <algorithm>
#include <string_view>

extern char** environ;

namespace trainmover::launcher {
namespace {

EnvVars identity_variables(const JobIdentity& identity) {
  return {
      {"TRAINMOVER_SLOT", std::to_string(identity.slot)},
      {"TRAINMOVER_NSLOTS", std::to_string(identity.nslots)},
      {"TRAINMOVER_JOB_ID", std::to_string(identity.job_id)},
      {"TRAINMOVER_JOB_SECRET", identity.secret_hex},
      {"TRAINMOVER_STORE", identity.store_address},
  };
}

}  // namespace

std::vector<std::string> child_environment(const JobIdentity& identity, const EnvVars& extra) {
  EnvVars vars = identity_variables(identity);
  for (const auto& entry : extra) {
    std::erase_if(vars, [&](const auto& v) { return v.first == entry.first; });
    vars.push_back(entry);
  }
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    if (std::none_of(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; }))
      env.emplace_back(entry);
  }
  for (const auto& [name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

}  // namespace trainmover::launcher
