#include "transport/shm/local_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace trainmover::transport::shm {
namespace {

Result<sockaddr_un> abstract_address(const std::string& name, socklen_t& length) {
  sockaddr_un address{};
  if (name.empty() || name.size() + 1 > sizeof address.sun_path)
    return error(TM_ERROR_INVALID_ARGUMENT, "local socket name '", name, "' is empty or too long");
  address.sun_family = AF_UNIX;
  address.sun_path[0] = '\0';  // abstract: no file
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return address;
}

Result<UniqueFd> local_socket() {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return system_error("socket(AF_UNIX)", errno);
  return fd;
}

}  // namespace

Result<std::string> host_identity() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (!(boot >> boot_id)) return error(TM_ERROR_NOT_FOUND, "cannot read the kernel's boot id");
  struct stat netns {};
  if (stat("/proc/self/ns/net", &netns) != 0) return system_error("stat /proc/self/ns/net", errno);
  return hex64(fnv1a_64(str_cat(boot_id, "/", static_cast<unsigned long long>(netns.st_dev), "/",
                                static_cast<unsigned long long>(netns.st_ino))));
}

Result<UniqueFd> listen_local(const std::string& name, int backlog) {
  socklen_t length = 0;
  TM_ASSIGN_OR_RETURN(sockaddr_un address, abstract_address(name, length));
  TM_ASSIGN_OR_RETURN(UniqueFd fd, local_socket());
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0)
    return system_error(str_cat("bind @", name), errno);
  if (::listen(fd.get(), backlog) != 0) return system_error(str_cat("listen @", name), errno);
  return fd;
}

Result<UniqueFd> start_connect_local(const std::string& name) {
  socklen_t length = 0;
  TM_ASSIGN_OR_RETURN(sockaddr_un address, abstract_address(name, length));
  TM_ASSIGN_OR_RETURN(UniqueFd fd, local_socket());
  while (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    if (errno == EINTR) continue;
    return system_error(str_cat("connect @", name), errno);
  }
  return fd;
}

}  // namespace trainmover::transport::shm
