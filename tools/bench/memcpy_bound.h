// The physical bound of a shared-memory transport on this host: how fast one
// core copies a large buffer. A message through shared memory is copied
// twice (into the ring, out of it), so a link moves at most half of this.
#pragma once

#include <cstddef>

namespace trainmover::bench {

// The best of a few single-threaded memcpy of `bytes` between two buffers
// already touched, in GB/s (1e9 bytes/s).
double memcpy_gbps(size_t bytes = size_t{64} << 20);

}  // namespace trainmover::bench
