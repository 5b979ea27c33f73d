#include "comm/collective_plan.h"

namespace trainmover {

void CollectivePlan::clear() {
  sends.clear();
  recvs.clear();
  copy_count = copy_from = copy_to = 0;
  divide_final = false;
}

}  // namespace trainmover
