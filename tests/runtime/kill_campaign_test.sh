#!/bin/sh
# The random kill campaign of scripts/kill-campaign.sh, small: kill -9 of a
# random active slot at a random step and point in the step, three a job
# (three standbys), over DP 2 x PP 2, DP 2 x PP 1 and DP 1 x PP 2 (the
# rollback path): every job finishes, at most the step in flight is redone,
# the final parameter hash is bitwise equal to a run's without faults.
# TM_CAMPAIGN_TRIALS (default 30) sets the number of kills, TM_CAMPAIGN_SEED
# the seed (printed either way).
set -eu
exec timeout 900 "$TM_SRCDIR/scripts/kill-campaign.sh" --build "$TM_BUILD" \
  --trials "${TM_CAMPAIGN_TRIALS:-30}" ${TM_CAMPAIGN_SEED:+--seed "$TM_CAMPAIGN_SEED"}
