#include "record/nccl/real_nccl.h"

#include <dlfcn.h>

namespace trainmover::nccl {

RealNccl RealNccl::load() {
  RealNccl real;
#define TM_NCCL_LOOKUP(name) \
  real.name = reinterpret_cast<decltype(real.name)>(dlsym(RTLD_NEXT, "nccl" #name));
  TM_NCCL_FUNCTIONS(TM_NCCL_LOOKUP)
#undef TM_NCCL_LOOKUP
  return real;
}

Status missing_real(const RealNccl& real, const char* function) {
  if (!real.present())
    return error(TM_ERROR_UNSUPPORTED, function,
                 ": the real NCCL is not loaded in this process (link the program with -lnccl, "
                 "or preload libnccl.so.2 after libtrainmover-nccl.so)");
  return error(TM_ERROR_UNSUPPORTED, function, ": the loaded NCCL does not define it");
}

}  // namespace trainmover::nccl
