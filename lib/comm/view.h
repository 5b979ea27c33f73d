// Membership views and their deltas: the data the two-phase switch acts on.
//
// A view is an epoch plus, for each slot, the process serving it (its
// endpoint and instance id). The links of a view are the pairs the
// communicator's algorithms exchange over (comm/algorithm.h: the ring's
// neighbours, and the recursive doubling partners when the policy may use
// them) plus any extra point-to-point pairs (pipeline stages). A link is
// identified by its two slots and the two processes serving them, so when
// one process is replaced only the links that touch its slot change:
// delta() lists, for each process concerned, exactly the links it must open
// and close; processes it does not name have nothing to do.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "comm/algorithm.h"
#include "comm/endpoint.h"
#include "common/status.h"

namespace trainmover {

struct View {
  uint64_t epoch = 0;
  std::vector<Endpoint> slots;                   // index: slot
  std::vector<std::pair<int, int>> extra_pairs;  // point-to-point pairs beyond the ring

  int nslots() const { return static_cast<int>(slots.size()); }
  // Checks slot count, instance ids (non-zero, one slot per process) and pairs.
  Status validate() const;
};

// The slot pairs linked in `view` under `policy`, each as (lower, higher),
// sorted, unique.
std::vector<std::pair<int, int>> linked_pairs(const View& view, const AlgorithmPolicy& policy);

struct ProcessDelta {
  uint64_t instance_id = 0;
  std::vector<int> open;   // peer slots, in the new view, to link with
  std::vector<int> close;  // peer slots, in the old view, whose links go
};

// What changes from `from` to `to`: one entry per process that has links to
// open or close, ordered by instance id. The views must have the same number
// of slots, and `to` a later epoch; both are linked under `policy`.
Result<std::vector<ProcessDelta>> delta(const View& from, const View& to,
                                        const AlgorithmPolicy& policy);

}  // namespace trainmover
