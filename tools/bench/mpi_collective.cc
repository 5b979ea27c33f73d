/*
 * trainmover-bench-mpi: the OpenMPI peer of `trainmover-bench allreduce`.
 * Run by the benchmark under mpirun with pml ob1 and btl tcp,self, as
 *
 *   trainmover-bench-mpi '[[BYTES,ITERS,WARMUP],...]'
 *
 * Rank 0 prints a header line naming the PML and BTL selection OpenMPI was
 * given (read back through MPI_T, so the caller can check its "openmpi-tcp"
 * label), then per size {"bytes":B,"iters":K,"elapsed_max_s":T}: T is the
 * maximum over ranks of the time of K MPI_Allreduce (float, sum) after a
 * barrier. The result of one allreduce is checked first. Lines are written
 * with nlohmann-json, as every JSON of the tools (common/json.h).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

#define MAX_SIZES 64

struct size_plan {
  long long bytes;
  int iters;
  int warmup;
};

/* The plan, a JSON array of [bytes, iters, warmup] as the benchmark writes
 * it (format_plan_json); returns the number of sizes, or -1 naming what is
 * wrong on stderr. Read by nlohmann-json, like every JSON of the tools. */
static int parse_plan(const char* text, struct size_plan* plans) {
  const trainmover::Json plan = trainmover::Json::parse(text, nullptr, false);
  if (!plan.is_array() || plan.empty() || plan.size() > MAX_SIZES) {
    fprintf(stderr, "trainmover-bench-mpi: the plan is not a JSON array of 1 to %d sizes\n",
            MAX_SIZES);
    return -1;
  }
  int n = 0;
  for (const trainmover::Json& item : plan) {
    bool ints = item.is_array() && item.size() == 3 && item[0].is_number_integer() &&
                item[1].is_number_integer() && item[2].is_number_integer();
    struct size_plan p = {ints ? item[0].get<long long>() : 0, ints ? item[1].get<int>() : 0,
                          ints ? item[2].get<int>() : -1};
    if (p.bytes <= 0 || p.bytes % 4 != 0 || p.iters <= 0 || p.warmup < 0) {
      fprintf(stderr,
              "trainmover-bench-mpi: plan item %d is not [bytes, iters, warmup] with bytes a "
              "positive multiple of 4\n",
              n);
      return -1;
    }
    plans[n++] = p;
  }
  return n;
}

/* The string value of an MPI_T control variable, or "?" when unavailable. */
static void read_cvar(const char* name, char* out, int out_len) {
  int index = 0, count = 0;
  MPI_T_cvar_handle handle;
  snprintf(out, (size_t)out_len, "?");
  if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) return;
  if (MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS) return;
  if (count < out_len) {
    if (MPI_T_cvar_read(handle, out) != MPI_SUCCESS) snprintf(out, (size_t)out_len, "?");
  }
  MPI_T_cvar_handle_free(&handle);
}

static void print_transport(void) {
  /* OpenMPI declares string variables 2048 characters long. */
  char pml[4096], btl[4096];
  int provided = 0;
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  read_cvar("pml", pml, (int)sizeof pml);
  read_cvar("btl", btl, (int)sizeof btl);
  MPI_T_finalize();
  const trainmover::Json line = {{"pml", pml}, {"btl", btl}};
  printf("%s\n", trainmover::json_line(line).c_str());
}

/* Returns 0 when every element is the sum of (rank + 1) over all ranks. */
static int check_sum(const float* data, long long count, int nranks) {
  const float expected = (float)nranks * (float)(nranks + 1) / 2.0f;
  for (long long i = 0; i < count; ++i) {
    if (data[i] != expected) {
      fprintf(stderr, "trainmover-bench-mpi: wrong result at %lld: %g instead of %g\n", i,
              (double)data[i], (double)expected);
      return 1;
    }
  }
  return 0;
}

static double measure(const struct size_plan* plan, float* send, float* recv, int rank,
                      int nranks) {
  int count = (int)(plan->bytes / 4);
  for (int i = 0; i < count; ++i) send[i] = (float)(rank + 1);
  MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (check_sum(recv, count, nranks) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
  for (int i = 0; i < plan->warmup; ++i)
    MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < plan->iters; ++i)
    MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double elapsed = MPI_Wtime() - start, slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char** argv) {
  struct size_plan plans[MAX_SIZES];
  int nsizes = argc == 2 ? parse_plan(argv[1], plans) : -1;
  if (nsizes < 0) {
    fprintf(stderr, "usage: trainmover-bench-mpi '[[BYTES,ITERS,WARMUP],...]'\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank == 0) print_transport();
  long long largest = 0;
  for (int i = 0; i < nsizes; ++i) largest = plans[i].bytes > largest ? plans[i].bytes : largest;
  float* send = static_cast<float*>(malloc((size_t)largest));
  float* recv = static_cast<float*>(malloc((size_t)largest));
  if (send == NULL || recv == NULL) {
    fprintf(stderr, "trainmover-bench-mpi: out of memory for %lld bytes\n", largest);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int i = 0; i < nsizes; ++i) {
    double slowest = measure(&plans[i], send, recv, rank, nranks);
    if (rank == 0) {
      const trainmover::Json line = {
          {"bytes", plans[i].bytes}, {"iters", plans[i].iters}, {"elapsed_max_s", slowest}};
      printf("%s\n", trainmover::json_line(line).c_str());
      fflush(stdout);
    }
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
