#include "support/socket_hosts.h"

#include <dirent.h>
#include <sys/socket.h>

#include <cstdlib>
#include <memory>

#include "transport/tcp/socket.h"

namespace trainmover::testing {
namespace {

bool is_tcp(int fd) {
  int type = 0;
  socklen_t len = sizeof type;
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

}  // namespace

std::set<std::string> tcp_socket_hosts() {
  std::set<std::string> hosts;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir("/proc/self/fd"), closedir);
  if (!dir) return hosts;
  while (dirent* entry = readdir(dir.get())) {
    char* end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir.get()) || !is_tcp(int(fd)))
      continue;
    auto local = transport::tcp::local_address(static_cast<int>(fd));
    int family = local.ok() ? local->storage.ss_family : AF_UNSPEC;
    if (family == AF_INET || family == AF_INET6) hosts.insert(local->host());
  }
  return hosts;
}

std::string tcp_socket_hosts_text() {
  std::string text;
  for (const std::string& h : tcp_socket_hosts()) text += (text.empty() ? "" : ",") + h;
  return text.empty() ? "none" : text;
}

}  // namespace trainmover::testing
