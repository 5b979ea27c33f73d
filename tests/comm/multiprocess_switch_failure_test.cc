// The switch when things go wrong, across real processes: two slots fail
// together, a joiner dies while links are being prepared (the job stays on
// the old view, with the failure reported) or right after the switchover
// (the job is in the new view, the failure names the slot, and another
// switch repairs it), and a replaced process comes back (a zombie) without
// reaching anything. Results are checked against the serial reference.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "support/switching.h"

namespace trainmover {
namespace {

using testing::complain;

constexpr size_t kCount = 32 * 1024;
constexpr int kIterations = 6;
constexpr int kSwitchAt = 3;

CommConfig config_for(const testing::TestJob& job, int slot, int n, const std::string& name) {
  CommConfig c = job.config(slot, n, name);
  c.segment_bytes = 32 << 10;
  c.connect_timeout_s = 5;
  return c;
}

// Runs iterations [from, to), stopping at the first error (returned).
Status iterate(Communicator& comm, int from, int to, int* failed_at = nullptr) {
  for (int it = from; it < to; ++it) {
    auto hash = testing::run_iteration(comm, it, kCount);
    if (!hash.ok()) {
      if (failed_at != nullptr) *failed_at = it;
      return hash.status();
    }
  }
  return Status::Ok();
}

// The iteration every process of the new view starts from after an
// unexpected failure: the earliest any stayer failed in.
Result<int> agreed_restart(rendezvous::Store& store, const std::vector<int>& stayers,
                           const std::string& tag) {
  int restart = kIterations;
  for (int s : stayers) {
    TM_ASSIGN_OR_RETURN(std::string v,
                        store.get(str_cat(tag, "/failed_at/", s), std::chrono::seconds(20)));
    restart = std::min(restart, std::stoi(v));
  }
  return restart;
}

// The first view of `name` at `epoch`, slot `victim` served by the standby
// that published its endpoint under `key`.
Result<View> view_with(rendezvous::Store& store, const std::string& name, int n, int victim,
                       uint64_t epoch, const std::string& key) {
  TM_ASSIGN_OR_RETURN(View first, testing::initial_view(store, name, n));
  TM_ASSIGN_OR_RETURN(Endpoint e, testing::fetch_endpoint(store, key));
  return testing::replace_slot(first, epoch, victim, e);
}

// A standby of `name` that publishes its endpoint under `key` and joins the
// view of `epoch` in which it serves `victim` (phase 1 only).
Result<std::unique_ptr<Communicator>> joining_standby(const testing::TestJob& job,
                                                      rendezvous::Store& store,
                                                      const std::string& name, int n, int victim,
                                                      uint64_t epoch, const std::string& key) {
  TM_ASSIGN_OR_RETURN(auto comm, Communicator::create_standby(config_for(job, 0, n, name)));
  TM_RETURN_IF_ERROR(testing::publish_endpoint(store, key, comm->endpoint()));
  TM_ASSIGN_OR_RETURN(View next, view_with(store, name, n, victim, epoch, key));
  TM_RETURN_IF_ERROR(comm->join(next));
  TM_RETURN_IF_ERROR(comm->wait_prepared());
  return comm;
}

void expect_exits(const std::vector<testing::ChildExit>& exits, const std::vector<int>& killed) {
  for (size_t who = 0; who < exits.size(); ++who) {
    bool should_die =
        std::find(killed.begin(), killed.end(), static_cast<int>(who)) != killed.end();
    if (should_die) {
      EXPECT_EQ(exits[who].signal, SIGKILL) << "process " << who << ": " << exits[who].describe();
    } else {
      EXPECT_TRUE(exits[who].ok()) << "process " << who << ": " << exits[who].describe();
    }
  }
}

// ---- two slots fail together ------------------------------------------------

TEST(SwitchFailures, TwoSlotsFailTogetherAndTwoStandbysReplaceThem) {
  constexpr int n = 5;
  const std::vector<int> victims = {1, 2};  // adjacent: the joiners link to each other
  const std::vector<int> stayers = {0, 3, 4};
  testing::TestJob job;
  // Processes 0..4 serve the slots; 5 and 6 are standbys for slots 1 and 2.
  auto exits = job.run(n + 2, [&](int who) -> int {
    auto store = testing::connect_store(job);
    if (!store) return 4;
    auto next_view = [&]() -> Result<View> {
      TM_ASSIGN_OR_RETURN(View v, testing::initial_view(*store, "two", n));
      v.epoch = 1;
      for (int s : victims) {
        TM_ASSIGN_OR_RETURN(v.slots[static_cast<size_t>(s)],
                            testing::fetch_endpoint(*store, str_cat("standby/", s)));
      }
      return v;
    };
    if (who >= n) {  // a standby
      int slot = victims[static_cast<size_t>(who - n)];
      auto comm = Communicator::create_standby(config_for(job, 0, n, "two"));
      if (!comm.ok()) return complain(slot, comm.status().message());
      if (!testing::publish_endpoint(*store, str_cat("standby/", slot), comm.value()->endpoint())
               .ok())
        return 4;
      auto next = next_view();
      if (!next.ok()) return complain(slot, next.status().message());
      Status st = testing::join_view(*comm.value(), next.value());
      auto restart = agreed_restart(*store, stayers, "two");
      if (!st.ok() || !restart.ok()) return complain(slot, "joining: " + st.message());
      st = iterate(*comm.value(), restart.value(), kIterations);
      return st.ok() ? 0 : complain(slot, st.message());
    }
    auto comm = Communicator::create(config_for(job, who, n, "two"));
    if (!comm.ok()) return complain(who, comm.status().message());
    if (std::find(victims.begin(), victims.end(), who) != victims.end()) {
      Status st = iterate(*comm.value(), 0, kSwitchAt);
      if (!st.ok()) return complain(who, st.message());
      // Both victims finish their iterations before either dies: a victim
      // still in its last one could otherwise hear of the other's death (from
      // a stayer already in the next iteration) and fail instead of dying.
      int other = who == victims[0] ? victims[1] : victims[0];
      if (!store->set(str_cat("two/victim_done/", who), "1").ok()) return 4;
      if (!store->get(str_cat("two/victim_done/", other), std::chrono::seconds(20)).ok()) return 4;
      raise(SIGKILL);
    }
    // A victim dies right after its last iteration, which its neighbours may
    // still be finishing: a stayer can fail in that iteration too (the kill
    // resets connections), so failures count from the first iteration.
    int failed_at = -1;
    Status st = iterate(*comm.value(), 0, kIterations, &failed_at);
    if (st.ok()) return complain(who, "no error although two slots died");
    if (st.failed_slot() != 1 && st.failed_slot() != 2)
      return complain(who, "error names neither dead slot: " + st.message());
    if (!store->set(str_cat("two/failed_at/", who), std::to_string(failed_at)).ok()) return 4;
    auto next = next_view();
    if (!next.ok()) return complain(who, next.status().message());
    st = testing::switch_to(*comm.value(), next.value());
    if (!st.ok()) return complain(who, "switch: " + st.message());
    auto restart = agreed_restart(*store, stayers, "two");
    if (!restart.ok()) return complain(who, restart.status().message());
    st = iterate(*comm.value(), restart.value(), kIterations);
    return st.ok() ? 0 : complain(who, st.message());
  });
  expect_exits(exits, victims);
}

// ---- a joiner dies while the links are prepared ----------------------------

// Slot 1 is to be replaced (planned). The first standby dies after its links
// are up but before the switchover: its new neighbours report it from
// wait_prepared(), every process learns it in an allreduce on the current
// view, and nobody switches — the leaver keeps serving. A second standby
// then replaces slot 1 in epoch 2.
TEST(SwitchFailures, JoinerDyingDuringPrepareLeavesTheJobOnTheOldView) {
  constexpr int n = 4, victim = 1;
  testing::TestJob job;
  auto exits = job.run(n + 2, [&](int who) -> int {
    auto store = testing::connect_store(job);
    if (!store) return 4;
    auto view = [&](uint64_t epoch, const std::string& key) {
      return view_with(*store, "prep", n, victim, epoch, key);
    };
    if (who >= n) {
      bool doomed = who == n;
      std::string key = doomed ? "standby/doomed" : "standby/second";
      auto comm = joining_standby(job, *store, "prep", n, victim, doomed ? 1 : 2, key);
      if (!comm.ok()) return complain(victim, "joining: " + comm.status().message());
      if (doomed) {
        (void)store->set("doomed/linked", "1");
        raise(SIGKILL);
      }
      Status st = comm.value()->switchover(2);
      if (st.ok()) st = iterate(*comm.value(), kSwitchAt + 1, kIterations);
      return st.ok() ? 0 : complain(victim, st.message());
    }
    auto created = Communicator::create(config_for(job, who, n, "prep"));
    if (!created.ok()) return complain(who, created.status().message());
    Communicator& comm = *created.value();
    Status st = iterate(comm, 0, kSwitchAt);
    if (!st.ok()) return complain(who, st.message());
    // Phase 1 towards the doomed standby.
    auto first = view(1, "standby/doomed");
    if (!first.ok()) return complain(who, first.status().message());
    st = comm.prepare_switch(first.value());
    if (!st.ok()) return complain(who, st.message());
    if (!store->get("doomed/linked", std::chrono::seconds(20)).ok()) return 4;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // it is dead by now
    Status prepared = comm.wait_prepared();
    bool neighbour = who == 0 || who == 2;
    if (neighbour && (prepared.ok() || prepared.failed_slot() != victim))
      return complain(who, "a neighbour did not report the dead joiner: " + prepared.message());
    if (!prepared.ok()) std::fprintf(stderr, "slot %d: %s\n", who, prepared.message().c_str());
    // Everyone learns the outcome of phase 1 on the current view.
    int failed = prepared.ok() ? 0 : 1, any_failed = 0;
    st = comm.allreduce(&failed, &any_failed, 1, TM_INT32, TM_MAX);
    if (!st.ok() || any_failed != 1) return complain(who, "phase-1 outcome not agreed");
    // No switch: the old view, leaver included, runs the next iteration.
    st = iterate(comm, kSwitchAt, kSwitchAt + 1);
    if (!st.ok()) return complain(who, "old view after the failed prepare: " + st.message());
    auto second = view(2, "standby/second");
    if (!second.ok()) return complain(who, second.status().message());
    st = testing::switch_to(comm, second.value());
    if (!st.ok()) return complain(who, "second switch: " + st.message());
    if (who == victim) return 0;  // left
    st = iterate(comm, kSwitchAt + 1, kIterations);
    return st.ok() ? 0 : complain(who, st.message());
  });
  expect_exits(exits, {n});
}

// ---- a joiner dies right after the switchover -------------------------------

// The job is then in the new epoch with slot 1's process dead: the next
// collective fails naming slot 1, and a second standby repairs it.
TEST(SwitchFailures, JoinerDyingAfterSwitchoverIsAFailureOfTheNewEpoch) {
  constexpr int n = 4, victim = 1;
  const std::vector<int> stayers = {0, 2, 3};
  testing::TestJob job;
  auto exits = job.run(n + 2, [&](int who) -> int {
    auto store = testing::connect_store(job);
    if (!store) return 4;
    auto view = [&](uint64_t epoch, const std::string& key) {
      return view_with(*store, "late", n, victim, epoch, key);
    };
    if (who >= n) {
      bool doomed = who == n;
      std::string key = doomed ? "standby/doomed" : "standby/second";
      auto comm = joining_standby(job, *store, "late", n, victim, doomed ? 1 : 2, key);
      Status st = comm.ok() ? comm.value()->switchover(doomed ? 1 : 2) : comm.status();
      if (!st.ok()) return complain(victim, "joining: " + st.message());
      if (doomed) raise(SIGKILL);
      auto restart = agreed_restart(*store, stayers, "late");
      if (!restart.ok()) return complain(victim, restart.status().message());
      st = iterate(*comm.value(), restart.value(), kIterations);
      return st.ok() ? 0 : complain(victim, st.message());
    }
    auto created = Communicator::create(config_for(job, who, n, "late"));
    if (!created.ok()) return complain(who, created.status().message());
    Communicator& comm = *created.value();
    Status st = iterate(comm, 0, kSwitchAt);
    if (!st.ok()) return complain(who, st.message());
    auto first = view(1, "standby/doomed");
    if (!first.ok()) return complain(who, first.status().message());
    st = testing::switch_to(comm, first.value());
    if (who == victim) return st.ok() ? 0 : complain(who, "leaving: " + st.message());
    int failed_at = kSwitchAt;
    if (st.ok()) st = iterate(comm, kSwitchAt, kIterations, &failed_at);
    if (st.ok() || st.failed_slot() != victim)
      return complain(who, "the dead joiner was not reported: " + st.message());
    std::fprintf(stderr, "slot %d: epoch 1 failed: %s\n", who, st.message().c_str());
    if (!store->set(str_cat("late/failed_at/", who), std::to_string(failed_at)).ok()) return 4;
    auto second = view(2, "standby/second");
    if (!second.ok()) return complain(who, second.status().message());
    st = testing::switch_to(comm, second.value());
    if (!st.ok()) return complain(who, "second switch: " + st.message());
    auto restart = agreed_restart(*store, stayers, "late");
    if (!restart.ok()) return complain(who, restart.status().message());
    st = iterate(comm, restart.value(), kIterations);
    return st.ok() ? 0 : complain(who, st.message());
  });
  expect_exits(exits, {n});
}

// ---- a zombie --------------------------------------------------------------

// Slot 2 stops (SIGSTOP) in the middle of a collective; the others time out
// naming it and switch to a standby. Then the stopped process resumes, as if
// nothing had happened: its old links are gone, and a new connection from it
// (old epoch, replaced process) is refused. The job's results stay exact.
TEST(SwitchFailures, AReplacedProcessThatComesBackReachesNothing) {
  constexpr int n = 4, victim = 2;
  const std::vector<int> stayers = {0, 1, 3};
  testing::TestJob job;
  auto exits = job.run(n + 1, [&](int who) -> int {
    auto store = testing::connect_store(job);
    if (!store) return 4;
    auto view = [&] { return view_with(*store, "zombie", n, victim, 1, "standby"); };
    CommConfig config = config_for(job, who == n ? 0 : who, n, "zombie");
    config.timeout_s = 1;
    if (who == n) {
      auto comm = Communicator::create_standby(config);
      if (!comm.ok()) return complain(victim, comm.status().message());
      if (!testing::publish_endpoint(*store, "standby", comm.value()->endpoint()).ok()) return 4;
      auto next = view();
      Status st = next.ok() ? testing::join_view(*comm.value(), next.value()) : next.status();
      auto restart = agreed_restart(*store, stayers, "zombie");
      if (!st.ok() || !restart.ok()) return complain(victim, "joining: " + st.message());
      st = iterate(*comm.value(), restart.value(), kIterations);
      if (!st.ok()) return complain(victim, st.message());
      if (!store->get("zombie/outcome", std::chrono::seconds(20)).ok()) return 4;
      st = iterate(*comm.value(), 0, 1);
      return st.ok() ? 0 : complain(victim, st.message());
    }
    auto created = Communicator::create(config);
    if (!created.ok()) return complain(who, created.status().message());
    Communicator& comm = *created.value();
    Status st = iterate(comm, 0, kSwitchAt);
    if (!st.ok()) return complain(who, st.message());
    if (who == victim) {
      if (!store->set("zombie/pid", std::to_string(getpid())).ok()) return 4;
      std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        raise(SIGSTOP);
      });
      st = iterate(comm, kSwitchAt, kIterations);  // resumes here after SIGCONT
      stopper.join();
      // Back from the dead: the collective it was in cannot succeed, and a
      // new link — in its old epoch, or claiming its slot in the new one —
      // is refused by the processes that replaced it in their view.
      auto first = testing::initial_view(*store, "zombie", n);
      if (!first.ok()) return complain(who, first.status().message());
      uint64_t me = comm.endpoint().instance_id;
      const Endpoint& neighbour = first.value().slots[1];
      auto old_epoch = testing::try_handshake(job, "zombie", victim, 0, me, 1, neighbour);
      auto new_epoch = testing::try_handshake(job, "zombie", victim, 1, me, 1, neighbour);
      std::string outcome = str_cat("collective: ", st.message(), " | epoch 0 link: ",
                                    old_epoch.ok() ? transport::verdict_text(old_epoch.value())
                                                   : old_epoch.status().message(),
                                    " | epoch 1 link: ",
                                    new_epoch.ok() ? transport::verdict_text(new_epoch.value())
                                                   : new_epoch.status().message());
      (void)store->set("zombie/outcome", outcome);
      if (st.ok() || !old_epoch.ok() || old_epoch.value() != transport::Verdict::kWrongEpoch ||
          !new_epoch.ok() || new_epoch.value() != transport::Verdict::kRefused) {
        return complain(who, "the zombie reached the job: " + outcome);
      }
      return 0;
    }
    int failed_at = -1;
    st = iterate(comm, kSwitchAt, kIterations, &failed_at);
    if (st.ok() || st.failed_slot() != victim)
      return complain(who, "the stopped slot was not named: " + st.message());
    if (!store->set(str_cat("zombie/failed_at/", who), std::to_string(failed_at)).ok()) return 4;
    auto next = view();
    st = next.ok() ? testing::switch_to(comm, next.value()) : next.status();
    if (!st.ok()) return complain(who, "switch: " + st.message());
    if (!store->set(str_cat("zombie/switched/", who), "1").ok()) return 4;
    if (who == 0) {  // wake the zombie once every stayer has moved on
      for (int s : stayers) {
        if (!store->get(str_cat("zombie/switched/", s), std::chrono::seconds(20)).ok()) return 4;
      }
      auto pid = store->get("zombie/pid", std::chrono::seconds(5));
      if (!pid.ok() || kill(std::stoi(pid.value()), SIGCONT) != 0) return complain(who, "SIGCONT");
    }
    auto restart = agreed_restart(*store, stayers, "zombie");
    if (!restart.ok()) return complain(who, restart.status().message());
    st = iterate(comm, restart.value(), kIterations);
    if (!st.ok()) return complain(who, st.message());
    // Stay up until the zombie has tried, so its attempts meet live processes.
    auto outcome = store->get("zombie/outcome", std::chrono::seconds(20));
    if (!outcome.ok()) return complain(who, "zombie did not report");
    if (who == 0) std::fprintf(stderr, "zombie saw: %s\n", outcome.value().c_str());
    st = iterate(comm, 0, 1);  // still exact after the zombie's attempts
    return st.ok() ? 0 : complain(who, st.message());
  });
  expect_exits(exits, {});
}

}  // namespace
}  // namespace trainmover
