// Recursive doubling (comm/collective_plan.h): the allreduce for small
// buffers, in ceil(log2 N) dependent exchanges (+2 when N is no power of
// two) instead of the ring's 2(N-1) steps; each slot sends and receives the
// whole buffer at each exchange, so it is chosen by size (comm/algorithm.h).
//
// With p the largest power of two <= N and r = N - p:
//   1. fold: slot s in [p, N) sends its input to slot s - p, whose value
//      becomes x[s-p] OP x[s];
//   2. for k = 0, 1, ..., log2(p) - 1: slot s < p exchanges its value with
//      slot s ^ 2^k, and both combine them, the lower slot's value first;
//   3. unfold: slot s < r sends the result to slot s + p.
// Reduction order (the slots' results are equal bit for bit): with
// v(s) = x[s] OP x[s+p] for s < r and v(s) = x[s] otherwise (s < p), the
// result is the balanced tree over slots 0..p-1:
//   V(a, 1) = v(a);  V(a, 2m) = V(a, m) OP V(a + m, m);  result = V(0, p).
// TM_AVG divides the result by N once, after the last combine.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "comm/collective_plan.h"

namespace trainmover {

// `plan` is cleared and refilled; its vectors keep their capacity.
void plan_allreduce_doubling(CollectivePlan& plan, const PlanGeometry& g, size_t count,
                             bool average);

// Broadcast over the same pairs: a root beyond p first hands the buffer to
// root - p; among [0, p) the slots that have it send it on over bit 1, 2,
// 4, ... of their distance from that root (slot s gets it from
// s ^ highbit(s ^ root)); then slot s < r sends it to s + p. ceil(log2 N)
// dependent steps, +2 when N is no power of two.
void plan_broadcast_doubling(CollectivePlan& plan, const PlanGeometry& g, size_t count, int root,
                             bool in_place);

// Allgather over the same pairs: slot s >= p first hands its block to
// s - p; then over bit 1, 2, 4, ... slot s < p exchanges every block it
// holds (those of the slots that share its bits above `bit`, and of the
// slots p above them) with s ^ bit; then slot s < r sends every other block
// to s + p. `in_place`: input already is the slot's block of output.
void plan_allgather_doubling(CollectivePlan& plan, const PlanGeometry& g, size_t sendcount,
                             bool in_place);

// The slot pairs (lower, higher) recursive doubling exchanges over, sorted:
// (s, s ^ 2^k) for s < p and (s, s + p) for s < r. A slot is in at most
// log2(N) + 1 of them.
std::vector<std::pair<int, int>> doubling_pairs(int nslots);

}  // namespace trainmover
