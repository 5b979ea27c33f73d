/*
 * trainmover-bench-mpi: the OpenMPI peer of `trainmover-bench allreduce`,
 * `reduce_scatter`, `allgather` and `broadcast`. Run by the benchmark under
 * mpirun with pml ob1 and btl tcp,self, as
 *
 *   trainmover-bench-mpi OP '[[BYTES,ITERS,WARMUP],...]'
 *
 * Rank 0 prints a header line naming the PML and BTL selection OpenMPI was
 * given (read back through MPI_T, so the caller can check its "openmpi-tcp"
 * label), then per size {"bytes":B,"iters":K,"elapsed_max_s":T}: T is the
 * maximum over ranks of the time of K calls (MPI_Allreduce,
 * MPI_Reduce_scatter_block, MPI_Allgather or MPI_Bcast from rank 0; float,
 * sum) after a barrier. Buffers, inputs and the expected results are those
 * of collective.h; the result of one call is checked first. Lines are
 * written with nlohmann-json, as every JSON of the tools (common/json.h).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
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

using trainmover::bench::Collective;

/* One call of `op`; `send` is also the buffer of broadcast. */
static void call(Collective op, const trainmover::bench::CollectiveShape& shape, float* send,
                 float* recv) {
  const int send_count = (int)shape.send_count, recv_count = (int)shape.recv_count;
  switch (op) {
    case Collective::kAllreduce:
      MPI_Allreduce(send, recv, recv_count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case Collective::kReduceScatter:
      MPI_Reduce_scatter_block(send, recv, recv_count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case Collective::kAllgather:
      MPI_Allgather(send, send_count, MPI_FLOAT, recv, send_count, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case Collective::kBroadcast:
      MPI_Bcast(send, send_count, MPI_FLOAT, 0, MPI_COMM_WORLD);
      break;
  }
}

static double measure(Collective op, const struct size_plan* plan, float* send, float* recv,
                      int rank, int nranks) {
  const trainmover::bench::CollectiveShape shape =
      trainmover::bench::collective_shape(op, (uint64_t)plan->bytes, nranks);
  for (size_t i = 0; i < shape.send_count; ++i) send[i] = (float)(rank + 1);
  call(op, shape, send, recv);
  const float* out = op == Collective::kBroadcast ? send : recv;
  int64_t wrong = trainmover::bench::first_wrong_output(op, out, shape.recv_count, nranks);
  if (wrong >= 0) {
    fprintf(stderr, "trainmover-bench-mpi: wrong %s result at element %lld: %g\n",
            trainmover::bench::collective_name(op), (long long)wrong, (double)out[wrong]);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (int i = 0; i < plan->warmup; ++i) call(op, shape, send, recv);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < plan->iters; ++i) call(op, shape, send, recv);
  double elapsed = MPI_Wtime() - start, slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char** argv) {
  struct size_plan plans[MAX_SIZES];
  auto op = argc == 3 ? trainmover::bench::collective_named(argv[1]) : std::nullopt;
  int nsizes = op ? parse_plan(argv[2], plans) : -1;
  if (nsizes < 0) {
    fprintf(stderr,
            "usage: trainmover-bench-mpi allreduce|reduce_scatter|allgather|broadcast "
            "'[[BYTES,ITERS,WARMUP],...]'\n");
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
    double slowest = measure(*op, &plans[i], send, recv, rank, nranks);
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
