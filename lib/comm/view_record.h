// How a view travels through the rendezvous store: the coordinator (today a
// test or the benchmark's driver, later control/) publishes each new view
// under view_key(); the processes it names read it there.
//
// One epoch, one view: publish_view() writes with the store's
// compare-and-set, so of two writers publishing different views of the same
// epoch exactly one succeeds and the other is told so; nobody can read two
// different views of one epoch.
//
// Record: one line "epoch <n> slots <n> pairs <n>", then a line per slot
// with its endpoint record (comm/endpoint.h), then "a b" per extra pair.
#pragma once

#include <string>

#include "comm/view.h"
#include "common/clock.h"
#include "common/status.h"
#include "rendezvous/store.h"

namespace trainmover {

std::string view_key(const std::string& comm_name, uint64_t epoch);
std::string encode_view(const View& view);
// Rejects malformed records and views that fail View::validate().
Result<View> parse_view(const std::string& record);

// Publishes `view` under view_key(name, view.epoch) unless that epoch has a
// view already. Publishing the same view again succeeds (a retry is
// harmless); a different view of a published epoch fails with
// TM_ERROR_INVALID_ARGUMENT naming the epoch and leaves the published one.
Status publish_view(rendezvous::Store& store, const std::string& name, const View& view);

// The first view (epoch 0) of communicator `name`: the endpoint record each
// of its `nslots` slots published at creation, waiting up to `timeout` for
// each.
Result<View> fetch_first_view(rendezvous::Store& store, const std::string& name, int nslots,
                              Duration timeout);

}  // namespace trainmover
