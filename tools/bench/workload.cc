#include "workload.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "common/clock.h"
#include "common/crc32c.h"

namespace trainmover::bench {

Workload::Workload(size_t count, int slot) : params_(count), grads_(count) {
  for (size_t i = 0; i < count; ++i) {
    params_[i] = 0.001f * static_cast<float>((i * 7 + static_cast<size_t>(slot) * 13) % 1000);
  }
}

void Workload::compute(int passes, int iteration) {
  const float scale = 0.5f + 0.001f * static_cast<float>(iteration % 100);
  for (size_t i = 0; i < grads_.size(); ++i) grads_[i] = params_[i];
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < grads_.size(); ++i) grads_[i] = std::fma(grads_[i], scale, params_[i]);
  }
}

void Workload::apply(int nslots) {
  const float lr = 0.01f / static_cast<float>(nslots);
  for (size_t i = 0; i < params_.size(); ++i) params_[i] -= lr * grads_[i];
}

uint32_t Workload::gradient_crc() const { return crc32c(std::as_bytes(std::span(grads_))); }

int calibrate_passes(size_t count, double target_s) {
  Workload w(count, 0);
  constexpr int kProbe = 4;
  w.compute(kProbe, 0);  // touch the pages first
  std::vector<double> per_pass;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    w.compute(kProbe, i);
    per_pass.push_back(to_seconds(Clock::now() - start) / kProbe);
  }
  std::sort(per_pass.begin(), per_pass.end());
  double t = std::max(per_pass[per_pass.size() / 2], 1e-9);
  return std::max(1, static_cast<int>(std::lround(target_s / t)));
}

double first_touch_us_per_page() {
  constexpr size_t kBytes = size_t{8} << 20, kPage = 4096;
  std::vector<double> per_page;
  for (int i = 0; i < 5; ++i) {
    void* map = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return 0;
    auto* bytes = static_cast<volatile unsigned char*>(map);
    auto start = Clock::now();
    for (size_t at = 0; at < kBytes; at += kPage) bytes[at] = 1;
    per_page.push_back(to_seconds(Clock::now() - start) * 1e6 / (kBytes / kPage));
    ::munmap(map, kBytes);
  }
  std::sort(per_page.begin(), per_page.end());
  return per_page[per_page.size() / 2];
}

}  // namespace trainmover::bench
