// Ring schedules as data: for one slot, the ordered list of messages it
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
#include <cstdint>
#include <vector>

namespace trainmover {

enum class PlanBuffer : uint8_t { kInput, kOutput, kStaging };

struct PlanSend {
  PlanBuffer source = PlanBuffer::kInput;  // kStaging: the staging slot of receive `after_recv`
  size_t offset = 0;                       // elements into source (input/output)
  size_t count = 0;                        // elements
  int64_t after_recv = -1;                 // receive that must complete first, or -1
};

enum class RecvAction : uint8_t {
  kIntoOutput,       // lands in output[offset] as is (allgather, broadcast)
  kReduceToStaging,  // staging = staging OP input[input_offset]; forwarded by a later send
  kReduceToOutput,   // output[offset] = staging OP input[input_offset]: this slot's final value
};

struct PlanRecv {
  RecvAction action = RecvAction::kIntoOutput;
  size_t offset = 0;        // elements into output
  size_t input_offset = 0;  // elements into input (reduce actions)
  size_t count = 0;
};

struct RingPlan {
  std::vector<PlanSend> sends;
  std::vector<PlanRecv> recvs;
  // A local copy input[copy_from..] -> output[copy_to..] done before the ring.
  size_t copy_count = 0;
  size_t copy_from = 0;
  size_t copy_to = 0;
  bool divide_final = false;  // TM_AVG: divide final values by nslots
  void clear();
};

struct RingGeometry {
  int nslots = 1;
  int slot = 0;
  size_t segment_elems = 1;  // > 0
};

// `plan` is cleared and refilled; its vectors keep their capacity.
void plan_allreduce(RingPlan& plan, const RingGeometry& g, size_t count, bool average);
void plan_reduce_scatter(RingPlan& plan, const RingGeometry& g, size_t recvcount, bool average);
// `in_place`: input already is the slot's block of output, no copy needed.
void plan_allgather(RingPlan& plan, const RingGeometry& g, size_t sendcount, bool in_place);
void plan_broadcast(RingPlan& plan, const RingGeometry& g, size_t count, int root, bool in_place);

// Chunk c of `count` elements split in nslots: sizes differ by at most one.
size_t chunk_begin(size_t count, int nslots, int c);
size_t chunk_size(size_t count, int nslots, int c);

}  // namespace trainmover
