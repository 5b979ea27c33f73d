#include "comm/endpoint.h"

#include <cstdlib>

namespace trainmover {

std::string endpoint_key(const std::string& comm_name, uint64_t epoch, int slot) {
  return str_cat("tm/", comm_name, "/e", epoch, "/endpoint/", slot);
}

std::string encode_endpoint(const Endpoint& e) { return e.address + " " + hex64(e.instance_id); }

Result<Endpoint> parse_endpoint(const std::string& record) {
  size_t space = record.find(' ');
  if (space == std::string::npos || space == 0 || record.size() - space - 1 != 16) {
    return error(TM_ERROR_PROTOCOL, "malformed endpoint record '", record, "'");
  }
  Endpoint e;
  e.address = record.substr(0, space);
  char* end = nullptr;
  std::string hex = record.substr(space + 1);
  e.instance_id = std::strtoull(hex.c_str(), &end, 16);
  if (end != hex.c_str() + hex.size())
    return error(TM_ERROR_PROTOCOL, "malformed endpoint record '", record, "'");
  return e;
}

uint64_t comm_id_of(const std::string& comm_name) { return fnv1a_64(comm_name); }

}  // namespace trainmover
