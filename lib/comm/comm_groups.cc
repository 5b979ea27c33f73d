#include "comm/comm_groups.h"

#include <algorithm>

#include "comm/communicator.h"

namespace trainmover {

void GroupFamily::add(Communicator* group, GroupSplit split) {
  std::lock_guard<std::mutex> lock(mutex_);
  members_.push_back({group, std::move(split)});
}

void GroupFamily::remove(const Communicator* group) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(members_, [&](const Member& m) { return m.group == group; });
}

bool GroupFamily::contains(const Communicator* group) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::any_of(members_.begin(), members_.end(),
                     [&](const Member& m) { return m.group == group; });
}

std::vector<GroupFamily::Member> GroupFamily::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return members_;
}

void GroupFamily::set_members(const Communicator* group, std::vector<int> members) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Member& m : members_) {
    if (m.group == group) m.split.members = members;
  }
}

void GroupFamily::abort_all(const Status& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Member& m : members_) (void)m.group->abort(why);
}

GroupMembership::GroupMembership(std::shared_ptr<GroupFamily> family, Communicator* group,
                                 GroupSplit split)
    : family_(std::move(family)), group_(group) {
  family_->add(group_, std::move(split));
}

GroupMembership::~GroupMembership() { family_->remove(group_); }

}  // namespace trainmover
