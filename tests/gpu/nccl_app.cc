// A single-rank NCCL program, as a training job would call NCCL: three
// communicators (ncclCommInitRank, ncclCommInitRankConfig, ncclCommSplit),
// then per iteration an allreduce, allgather, reduce-scatter, broadcast,
// reduce and a grouped send/recv, each on a receive buffer first filled
// with garbage. It writes every output to --out, so runs with and without
// libtrainmover-nccl.so (record, replay) can be compared byte for byte.
//
// Exit status: 0 ok, 1 an NCCL or CUDA call failed (its error printed),
// 2 bad usage, 77 no GPU (automake's "skipped").
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"

namespace {

struct Options {
  int iterations = 3;
  size_t count = 1 << 18;
  std::string out;
  bool probe = false;
  bool timing = false;
};

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "nccl_app: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool nccl_ok(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess) return true;
  std::fprintf(stderr, "nccl_app: %s failed: %s (%s)\n", what, ncclGetErrorString(r),
               ncclGetLastError(comm));
  return false;
}

#define CUDA(call) \
  if (!cuda_ok((call), #call)) return 1
#define NCCL(call, comm) \
  if (!nccl_ok((call), #call, comm)) return 1

// Parses the command line with the tools' option helper; nullopt: go on.
std::optional<int> parse(int argc, char** argv, Options& o) {
  int64_t count = static_cast<int64_t>(o.count);
  trainmover::cli::CommandLine command_line(
      "nccl_app", "nccl_app --probe | --out FILE [--iterations N] [--count N] [--timing]",
      "A single-rank NCCL program whose outputs can be compared byte for byte.\n");
  command_line.flag("probe", o.probe, "exit 0 when a CUDA device is present, 77 otherwise")
      .flag("timing", o.timing, "then time an iteration: stream and host enqueue time")
      .integer("iterations", "N", 1, 1000000, o.iterations, "iterations (default 3)")
      .integer("count", "N", 1, int64_t{1} << 32, count, "elements per buffer (default 262144)")
      .text("out", "FILE", o.out, "where every output is written");
  if (auto exit_code = command_line.parse(argc, argv)) return exit_code;
  o.count = static_cast<size_t>(count);
  if (!o.probe && o.out.empty()) return command_line.usage_error("--out is required");
  return std::nullopt;
}

// One device buffer per collective output, plus the shared send buffer.
struct Buffers {
  void* send = nullptr;
  void* out[6] = {};
  size_t bytes[6] = {};
};

// Deterministic inputs that change every iteration.
std::vector<unsigned char> input(size_t bytes, int iteration) {
  std::vector<unsigned char> v(bytes);
  uint32_t x = 2166136261u ^ static_cast<uint32_t>(iteration);
  for (size_t i = 0; i < bytes; ++i) {
    x = (x ^ static_cast<uint32_t>(i)) * 16777619u;
    v[i] = static_cast<unsigned char>(x >> 13);
  }
  return v;
}

int check_queries(ncclComm_t comm) {
  int count = -1, rank = -1, device = -1, current = -2;
  ncclResult_t async = ncclInternalError;
  NCCL(ncclCommCount(comm, &count), comm);
  NCCL(ncclCommUserRank(comm, &rank), comm);
  NCCL(ncclCommCuDevice(comm, &device), comm);
  NCCL(ncclCommGetAsyncError(comm, &async), comm);
  CUDA(cudaGetDevice(&current));
  if (count != 1 || rank != 0 || device != current || async != ncclSuccess) {
    std::fprintf(stderr, "nccl_app: communicator reports count %d rank %d device %d async %d\n",
                 count, rank, device, static_cast<int>(async));
    return 1;
  }
  return 0;
}

int make_comms(ncclComm_t comms[3]) {
  ncclUniqueId id0, id1;
  NCCL(ncclGetUniqueId(&id0), nullptr);
  NCCL(ncclGetUniqueId(&id1), nullptr);
  NCCL(ncclCommInitRank(&comms[0], 1, id0, 0), nullptr);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  NCCL(ncclCommInitRankConfig(&comms[1], 1, id1, 0, &config), nullptr);
  NCCL(ncclCommSplit(comms[0], 0, 0, &comms[2], nullptr), comms[0]);
  for (int c = 0; c < 3; ++c)
    if (check_queries(comms[c]) != 0) return 1;
  return 0;
}

int load_input(const Options& o, int it, const Buffers& b) {
  std::vector<unsigned char> in = input(o.count * 8, it);
  CUDA(cudaMemcpy(b.send, in.data(), in.size(), cudaMemcpyHostToDevice));
  return 0;
}

// Enqueues one iteration's collectives on `s` (inputs already loaded).
int enqueue(const Options& o, ncclComm_t comms[3], cudaStream_t s, Buffers& b) {
  size_t n = o.count;
  for (int k = 0; k < 6; ++k) CUDA(cudaMemsetAsync(b.out[k], 0xAB, b.bytes[k], s));
  NCCL(ncclAllReduce(b.send, b.out[0], n, ncclFloat32, ncclSum, comms[0], s), comms[0]);
  NCCL(ncclAllGather(b.send, b.out[1], n, ncclBfloat16, comms[1], s), comms[1]);
  NCCL(ncclReduceScatter(b.send, b.out[2], n, ncclInt32, ncclMax, comms[2], s), comms[2]);
  NCCL(ncclBroadcast(b.send, b.out[3], n, ncclUint8, 0, comms[0], s), comms[0]);
  NCCL(ncclReduce(b.send, b.out[4], n, ncclFloat16, ncclProd, 0, comms[1], s), comms[1]);
  NCCL(ncclGroupStart(), nullptr);
  NCCL(ncclSend(b.send, n, ncclFloat64, 0, comms[2], s), comms[2]);
  NCCL(ncclRecv(b.out[5], n, ncclFloat64, 0, comms[2], s), comms[2]);
  NCCL(ncclGroupEnd(), comms[2]);
  return 0;
}

int iteration(const Options& o, int it, ncclComm_t comms[3], cudaStream_t s, Buffers& b) {
  if (load_input(o, it, b) != 0) return 1;
  return enqueue(o, comms, s, b);
}

int dump(FILE* f, cudaStream_t s, const Buffers& b) {
  CUDA(cudaStreamSynchronize(s));
  for (int k = 0; k < 6; ++k) {
    std::vector<unsigned char> host(b.bytes[k]);
    CUDA(cudaMemcpy(host.data(), b.out[k], host.size(), cudaMemcpyDeviceToHost));
    if (std::fwrite(host.data(), 1, host.size(), f) != host.size()) {
      std::perror("nccl_app: write");
      return 1;
    }
  }
  return 0;
}

// Stream time of one iteration's collectives, and of a plain device-to-host
// copy of the same output bytes: what record mode may add at most. The
// inputs are loaded before the first event (their host-side generation is
// the same with or without recording and would drown the difference); the
// host time to enqueue the calls is reported beside it, since a slow
// enqueue leaves the stream idle. Two iterations are timed, the second is
// reported (buffers reused, as in a steady training loop).
int report_timing(const Options& o, ncclComm_t comms[3], cudaStream_t s, Buffers& b) {
  cudaEvent_t start, stop;
  CUDA(cudaEventCreate(&start));
  CUDA(cudaEventCreate(&stop));
  float iter_ms = 0;
  double enqueue_us = 0;
  for (int round = 0; round < 2; ++round) {
    if (load_input(o, o.iterations + round, b) != 0) return 1;
    CUDA(cudaStreamSynchronize(s));
    auto host_start = std::chrono::steady_clock::now();
    CUDA(cudaEventRecord(start, s));
    if (enqueue(o, comms, s, b) != 0) return 1;
    CUDA(cudaEventRecord(stop, s));
    enqueue_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - host_start)
            .count();
    CUDA(cudaEventSynchronize(stop));
    CUDA(cudaEventElapsedTime(&iter_ms, start, stop));
  }
  size_t total = 0;
  for (size_t bytes : b.bytes) total += bytes;
  void* host = nullptr;
  CUDA(cudaHostAlloc(&host, total, cudaHostAllocDefault));
  CUDA(cudaEventRecord(start, s));
  size_t at = 0;
  for (int k = 0; k < 6; ++k) {
    CUDA(cudaMemcpyAsync(static_cast<char*>(host) + at, b.out[k], b.bytes[k],
                         cudaMemcpyDeviceToHost, s));
    at += b.bytes[k];
  }
  CUDA(cudaEventRecord(stop, s));
  CUDA(cudaEventSynchronize(stop));
  float copy_ms = 0;
  CUDA(cudaEventElapsedTime(&copy_ms, start, stop));
  CUDA(cudaFreeHost(host));
  std::printf(
      "timing: iteration_stream_us=%.1f enqueue_host_us=%.1f output_bytes=%zu "
      "d2h_copy_us=%.1f\n",
      iter_ms * 1000.0, enqueue_us, total, copy_ms * 1000.0);
  return 0;
}

int run(const Options& o) {
  ncclComm_t comms[3];
  if (make_comms(comms) != 0) return 1;
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Buffers b;
  size_t n = o.count;
  size_t sizes[6] = {n * 4, n * 2, n * 4, n, n * 2, n * 8};  // 1 rank: outputs are n elements
  CUDA(cudaMalloc(&b.send, n * 8));
  for (int k = 0; k < 6; ++k) {
    b.bytes[k] = sizes[k];
    CUDA(cudaMalloc(&b.out[k], sizes[k]));
  }
  FILE* f = std::fopen(o.out.c_str(), "wb");
  if (f == nullptr) {
    std::perror(o.out.c_str());
    return 2;
  }
  int rc = 0;
  for (int it = 0; it < o.iterations && rc == 0; ++it) {
    rc = iteration(o, it, comms, s, b);
    if (rc == 0) rc = dump(f, s, b);
  }
  std::fclose(f);
  if (rc == 0 && o.timing) rc = report_timing(o, comms, s, b);
  for (int c = 2; c >= 0; --c) NCCL(ncclCommDestroy(comms[c]), nullptr);
  for (int k = 0; k < 6; ++k) CUDA(cudaFree(b.out[k]));
  CUDA(cudaFree(b.send));
  CUDA(cudaStreamDestroy(s));
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (auto exit_code = parse(argc, argv, o)) return *exit_code;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "nccl_app: no CUDA device; skipped\n");
    return 77;
  }
  if (o.probe) return 0;
  if (!cuda_ok(cudaSetDevice(0), "cudaSetDevice")) return 1;
  return run(o);
}
