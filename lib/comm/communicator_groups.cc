// Communicator: groups split from it and their switch (split,
// join_groups, prepare_groups, wait_groups_prepared, switchover_groups).
// See communicator.h and docs/groups.md.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "comm/communicator.h"
#include "comm/group_view.h"

namespace trainmover {
namespace {

// What every slot gave to a split, as the store keeps it for standbys:
// "born <parent epoch> slots <n>" then "<color> <key>" per slot.
struct SplitRecord {
  uint64_t born = 0;
  std::vector<int> colors;
  std::vector<int> keys;
};

std::string encode_split(const SplitRecord& r) {
  std::string s = str_cat("born ", r.born, " slots ", r.colors.size());
  for (size_t i = 0; i < r.colors.size(); ++i) s += str_cat(" ", r.colors[i], " ", r.keys[i]);
  return s;
}

Result<SplitRecord> parse_split(const std::string& text) {
  std::istringstream in(text);
  std::string born_word, slots_word;
  SplitRecord r;
  size_t n = 0;
  in >> born_word >> r.born >> slots_word >> n;
  if (!in || born_word != "born" || slots_word != "slots" || n == 0 || n > (1u << 20))
    return error(TM_ERROR_PROTOCOL, "malformed split record '", text.substr(0, 64), "'");
  r.colors.resize(n);
  r.keys.resize(n);
  for (size_t i = 0; i < n; ++i) in >> r.colors[i] >> r.keys[i];
  if (!in) return error(TM_ERROR_PROTOCOL, "split record of ", n, " slots is cut short");
  return r;
}

Status check_colors(const std::vector<int>& colors) {
  for (size_t s = 0; s < colors.size(); ++s) {
    if (colors[s] < Communicator::kNoColor) {
      return error(TM_ERROR_INVALID_ARGUMENT, "split: slot ", s, " gave color ", colors[s],
                   "; a color is >= 0, or TM_SPLIT_NOCOLOR (-1) for no group");
    }
  }
  return Status::Ok();
}

// The members (parent slots) of the group of `color`.
std::vector<int> members_of(const SplitRecord& r, int color) {
  std::vector<int> colors(r.colors.size(), Communicator::kNoColor);
  for (size_t s = 0; s < colors.size(); ++s) {
    if (r.colors[s] == color) colors[s] = color;
  }
  auto groups = split_members(colors, r.keys);
  return groups.ok() && !groups->empty() ? groups->front() : std::vector<int>{};
}

int index_of(const std::vector<int>& members, int slot) {
  auto it = std::find(members.begin(), members.end(), slot);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

// A group's views exist at 0 (its first) and at every parent epoch after
// its birth: the group's epoch for the parent's `epoch`.
uint64_t group_epoch(uint64_t parent_epoch, uint64_t born) {
  return parent_epoch > born ? parent_epoch : 0;
}

// The group slots whose parent slot another process serves in `next` than
// in `base` (the parent's views): the group's joiners.
std::vector<int> replaced_members(const std::vector<int>& members, const View& base,
                                  const View& next) {
  std::vector<int> replaced;
  for (size_t g = 0; g < members.size(); ++g) {
    const size_t s = static_cast<size_t>(members[g]);
    if (base.slots[s].instance_id != next.slots[s].instance_id)
      replaced.push_back(static_cast<int>(g));
  }
  return replaced;
}

}  // namespace

std::string Communicator::split_key(uint64_t seq) const {
  return str_cat("split/", config_.name, "/", seq);
}

// A group's name: unique per (parent, split, color) and within the
// 128-character limit (a long parent name is cut and its hash added).
CommConfig Communicator::group_config(uint64_t seq, int color, int slot, int nslots) const {
  CommConfig c = config_;
  std::string base = config_.name;
  if (base.size() > 80) {
    char hash[20];
    std::snprintf(hash, sizeof hash, "#%016" PRIx64, comm_id_of(base));
    base = base.substr(0, 80) + hash;
  }
  c.name = str_cat(base, "/split", seq, ".", color);
  c.slot = slot;
  c.nslots = nslots;
  c.link_counters = nullptr;  // a group counts its own links
  return c;
}

Result<std::unique_ptr<Communicator>> Communicator::split(
    int color, int key, std::shared_ptr<transport::shm::RingPool> ring_pool) {
  if (left_) return check_live();
  const uint64_t seq = splits_++;
  if (config_.slot < 0) return split_standby(seq, color, key, std::move(ring_pool));
  const int n = config_.nslots;
  const int32_t mine[2] = {color, key};
  std::vector<int32_t> all(static_cast<size_t>(2 * n));
  TM_RETURN_IF_ERROR(
      allgather(mine, all.data(), 2, TM_INT32).with_context("split: agreeing on colors and keys"));
  SplitRecord record;
  record.born = epoch_;
  for (int s = 0; s < n; ++s) {
    record.colors.push_back(all[static_cast<size_t>(2 * s)]);
    record.keys.push_back(all[static_cast<size_t>(2 * s + 1)]);
  }
  TM_RETURN_IF_ERROR(check_colors(record.colors));
  // For standbys, which will join without taking part in the split.
  if (config_.slot == 0) TM_RETURN_IF_ERROR(store_->set(split_key(seq), encode_split(record)));
  if (color == kNoColor) return std::unique_ptr<Communicator>();
  const std::vector<int> members = members_of(record, color);
  const int slot = index_of(members, config_.slot);
  auto group = create(group_config(seq, color, slot, static_cast<int>(members.size())));
  if (!group.ok()) return group.status().with_context(str_cat("split #", seq, " color ", color));
  (*group)->membership_ = std::make_unique<GroupMembership>(groups_, group->get(),
                                                            GroupSplit{seq, color, key, members});
  return group;
}

Result<std::unique_ptr<Communicator>> Communicator::split_standby(
    uint64_t seq, int color, int key, std::shared_ptr<transport::shm::RingPool> ring_pool) {
  TM_RETURN_IF_ERROR(check_colors({color}));
  if (color == kNoColor) return std::unique_ptr<Communicator>();
  auto text = store_->get(split_key(seq), seconds(config_.connect_timeout_s));
  if (!text.ok())
    return text.status().with_context(
        str_cat("standby split #", seq, ": the job's record of that split"));
  TM_ASSIGN_OR_RETURN(SplitRecord record, parse_split(*text));
  const size_t size = members_of(record, color).size();
  if (size == 0)
    return error(TM_ERROR_INVALID_ARGUMENT, "standby split #", seq,
                 ": no slot of the job gave color ", color);
  CommConfig c = group_config(seq, color, -1, static_cast<int>(size));
  if (ring_pool) c.ring_pool = std::move(ring_pool);
  auto group = create_standby(c);
  if (!group.ok()) return group.status().with_context(str_cat("split #", seq, " color ", color));
  (*group)->membership_ =
      std::make_unique<GroupMembership>(groups_, group->get(), GroupSplit{seq, color, key, {}});
  return group;
}

// Every joiner of a group offers its endpoint for the parent's new epoch;
// the group's view of that epoch is its view before with each replaced slot
// taken from its joiner's offer. Any live member can assemble it and all
// assemble the same, so each publishes it (publishing the same view again
// succeeds): several slots of one group can be replaced in one epoch.
Status Communicator::offer_group_endpoint(uint64_t epoch, int slot) {
  return store_->set(endpoint_key(config_.name, epoch, slot), encode_endpoint(self_));
}

Result<View> Communicator::assemble_group_view(View before, uint64_t epoch,
                                               const std::vector<int>& replaced) {
  before.epoch = epoch;
  for (int g : replaced) {
    TM_ASSIGN_OR_RETURN(std::string record, store_->get(endpoint_key(config_.name, epoch, g),
                                                        seconds(config_.connect_timeout_s)));
    TM_ASSIGN_OR_RETURN(before.slots[static_cast<size_t>(g)], parse_endpoint(record));
  }
  TM_RETURN_IF_ERROR(publish_view(before));
  return before;
}

Status Communicator::join_groups(uint64_t epoch, int slot, uint64_t base_epoch) {
  const auto groups = groups_->snapshot();
  if (groups.empty()) return Status::Ok();
  TM_ASSIGN_OR_RETURN(View base, fetch_view(base_epoch));
  TM_ASSIGN_OR_RETURN(View next, fetch_view(epoch));
  for (const GroupFamily::Member& m : groups) {
    Communicator& g = *m.group;
    if (g.slot() >= 0) continue;
    TM_ASSIGN_OR_RETURN(std::string text,
                        store_->get(split_key(m.split.seq), seconds(config_.connect_timeout_s)));
    TM_ASSIGN_OR_RETURN(SplitRecord record, parse_split(text));
    const size_t s = static_cast<size_t>(slot);
    if (s >= record.colors.size() || record.colors[s] != m.split.color ||
        record.keys[s] != m.split.key) {
      return error(TM_ERROR_INVALID_ARGUMENT, "split #", m.split.seq, ": slot ", slot,
                   " gave (color, key) = (", s < record.colors.size() ? record.colors[s] : -1, ", ",
                   s < record.keys.size() ? record.keys[s] : -1, ") but this standby gave (",
                   m.split.color, ", ", m.split.key, ")");
    }
    std::vector<int> members = members_of(record, m.split.color);
    const int group_slot = index_of(members, slot);
    groups_->set_members(&g, members);
    TM_RETURN_IF_ERROR(g.offer_group_endpoint(epoch, group_slot));
    const std::vector<int> replaced = replaced_members(members, base, next);
    // The joiner assembles the group's view itself, as its stayers will in
    // prepare_groups (the same bytes: compare-and-set keeps one): it cannot
    // wait for theirs, which come only after every joiner has answered its
    // promotion. The view before is the group's at the base epoch; a group
    // whose every member is new has none worth keeping and starts from its
    // first.
    const uint64_t group_base = group_epoch(base_epoch, record.born);
    TM_ASSIGN_OR_RETURN(View before,
                        g.fetch_view(replaced.size() == members.size() ? 0 : group_base));
    TM_ASSIGN_OR_RETURN(View view, g.assemble_group_view(std::move(before), epoch, replaced));
    TM_RETURN_IF_ERROR(g.join(view));
    TM_RETURN_IF_ERROR(g.join_groups(epoch, group_slot, group_base));
  }
  return Status::Ok();
}

Status Communicator::prepare_groups(const View& next) {
  const auto groups = groups_->snapshot();
  if (groups.empty()) return Status::Ok();
  std::optional<View> current;  // read only for a group whose view is not published yet
  for (const GroupFamily::Member& m : groups) {
    Communicator& g = *m.group;
    if (g.left_ || g.slot() < 0) continue;
    // A group with a joiner has its view published by the joiner already
    // (join_groups), and others by the first member here: one read then.
    TM_ASSIGN_OR_RETURN(std::optional<View> view, g.published_view(next.epoch));
    if (!view) {
      if (!current) {
        TM_ASSIGN_OR_RETURN(current, fetch_view(epoch_));
      }
      const std::vector<int> replaced = replaced_members(m.split.members, *current, next);
      // Every live member publishes the group's next view, joiners or not:
      // one member alone (say the group's slot 0) may be dead already, its
      // failure not yet in this epoch (it is folded into the next), and the
      // others would wait for its view until the order timed out.
      TM_ASSIGN_OR_RETURN(View before, g.fetch_view(g.epoch()));
      TM_ASSIGN_OR_RETURN(view, g.assemble_group_view(std::move(before), next.epoch, replaced));
    }
    TM_RETURN_IF_ERROR(g.prepare_switch(*view));
    TM_RETURN_IF_ERROR(g.prepare_groups(*view));
  }
  return Status::Ok();
}

Status Communicator::wait_groups_prepared() {
  for (const GroupFamily::Member& m : groups_->snapshot()) {
    TM_RETURN_IF_ERROR(m.group->wait_prepared());
    TM_RETURN_IF_ERROR(m.group->wait_groups_prepared());
  }
  return Status::Ok();
}

Status Communicator::switchover_groups(uint64_t epoch) {
  Status first;
  for (const GroupFamily::Member& m : groups_->snapshot()) {
    Status st = m.group->switchover(epoch);
    Status below = m.group->switchover_groups(epoch);
    if (first.ok()) first = st.ok() ? below : st;  // switch every one, whatever the first said
  }
  return first;
}

bool Communicator::is_group_of(const Communicator& parent) const {
  return membership_ != nullptr && &membership_->family() == parent.groups_.get();
}

Result<GroupSplit> Communicator::split_of() const {
  if (membership_ != nullptr) {
    for (const GroupFamily::Member& m : membership_->family().snapshot()) {
      if (m.group == this) return m.split;
    }
  }
  return error(TM_ERROR_INVALID_ARGUMENT, "communicator '", config_.name, "' is no split group");
}

}  // namespace trainmover
