#include "control/lifeline.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>

#include "common/parse.h"

namespace trainmover::control {

// The shared page. Only trainmover-launch and the process it started map
// it, both built from this file, so the layout needs no versioning beyond
// the magic that tells a lifeline from any other descriptor.
struct LifelinePage {
  uint64_t magic;
  pthread_mutex_t mutex;           // robust, process-shared: the holder's
  std::atomic<uint32_t> armed;     // a futex word: 1 once the holder has the mutex
  std::atomic<uint32_t> released;  // 1: the holder let go on purpose
};

namespace {

constexpr uint64_t kMagic = 0x31454E494C45464CULL;  // "LFELINE1"
constexpr size_t kPageBytes = 4096;
static_assert(sizeof(LifelinePage) <= kPageBytes);
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
// How often a watch looks at its stop flag while the holder lives; its
// owner's destructor waits at most this long.
constexpr long kPollNs = 200'000'000;

timespec monotonic_after(long ns) {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_nsec += ns;
  t.tv_sec += t.tv_nsec / 1'000'000'000;
  t.tv_nsec %= 1'000'000'000;
  return t;
}

uint32_t* futex_word(std::atomic<uint32_t>& word) { return reinterpret_cast<uint32_t*>(&word); }

// Shared futexes (no FUTEX_PRIVATE_FLAG): the page is mapped by two processes.
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, long ns) {
  timespec relative{ns / 1'000'000'000, ns % 1'000'000'000};
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT, expected, &relative, nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

Result<LifelineMapping> map_page(int fd) {
  void* at = mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (at == MAP_FAILED) return system_error("mmap of the lifeline page", errno);
  return LifelineMapping(static_cast<LifelinePage*>(at));
}

Status init_mutex(pthread_mutex_t* mutex) {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (rc == 0) rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  if (rc == 0) rc = pthread_mutex_init(mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  return rc == 0 ? Status::Ok() : system_error("a robust process-shared mutex", rc);
}

}  // namespace

LifelineMapping::~LifelineMapping() {
  if (page_ != nullptr) munmap(page_, kPageBytes);
}

Result<std::unique_ptr<LifelineWatch>> LifelineWatch::create() {
  UniqueFd fd(memfd_create("trainmover-lifeline", MFD_CLOEXEC));
  if (!fd.valid()) return system_error("memfd_create for a lifeline", errno);
  if (ftruncate(fd.get(), kPageBytes) != 0) return system_error("ftruncate of a lifeline", errno);
  TM_ASSIGN_OR_RETURN(LifelineMapping page, map_page(fd.get()));
  LifelinePage* p = page.get();  // zero-filled: armed and released are 0
  TM_RETURN_IF_ERROR(init_mutex(&p->mutex));
  p->magic = kMagic;
  return std::unique_ptr<LifelineWatch>(new LifelineWatch(std::move(fd), std::move(page)));
}

LifelineWatch::~LifelineWatch() {
  stop_ = true;
  futex_wake_all(page_.get()->armed);  // a watch still waiting for its holder
  if (thread_.joinable()) thread_.join();
}

Status LifelineWatch::watch(std::function<void()> on_death) {
  if (thread_.joinable())
    return error(TM_ERROR_INVALID_ARGUMENT, "the lifeline is watched already");
  fd_.reset();  // the child has its own: ours would only keep the page alive
  thread_ = std::thread([this, on_death = std::move(on_death)] { run(on_death); });
  return Status::Ok();
}

void LifelineWatch::run(const std::function<void()>& on_death) {
  LifelinePage* p = page_.get();
  while (p->armed.load() == 0) {
    if (stop_) return;
    futex_wait(p->armed, 0, kPollNs);
  }
  while (!stop_) {
    timespec until = monotonic_after(kPollNs);
    int rc = pthread_mutex_clocklock(&p->mutex, CLOCK_MONOTONIC, &until);
    if (rc == ETIMEDOUT || rc == EINTR) continue;
    if (rc == EOWNERDEAD) pthread_mutex_consistent(&p->mutex);
    const bool released = p->released.load() != 0;
    if (rc == 0 || rc == EOWNERDEAD) pthread_mutex_unlock(&p->mutex);
    // rc 0: the holder unlocked, which it does only once released.
    if (rc == EOWNERDEAD && !released && !stop_) on_death();
    return;
  }
}

Result<std::unique_ptr<LifelineHolder>> LifelineHolder::from_env() {
  auto text = get_env(kLifelineFdEnv);
  if (!text || text->empty()) return std::unique_ptr<LifelineHolder>();
  auto fd = parse_int(*text, 0, INT_MAX);
  if (!fd.ok()) return fd.status().with_context(kLifelineFdEnv);
  // Ours only if it is still open: a process that inherited the variable
  // but not the descriptor (a program's own child) is not watched.
  if (fcntl(*fd, F_GETFD) < 0)
    return error(TM_ERROR_INVALID_ARGUMENT, kLifelineFdEnv, "=", *text,
                 ": no such open descriptor (the variable is trainmover-launch's, for the "
                 "process it starts)");
  return take(UniqueFd(static_cast<int>(*fd)));
}

Result<std::unique_ptr<LifelineHolder>> LifelineHolder::take(UniqueFd fd) {
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return system_error("fstat of the lifeline", errno);
  if (!S_ISREG(st.st_mode) || st.st_size != static_cast<off_t>(kPageBytes))
    return error(TM_ERROR_INVALID_ARGUMENT, "descriptor ", fd.get(), " is no lifeline");
  TM_ASSIGN_OR_RETURN(LifelineMapping page, map_page(fd.get()));
  if (page.get()->magic != kMagic)
    return error(TM_ERROR_INVALID_ARGUMENT, "descriptor ", fd.get(), " is no lifeline");
  std::unique_ptr<LifelineHolder> holder(new LifelineHolder(std::move(page)));
  TM_RETURN_IF_ERROR(holder->start());
  return holder;
}

Status LifelineHolder::start() {
  thread_ = std::thread([this] { hold(); });
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return armed_; });  // hold() gives up within 5 s
  if (arm_status_.ok()) return Status::Ok();
  lock.unlock();
  thread_.join();
  return arm_status_;
}

void LifelineHolder::hold() {
  LifelinePage* p = page_.get();
  timespec until = monotonic_after(5'000'000'000L);
  const int rc = pthread_mutex_clocklock(&p->mutex, CLOCK_MONOTONIC, &until);
  std::unique_lock<std::mutex> lock(mutex_);
  armed_ = true;
  if (rc != 0) {
    // EOWNERDEAD included: a page someone held before is not a fresh lifeline.
    arm_status_ = error(TM_ERROR_SYSTEM, "taking the lifeline: ", std::strerror(rc));
    if (rc == EOWNERDEAD) pthread_mutex_unlock(&p->mutex);
    changed_.notify_all();
    return;
  }
  p->armed.store(1);
  futex_wake_all(p->armed);
  changed_.notify_all();
  changed_.wait(lock, [&] { return release_; });
  p->released.store(1);
  pthread_mutex_unlock(&p->mutex);
}

LifelineHolder::~LifelineHolder() { release(); }

void LifelineHolder::release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    release_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trainmover::control
