// Ring schedules (comm/collective_plan.h): for one slot, the messages it
// sends to the next slot and receives from the previous one, and what it
// does with each received message.
//
// Buffers are split into nslots chunks; chunk c ends up reduced at slot c.
// Chunks are consecutive and in slot order; each holds count / nslots
// elements, and the first count % nslots chunks one more.
// The chunk is walked in rounds of one segment: in each round every step of
// the ring (nslots-1 reduce-scatter steps, then nslots-1 allgather steps)
// moves one segment, and rounds follow each other through the pipeline.
// Walking segment-major this way keeps at most one staging slot per step
// busy, so two staging slots suffice for progress whatever the socket
// buffers hold; more slots only add overlap.
//
// Reduction order: the value of chunk c is accumulated as
//   ((x[c+1] OP x[c+2]) OP ... ) OP x[c]      (slots mod nslots)
// i.e. it depends only on slot numbers. Items that would carry 0 elements
// are left out on both sides alike.
#pragma once

#include <cstddef>

#include "comm/collective_plan.h"

namespace trainmover {

// `plan` is cleared and refilled; its vectors keep their capacity.
void plan_allreduce(CollectivePlan& plan, const PlanGeometry& g, size_t count, bool average);
void plan_reduce_scatter(CollectivePlan& plan, const PlanGeometry& g, size_t recvcount,
                         bool average);
// `in_place`: input already is the slot's block of output, no copy needed.
void plan_allgather(CollectivePlan& plan, const PlanGeometry& g, size_t sendcount, bool in_place);
void plan_broadcast(CollectivePlan& plan, const PlanGeometry& g, size_t count, int root,
                    bool in_place);

// Chunk c of `count` elements split in nslots: sizes differ by at most one.
size_t chunk_begin(size_t count, int nslots, int c);
size_t chunk_size(size_t count, int nslots, int c);

}  // namespace trainmover
