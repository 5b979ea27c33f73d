#!/bin/sh
# The links of same-host processes use shared memory by default ("auto"), so
# the multi-process tests of failures, switches and leaving run over shm in
# their own entries. This runs them again with every link on TCP, the
# transport between hosts, so both keep their failure semantics and fences.
# (The collective matrix and the mid-message kill name both transports
# themselves.)
set -eu
TRAINMOVER_TEST_TRANSPORT=tcp
export TRAINMOVER_TEST_TRANSPORT
for t in multiprocess_failure_test multiprocess_switch_test multiprocess_switch_failure_test \
         multiprocess_leave_test multiprocess_abort_test multiprocess_groups_test; do
  echo "== $t over tcp"
  ./comm/$t --gtest_brief=1
done
