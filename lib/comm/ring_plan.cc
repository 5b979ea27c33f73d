#include "comm/ring_plan.h"

#include <algorithm>

namespace trainmover {

size_t chunk_begin(size_t count, int nslots, int c) {
  size_t n = static_cast<size_t>(nslots);
  size_t i = static_cast<size_t>(c);
  return i * (count / n) + std::min(i, count % n);
}

size_t chunk_size(size_t count, int nslots, int c) {
  size_t n = static_cast<size_t>(nslots);
  return count / n + (static_cast<size_t>(c) < count % n ? 1 : 0);
}

namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

// A ring sends every message to the next slot and receives from the previous one.
void aim_at_ring(CollectivePlan& plan, const PlanGeometry& g) {
  for (PlanSend& s : plan.sends) s.peer = (g.slot + 1) % g.nslots;
  for (PlanRecv& r : plan.recvs) r.peer = mod(g.slot - 1, g.nslots);
}

// Where chunk c lives and how large it is.
struct Chunks {
  std::vector<size_t> begin;  // in input elements
  std::vector<size_t> size;
  size_t max_size = 0;
};

// One round's segment of chunk c: [offset, offset+count) within the chunk.
struct Segment {
  size_t offset = 0;
  size_t count = 0;
};

Segment segment(const Chunks& chunks, int c, size_t round, size_t seg) {
  size_t begin = round * seg;
  size_t size = chunks.size[static_cast<size_t>(c)];
  if (begin >= size) return {};
  return {begin, std::min(seg, size - begin)};
}

size_t rounds(const Chunks& chunks, size_t seg) { return (chunks.max_size + seg - 1) / seg; }

// Reduce-scatter steps of one round. Returns the index of the receive that
// completes this slot's own chunk (or -1 when that segment is empty).
// `final_base` is where the slot's own chunk goes in output.
int64_t add_reduce_scatter_round(CollectivePlan& plan, const PlanGeometry& g, const Chunks& chunks,
                                 size_t round, size_t final_base) {
  const int n = g.nslots;
  int64_t prev_recv = -1;  // the receive (same round, previous step) a send forwards
  for (int k = 0; k <= n - 2; ++k) {
    int send_chunk = mod(g.slot - k - 1, n);
    int recv_chunk = mod(g.slot - k - 2, n);
    Segment s = segment(chunks, send_chunk, round, g.segment_elems);
    if (s.count > 0) {
      if (k == 0) {
        plan.sends.push_back({PlanBuffer::kInput,
                              chunks.begin[static_cast<size_t>(send_chunk)] + s.offset, s.count,
                              -1});
      } else {
        plan.sends.push_back({PlanBuffer::kStaging, 0, s.count, prev_recv});
      }
    }
    Segment r = segment(chunks, recv_chunk, round, g.segment_elems);
    prev_recv = -1;
    if (r.count > 0) {
      size_t in_off = chunks.begin[static_cast<size_t>(recv_chunk)] + r.offset;
      bool last = k == n - 2;
      PlanRecv recv;
      recv.action = last ? RecvAction::kReduceToOutput : RecvAction::kReduceToStaging;
      recv.offset = last ? final_base + r.offset : 0;
      recv.input_offset = in_off;
      recv.count = r.count;
      plan.recvs.push_back(recv);
      prev_recv = static_cast<int64_t>(plan.recvs.size() - 1);
    }
  }
  return prev_recv;
}

// Allgather steps of one round: block c of output starts at out_begin[c].
// The first send takes this slot's block from `first_source` at `first_offset`
// once receive `first_after` (or -1) is done.
void add_allgather_round(CollectivePlan& plan, const PlanGeometry& g, const Chunks& chunks,
                         size_t round, const std::vector<size_t>& out_begin,
                         PlanBuffer first_source, size_t first_offset, int64_t first_after) {
  const int n = g.nslots;
  int64_t prev_recv = first_after;
  for (int k = 0; k <= n - 2; ++k) {
    int send_chunk = mod(g.slot - k, n);
    int recv_chunk = mod(g.slot - k - 1, n);
    Segment s = segment(chunks, send_chunk, round, g.segment_elems);
    if (s.count > 0) {
      if (k == 0) {
        plan.sends.push_back({first_source, first_offset + s.offset, s.count, prev_recv});
      } else {
        plan.sends.push_back({PlanBuffer::kOutput,
                              out_begin[static_cast<size_t>(send_chunk)] + s.offset, s.count,
                              prev_recv});
      }
    }
    Segment r = segment(chunks, recv_chunk, round, g.segment_elems);
    prev_recv = -1;
    if (r.count > 0) {
      PlanRecv recv;
      recv.action = RecvAction::kIntoOutput;
      recv.offset = out_begin[static_cast<size_t>(recv_chunk)] + r.offset;
      recv.count = r.count;
      plan.recvs.push_back(recv);
      prev_recv = static_cast<int64_t>(plan.recvs.size() - 1);
    }
  }
}

Chunks uneven_chunks(size_t count, int n) {
  Chunks c;
  for (int i = 0; i < n; ++i) {
    c.begin.push_back(chunk_begin(count, n, i));
    c.size.push_back(chunk_size(count, n, i));
  }
  c.max_size = chunk_size(count, n, 0);
  return c;
}

Chunks even_chunks(size_t block, int n) {
  Chunks c;
  for (int i = 0; i < n; ++i) {
    c.begin.push_back(block * static_cast<size_t>(i));
    c.size.push_back(block);
  }
  c.max_size = block;
  return c;
}

}  // namespace

void plan_allreduce(CollectivePlan& plan, const PlanGeometry& g, size_t count, bool average) {
  plan.clear();
  plan.divide_final = average && g.nslots > 1;
  if (g.nslots == 1) {
    plan.copy_count = count;
    return;
  }
  Chunks chunks = uneven_chunks(count, g.nslots);
  const size_t own_begin = chunks.begin[static_cast<size_t>(g.slot)];
  for (size_t round = 0, r = rounds(chunks, g.segment_elems); round < r; ++round) {
    int64_t final_recv = add_reduce_scatter_round(plan, g, chunks, round, own_begin);
    add_allgather_round(plan, g, chunks, round, chunks.begin, PlanBuffer::kOutput, own_begin,
                        final_recv);
  }
  aim_at_ring(plan, g);
}

void plan_reduce_scatter(CollectivePlan& plan, const PlanGeometry& g, size_t recvcount,
                         bool average) {
  plan.clear();
  plan.divide_final = average && g.nslots > 1;
  if (g.nslots == 1) {
    plan.copy_count = recvcount;
    return;
  }
  Chunks chunks = even_chunks(recvcount, g.nslots);
  for (size_t round = 0, r = rounds(chunks, g.segment_elems); round < r; ++round) {
    add_reduce_scatter_round(plan, g, chunks, round, 0);
  }
  aim_at_ring(plan, g);
}

void plan_allgather(CollectivePlan& plan, const PlanGeometry& g, size_t sendcount, bool in_place) {
  plan.clear();
  const size_t own_begin = sendcount * static_cast<size_t>(g.slot);
  if (!in_place) {
    plan.copy_count = sendcount;
    plan.copy_to = own_begin;
  }
  if (g.nslots == 1) return;
  Chunks chunks = even_chunks(sendcount, g.nslots);
  for (size_t round = 0, r = rounds(chunks, g.segment_elems); round < r; ++round) {
    // Sending this slot's block straight from input lets the copy overlap.
    PlanBuffer source = in_place ? PlanBuffer::kOutput : PlanBuffer::kInput;
    add_allgather_round(plan, g, chunks, round, chunks.begin, source, in_place ? own_begin : 0, -1);
  }
  aim_at_ring(plan, g);
}

void plan_broadcast(CollectivePlan& plan, const PlanGeometry& g, size_t count, int root,
                    bool in_place) {
  plan.clear();
  const bool is_root = g.slot == root;
  if (is_root && !in_place) plan.copy_count = count;
  if (g.nslots == 1) return;
  const bool forwards = (g.slot + 1) % g.nslots != root;
  for (size_t offset = 0; offset < count; offset += g.segment_elems) {
    size_t n = std::min(g.segment_elems, count - offset);
    if (is_root) {
      plan.sends.push_back({in_place ? PlanBuffer::kOutput : PlanBuffer::kInput, offset, n, -1});
      continue;
    }
    plan.recvs.push_back({RecvAction::kIntoOutput, offset, 0, n});
    if (forwards) {
      plan.sends.push_back(
          {PlanBuffer::kOutput, offset, n, static_cast<int64_t>(plan.recvs.size() - 1)});
    }
  }
  aim_at_ring(plan, g);
}

}  // namespace trainmover
