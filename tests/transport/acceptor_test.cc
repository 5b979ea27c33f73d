// The acceptor out of file descriptors: it sheds the oldest queued
// connection with its spare descriptor, asks to be called again, and accepts
// normally once descriptors are free. Runs in a child process that lowers
// its own RLIMIT_NOFILE.
#include "transport/tcp/acceptor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "support/sanitizers.h"
#include "transport/tcp/socket.h"

namespace trainmover::transport::tcp {
namespace {

// A connected client socket (blocking), or an invalid fd.
UniqueFd connect_to(const SocketAddress& address) {
  UniqueFd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  timeval tv{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) != 0)
    return UniqueFd();
  return fd;
}

int exhaust_and_recover() {
  rlimit r{32, 32};
  if (setrlimit(RLIMIT_NOFILE, &r) != 0) return 10;
  auto address = resolve("127.0.0.1:0");
  if (!address.ok()) return 11;
  auto listen_fd = listen_on(address.value());
  if (!listen_fd.ok()) return 12;
  auto bound = local_address(listen_fd.value().get());
  if (!bound.ok()) return 13;
  Acceptor acceptor(std::move(listen_fd).value(), "test listener");
  UniqueFd early = connect_to(bound.value());  // queued before descriptors run out
  if (!early.valid()) return 14;
  std::vector<UniqueFd> hog;
  while (true) {
    UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) break;
    hog.push_back(std::move(fd));
  }
  int accepted = 0;
  auto count = [&](UniqueFd) { ++accepted; };
  acceptor.accept_ready(count);
  if (accepted != 0) return 15;
  if (acceptor.retry_at() == Clock::time_point::max()) return 16;  // no retry asked for
  char byte;
  if (recv(early.get(), &byte, 1, 0) != 0) return 17;  // shed: the client sees a close
  hog.clear();
  UniqueFd late = connect_to(bound.value());
  if (!late.valid()) return 18;
  acceptor.accept_ready(count);
  if (accepted != 1) return 19;
  if (acceptor.retry_at() != Clock::time_point::max()) return 20;
  return 0;
}

TEST(Acceptor, ShedsWhenOutOfDescriptorsAndAcceptsOnceFree) {
  if (trainmover::testing::kSanitizerBuild)
    GTEST_SKIP() << trainmover::testing::kNeedsFreeDescriptors;
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) _exit(exhaust_and_recover());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "step that failed: see exhaust_and_recover()";
}

}  // namespace
}  // namespace trainmover::transport::tcp
