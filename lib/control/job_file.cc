#include "control/job_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/unique_fd.h"
#include "control/control_protocol.h"

namespace trainmover::control {

namespace {
constexpr size_t kMaxJobFile = 4096;

Status write_all(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("writing the job file " + path, errno);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}
}  // namespace

Status write_job_file(const std::string& path, const JobFile& job) {
  nlohmann::json j = {{"address", job.address},
                      {"job_id", job.job_id},
                      {"secret", job.secret_hex},
                      {"pid", job.launcher_pid}};
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) return system_error("cannot create the job file " + tmp, errno);
  Status st = write_all(fd.get(), json_text(j) + "\n", tmp);
  if (st.ok() && ::fsync(fd.get()) != 0) st = system_error("fsync " + tmp, errno);
  fd.reset();
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    st = system_error("cannot rename the job file to " + path, errno);
  if (!st.ok()) ::unlink(tmp.c_str());
  return st;
}

Result<JobFile> read_job_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return system_error("cannot open the job file " + path, errno);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return system_error("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return error(TM_ERROR_INVALID_ARGUMENT, path, " is not a regular file");
  if (st.st_uid != geteuid())
    return error(TM_ERROR_INVALID_ARGUMENT, "the job file ", path, " belongs to uid ", st.st_uid,
                 ", not to this user");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return error(TM_ERROR_INVALID_ARGUMENT, "the job file ", path,
                 " holds the job secret but others may access it (mode 0", std::oct,
                 (st.st_mode & 0777), "); it must be 0600");
  std::string text(kMaxJobFile + 1, '\0');
  ssize_t n = ::read(fd.get(), text.data(), text.size());
  if (n < 0) return system_error("reading " + path, errno);
  if (static_cast<size_t>(n) > kMaxJobFile)
    return error(TM_ERROR_INVALID_ARGUMENT, "the job file ", path, " is too large");
  text.resize(static_cast<size_t>(n));
  auto j = nlohmann::json::parse(text, nullptr, false);
  auto bad = [&](const char* what) {
    return error(TM_ERROR_INVALID_ARGUMENT, "the job file ", path, " ", what);
  };
  if (j.is_discarded() || !j.is_object()) return bad("is not a JSON object");
  JobFile job;
  auto address = j.find("address");
  auto job_id = j.find("job_id");
  auto secret = j.find("secret");
  auto pid = j.find("pid");
  if (address == j.end() || !address->is_string()) return bad("has no string 'address'");
  if (job_id == j.end() || !job_id->is_number_unsigned()) return bad("has no unsigned 'job_id'");
  if (secret == j.end() || !secret->is_string()) return bad("has no string 'secret'");
  job.address = address->get<std::string>();
  job.job_id = job_id->get<uint64_t>();
  job.secret_hex = secret->get<std::string>();
  if (pid != j.end() && pid->is_number_integer()) job.launcher_pid = pid->get<pid_t>();
  if (!JobSecret::from_hex(job.secret_hex).ok()) return bad("holds no valid secret");
  return job;
}

}  // namespace trainmover::control
