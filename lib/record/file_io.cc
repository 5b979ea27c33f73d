#include "record/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "common/unique_fd.h"

namespace trainmover::record {
namespace {

// Traces are written and read by a background thread at SCHED_IDLE, but a
// kernel without preemption (seen here: "Dynamic Preempt: none") lets a
// system call run to its end: an 8 MiB write or read holds a CPU for
// milliseconds that the training thread may be waiting for. Calls of at most
// this size keep each such hold to tens of microseconds.
constexpr size_t kMaxIoChunk = size_t{256} << 10;

Status write_all(int fd, std::span<const std::byte> bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), kMaxIoChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error(str_cat("write ", path), errno);
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status fsync_directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return system_error(str_cat("open directory ", dir), errno);
  if (::fsync(fd.get()) != 0) return system_error(str_cat("fsync ", dir), errno);
  return Status::Ok();
}

// A name no other writer uses: process, thread and time.
std::string temporary_name(const std::string& path) {
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  size_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return str_cat(path, ".tmp.", ::getpid(), ".", thread % 100000, ".", now);
}

Status write_temporary(const std::string& tmp, std::span<const std::span<const std::byte>> parts) {
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
  if (!fd.valid()) return system_error(str_cat("create ", tmp), errno);
  for (auto bytes : parts) TM_RETURN_IF_ERROR(write_all(fd.get(), bytes, tmp));
  if (::fsync(fd.get()) != 0) return system_error(str_cat("fsync ", tmp), errno);
  return Status::Ok();
}

}  // namespace

Result<bool> write_file_atomic(const std::string& path, std::span<const std::byte> bytes,
                               Replace replace) {
  std::span<const std::byte> one[] = {bytes};
  return write_file_atomic(path, one, replace);
}

Result<bool> write_file_atomic(const std::string& path,
                               std::span<const std::span<const std::byte>> parts, Replace replace) {
  std::string tmp = temporary_name(path);
  Status st = write_temporary(tmp, parts);
  bool placed = false;
  if (st.ok() && replace == Replace::kYes) {
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      st = system_error(str_cat("rename to ", path), errno);
    placed = st.ok();
  } else if (st.ok()) {
    // link() fails with EEXIST instead of replacing: the first writer wins.
    if (::link(tmp.c_str(), path.c_str()) == 0) {
      placed = true;
    } else if (errno != EEXIST) {
      st = system_error(str_cat("link to ", path), errno);
    }
  }
  if (!placed || replace == Replace::kNo) ::unlink(tmp.c_str());
  TM_RETURN_IF_ERROR(st);
  if (placed) TM_RETURN_IF_ERROR(fsync_directory_of(path));
  return placed;
}

namespace {

Result<UniqueFd> open_for_reading(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return error(TM_ERROR_NOT_FOUND, path, ": no such file");
    return system_error(str_cat("open ", path), errno);
  }
  return fd;
}

}  // namespace

Result<std::vector<std::byte>> read_file(const std::string& path, size_t max_bytes) {
  TM_ASSIGN_OR_RETURN(UniqueFd fd, open_for_reading(path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error(str_cat("stat ", path), errno);
  if (!S_ISREG(st.st_mode)) return error(TM_ERROR_INVALID_ARGUMENT, path, ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, path, ": ", st.st_size,
                 " bytes, more than the limit of ", max_bytes);
  }
  std::vector<std::byte> out(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd.get(), out.data() + done, std::min(out.size() - done, kMaxIoChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error(str_cat("read ", path), errno);
    if (n == 0) break;  // shrank while reading: the parser reports it truncated
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

Status read_file_chunks(const std::string& path,
                        const std::function<bool(std::span<const std::byte>)>& visit) {
  TM_ASSIGN_OR_RETURN(UniqueFd fd, open_for_reading(path));
  std::vector<std::byte> buffer(kMaxIoChunk);
  for (bool end = false; !end;) {
    size_t filled = 0;
    while (filled < buffer.size()) {
      ssize_t n = ::read(fd.get(), buffer.data() + filled, buffer.size() - filled);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return system_error(str_cat("read ", path), errno);
      if (n == 0) {
        end = true;
        break;
      }
      filled += static_cast<size_t>(n);
    }
    if (filled > 0 && !visit(std::span<const std::byte>(buffer.data(), filled))) break;
  }
  return Status::Ok();
}

Status make_directories(const std::string& path) {
  // mkdir each missing component with 0750; existing ones keep their mode.
  for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    std::string prefix = path.substr(0, at);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0750) != 0 && errno != EEXIST) {
      return system_error(str_cat("create directory ", prefix), errno);
    }
    if (at == std::string::npos) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return error(TM_ERROR_INVALID_ARGUMENT, path, ": not a directory");
  }
  return Status::Ok();
}

}  // namespace trainmover::record
