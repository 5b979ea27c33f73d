/* Calls one NCCL function, named by argv[1], and prints what it returned;
 * run under LD_PRELOAD=libtrainmover-nccl.so by nccl_shim_test.sh. Needs no
 * GPU: every call here is answered before CUDA would be touched. */
#include <nccl.h>
#include <cstdio>
#include <cstring>

namespace {

int report(const char* what, ncclResult_t r) {
  printf("%s: %d %s\n", what, static_cast<int>(r), ncclGetErrorString(r));
  if (r != ncclSuccess) printf("last error: %s\n", ncclGetLastError(nullptr));
  return r == ncclSuccess ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: nccl_shim_probe version|init|redop\n");
    return 2;
  }
  if (strcmp(argv[1], "version") == 0) {
    int version = 0;
    ncclResult_t r = ncclGetVersion(&version);
    printf("version %d (header %d)\n", version, NCCL_VERSION_CODE);
    return report("ncclGetVersion", r);
  }
  if (strcmp(argv[1], "init") == 0) {
    ncclComm_t comm = nullptr;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    return report("ncclCommInitRank", ncclCommInitRank(&comm, 1, id, 0));
  }
  if (strcmp(argv[1], "redop") == 0)  // in every NCCL since 2.11, and not replayed
    return report("ncclRedOpDestroy", ncclRedOpDestroy(ncclSum, nullptr));
  return 2;
}
