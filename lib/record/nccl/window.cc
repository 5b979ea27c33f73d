#include "record/nccl/window.h"

namespace trainmover::nccl {

RecordWindow::PerComm& RecordWindow::at(uint32_t comm) {
  if (comm >= comms_.size()) comms_.resize(comm + 1);
  return comms_[comm];
}

bool RecordWindow::admit(uint32_t comm, uint64_t group) {
  PerComm& c = at(comm);
  bool in_admitted_group = group != 0 && c.admitted_group == group;
  bool admit = in_admitted_group || c.seen < limit_;
  ++c.seen;
  if (admit && group != 0) c.admitted_group = group;
  return admit;
}

bool RecordWindow::closed(uint32_t comm) const {
  return comm < comms_.size() ? comms_[comm].seen >= limit_ : limit_ == 0;
}

}  // namespace trainmover::nccl
