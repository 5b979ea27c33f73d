#include "comm/view_record.h"

#include <sstream>

#include "comm/endpoint.h"

namespace trainmover {

std::string view_key(const std::string& comm_name, uint64_t epoch) {
  return str_cat("tm/", comm_name, "/view/", epoch);
}

std::string encode_view(const View& view) {
  std::string out = str_cat("epoch ", view.epoch, " slots ", view.nslots(), " pairs ",
                            view.extra_pairs.size(), "\n");
  for (const Endpoint& e : view.slots) out += encode_endpoint(e) + "\n";
  for (auto [a, b] : view.extra_pairs) out += str_cat(a, " ", b, "\n");
  return out;
}

namespace {
constexpr int kMaxSlots = 1 << 20;
Status malformed(const std::string& what) {
  return error(TM_ERROR_PROTOCOL, "malformed view record: ", what);
}
}  // namespace

Result<View> parse_view(const std::string& record) {
  std::istringstream in(record);
  std::string line;
  if (!std::getline(in, line)) return malformed("empty");
  std::istringstream head(line);
  std::string w1, w2, w3;
  long long epoch = -1, slots = -1, pairs = -1;
  if (!(head >> w1 >> epoch >> w2 >> slots >> w3 >> pairs) || w1 != "epoch" || w2 != "slots" ||
      w3 != "pairs" || epoch < 0 || slots < 1 || slots > kMaxSlots || pairs < 0 ||
      pairs > kMaxSlots) {
    return malformed(str_cat("bad header '", line, "'"));
  }
  View view;
  view.epoch = static_cast<uint64_t>(epoch);
  for (long long s = 0; s < slots; ++s) {
    if (!std::getline(in, line)) return malformed(str_cat("missing slot ", s));
    TM_ASSIGN_OR_RETURN(Endpoint e, parse_endpoint(line));
    view.slots.push_back(std::move(e));
  }
  for (long long p = 0; p < pairs; ++p) {
    int a = -1, b = -1;
    if (!std::getline(in, line) || !(std::istringstream(line) >> a >> b))
      return malformed(str_cat("bad pair ", p));
    view.extra_pairs.emplace_back(a, b);
  }
  if (std::getline(in, line) && !line.empty()) return malformed("trailing data");
  TM_RETURN_IF_ERROR(view.validate());
  return view;
}

Status publish_view(rendezvous::Store& store, const std::string& name, const View& view) {
  TM_RETURN_IF_ERROR(view.validate());
  std::string record = encode_view(view);
  TM_ASSIGN_OR_RETURN(auto outcome,
                      store.compare_set(view_key(name, view.epoch), std::nullopt, record));
  if (outcome.won || outcome.current == record) return Status::Ok();
  return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", view.epoch, " of communicator '", name,
               "' was already published with other members; a new view needs a new epoch");
}

Result<View> fetch_first_view(rendezvous::Store& store, const std::string& name, int nslots,
                              Duration timeout) {
  View view;
  for (int s = 0; s < nslots; ++s) {
    TM_ASSIGN_OR_RETURN(std::string record, store.get(endpoint_key(name, 0, s), timeout));
    TM_ASSIGN_OR_RETURN(Endpoint e, parse_endpoint(record));
    view.slots.push_back(std::move(e));
  }
  TM_RETURN_IF_ERROR(view.validate());
  return view;
}

}  // namespace trainmover
