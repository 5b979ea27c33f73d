#!/bin/sh
# Planned migration (trainmover-ctl migrate) of a random slot at a random
# step, three a job, over the campaign's shapes (scripts/kill-campaign.sh):
# the state comes from the leaver (path "leaver"), every rank is held at one
# step boundary first, so no rank sees a failed step and no failure event is
# logged, nothing is redone, and the final parameter hash is bitwise equal to
# a run's without the migrations. TM_CAMPAIGN_MIGRATIONS (default 6) sets the
# number, TM_CAMPAIGN_SEED the seed.
set -eu
exec timeout 600 "$TM_SRCDIR/scripts/kill-campaign.sh" --build "$TM_BUILD" --trials 0 \
  --migrations "${TM_CAMPAIGN_MIGRATIONS:-6}" ${TM_CAMPAIGN_SEED:+--seed "$TM_CAMPAIGN_SEED"}
