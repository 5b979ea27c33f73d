// Recursive halving and doubling (Rabenseifner): the allreduce for medium
// buffers. A reduce-scatter by recursive halving, then an allgather by
// recursive doubling, over the pairs recursive doubling uses
// (comm/doubling_plan.h): 2 log2(p) dependent exchanges (+2 when N is no
// power of two) instead of the ring's 2(N-1), and each slot sends about
// 2(p-1)/p of the buffer, as the ring does, instead of recursive doubling's
// log2(p) whole buffers.
//
// With p the largest power of two <= N and r = N - p:
//   1. fold: slot s in [p, N) sends its input to slot s - p, whose value
//      becomes x[s-p] OP x[s];
//   2. halving, for bit = 1, 2, ..., p/2: slot s < p and s ^ bit split the
//      range they both hold, [lo, hi), at lo + (hi - lo) / 2; the slot whose
//      `bit` is clear keeps the lower part, the other the upper; each sends
//      the part the other keeps and combines what it receives into its own,
//      the lower slot's value first;
//   3. doubling, for bit = p/2, ..., 2, 1: each sends the part it kept at
//      that bit and receives the other part, so it holds the whole range
//      again;
//   4. unfold: slot s < r sends the result to slot s + p.
// Reduction order: every element is combined as in recursive doubling: at
// bit b, a slot's part holds the value of the aligned block of b slots that
// contains it, and the combine with the block above gives the block of 2b.
// With v(s) = x[s] OP x[s+p] for s < r and v(s) = x[s] otherwise (s < p):
//   V(a, 1) = v(a);  V(a, 2m) = V(a, m) OP V(a + m, m);  result = V(0, p),
// bit for bit the result of recursive doubling (and so of its reference).
// TM_AVG divides each element by N once, after its last combine.
#pragma once

#include <cstddef>

#include "comm/collective_plan.h"

namespace trainmover {

// `plan` is cleared and refilled; its vectors keep their capacity.
void plan_allreduce_halving(CollectivePlan& plan, const PlanGeometry& g, size_t count,
                            bool average);

// The reduce_scatter: the fold, then the halving over blocks instead of
// halves: block t (recvcount elements at t * recvcount) belongs to slot
// t mod p, and at bit b a slot keeps the blocks it holds whose owner agrees
// with it in bits b and below, and gives the others (one message, or
// segments, per block, in block order); after the last bit slot s holds
// blocks s and s + p, then slot s < r sends block s + p to slot s + p.
// log2 p dependent exchanges (+2 when N is no power of two); each slot of
// [0, p) sends (p-1)/p of the blocks it holds after the fold, as on the
// ring. The output is the whole buffer (count = N * recvcount): the
// communicator's scratch, of which the slot keeps its block; every block of
// it that this slot does not own is partial. The order is recursive
// doubling's, bit for bit: at bit b a block held holds the value V(a, b) of
// the aligned block of b slots that contains the slot.
void plan_reduce_scatter_halving(CollectivePlan& plan, const PlanGeometry& g, size_t recvcount,
                                 bool average);

}  // namespace trainmover
