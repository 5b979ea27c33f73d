// Collective schedules as data: for one slot, the ordered list of messages
// it sends and receives, the peer slot of each, and what it does with each
// received message. The ring (comm/ring_plan.h) and recursive doubling
// (comm/doubling_plan.h) build them; PlanExecutor (comm/plan_executor.h)
// runs them. A plan depends only on the call and the slot numbers, never on
// which process serves a slot.
//
// Order: sends are posted in plan order, receives are posted and completed
// in plan order. Messages between two slots are matched in the order each
// side lists them, so the sender's sends to a peer and the peer's receives
// from it must list the same counts in the same order.
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
  int peer = -1;                           // the slot it goes to
};

enum class RecvAction : uint8_t {
  kIntoOutput,       // lands in output[offset] as is (allgather, broadcast)
  kReduceToStaging,  // staging = staging OP input[input_offset]; forwarded by a later send
  kReduceToOutput,   // output[offset] = staging OP input[input_offset]: this slot's final value
  // The two halves of a pairwise exchange: the lower slot's side goes first.
  kCombineAfterOutput,   // output[offset] = output[offset] OP staging (the peer is the higher side)
  kCombineBeforeOutput,  // output[offset] = staging OP output[offset] (the peer is the lower side)
};

struct PlanRecv {
  RecvAction action = RecvAction::kIntoOutput;
  size_t offset = 0;        // elements into output
  size_t input_offset = 0;  // elements into input (kReduceTo* actions)
  size_t count = 0;
  int peer = -1;  // the slot it comes from
  // The combine actions overwrite output that a send reads: the send that
  // must have completed first, or -1.
  int64_t after_send = -1;
  // A combine whose result is final: TM_AVG divides it (with divide_final).
  bool final = false;
};

struct CollectivePlan {
  std::vector<PlanSend> sends;
  std::vector<PlanRecv> recvs;
  // A local copy input[copy_from..] -> output[copy_to..] done before any message.
  size_t copy_count = 0;
  size_t copy_from = 0;
  size_t copy_to = 0;
  bool divide_final = false;  // TM_AVG: divide final values by nslots
  void clear();
};

struct PlanGeometry {
  int nslots = 1;
  int slot = 0;
  size_t segment_elems = 1;  // > 0: the largest message, in elements
};

}  // namespace trainmover
