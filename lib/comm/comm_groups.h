// The groups of a parent communicator (docs/groups.md): which communicators
// were split from it, with what, so that the parent's switch and abort reach
// them (Communicator::split and the *_groups calls in communicator.h).
//
// A GroupFamily belongs to one parent; each group holds a GroupMembership
// that keeps the family alive and leaves it when the group is destroyed, so
// either may be destroyed first: a parent destroyed before its groups leaves
// them working on their own (they switch no more with it).
//
// Threading: thread-safe. add/remove/snapshot take the family's mutex, and
// so does abort_all while it aborts every group: a group's destruction waits
// for an abort in flight (lock order: the family's mutex, then the group's
// abort mutex, then the group's own family).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"

namespace trainmover {

class Communicator;

// How a group was split from its parent: the split's number on the parent
// (splits are collective, so every member counts them alike), the color and
// key this process gave, and the group's members as parent slots (index:
// group slot; empty for a standby's group until it joins).
struct GroupSplit {
  uint64_t seq = 0;
  int color = 0;
  int key = 0;
  std::vector<int> members;
};

class GroupFamily {
 public:
  struct Member {
    Communicator* group = nullptr;
    GroupSplit split;
  };
  void add(Communicator* group, GroupSplit split);
  void remove(const Communicator* group);
  bool contains(const Communicator* group) const;
  // The groups now; the caller's thread must be the one that destroys them
  // (groups and parent are used by one thread, see trainmover.h).
  std::vector<Member> snapshot() const;
  // Sets a standby group's members once it knows its slot.
  void set_members(const Communicator* group, std::vector<int> members);
  // Communicator::abort(why) on every group, from any thread.
  void abort_all(const Status& why);

 private:
  mutable std::mutex mutex_;
  std::vector<Member> members_;
};

// A group's place in its parent's family, for as long as it lives.
class GroupMembership {
 public:
  GroupMembership(std::shared_ptr<GroupFamily> family, Communicator* group, GroupSplit split);
  ~GroupMembership();
  GroupMembership(const GroupMembership&) = delete;
  GroupMembership& operator=(const GroupMembership&) = delete;
  const GroupFamily& family() const { return *family_; }

 private:
  std::shared_ptr<GroupFamily> family_;
  Communicator* group_;
};

}  // namespace trainmover
