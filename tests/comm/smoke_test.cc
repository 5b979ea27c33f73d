#include <gtest/gtest.h>

#include <vector>

#include "comm/communicator.h"
#include "support/multiprocess.h"

namespace trainmover {
namespace {

TEST(Smoke, AllreduceSum) {
  testing::TestJob job;
  for (int n : {1, 2, 3, 4}) {
    auto exits = job.run(n, [&](int slot) {
      auto comm = Communicator::create(job.config(slot, n, "smoke" + std::to_string(n)));
      if (!comm.ok()) {
        fprintf(stderr, "slot %d: %s\n", slot, comm.status().message().c_str());
        return 1;
      }
      std::vector<float> data(1000, static_cast<float>(slot + 1));
      Status st = comm.value()->allreduce(data.data(), data.data(), data.size(), TM_FLOAT32, TM_SUM);
      if (!st.ok()) {
        fprintf(stderr, "slot %d: %s\n", slot, st.message().c_str());
        return 2;
      }
      float expect = static_cast<float>(n * (n + 1) / 2);
      for (float v : data)
        if (v != expect) {
          fprintf(stderr, "slot %d: got %f expected %f\n", slot, v, expect);
          return 3;
        }
      return 0;
    });
    for (int i = 0; i < n; ++i) EXPECT_TRUE(exits[i].ok()) << "n=" << n << " slot " << i << ": " << exits[i].describe();
  }
}

}  // namespace
}  // namespace trainmover
