#pragma once
/// Scaling: a data-parallel training step emulated on 1, 2, 4 ... nodes of
/// one mpirun (sub-communicators split by host). Each rank "computes" for
/// --compute-ms (a timed wait; the GPU GEMM variant is not implemented) while
/// the gradients (--grad-bytes) are allreduced in --bucket-mb buckets on a
/// communication thread, overlapped with the compute of the next bucket as
/// PyTorch DDP does. Larger node counts are predicted from the measured
/// latency and bus bandwidth with the same pipeline model.

#include <functional>
#include <string>
#include <vector>

#include "backend.h"
#include "nodeprobe/report.h"
#include "mpi_util.h"

namespace nodeprobe::allreduce {

/// Ring allreduce time model: 2(n-1) latency steps plus 2(n-1)/n x bytes at busbw.
double model_allreduce_s(double bytes, int nranks, double alpha_s, double busbw_gbps);
/// One step: buckets become ready every compute/buckets seconds and are reduced
/// one after another, each taking `bucket_s` (the last one `last_bucket_s`).
double model_step_s(double compute_s, int buckets, double bucket_s, double last_bucket_s);
/// Scaling efficiency: throughput(N) / (N x throughput(1)).
double scaling_efficiency(double throughput_n, int nodes, double throughput_1);
/// Which term bounds the step: "compute (communication hidden)", "bandwidth ...", "latency ...".
std::string limiting_term(double compute_s, int buckets, double latency_s_per_bucket,
                          double bandwidth_s_per_bucket, double step_s);
/// Estimates per-step latency alpha and busbw from allreduce times of a small and
/// a large message on n ranks. busbw 0 when the large time is not above the latency part.
void fit_alpha_busbw(double small_bytes, double small_s, double big_bytes, double big_s, int nranks,
                     double* alpha_s, double* busbw_gbps);

struct ScalingPoint {
  int nodes = 0, ranks = 0;
  bool predicted = false;
  double step_s = 0;       ///< median over the timed steps (measured) or the model's
  Stats step_stats;        ///< seconds per step over the timed steps (measured points)
  double throughput = 0;   ///< samples/s at one sample per rank per step
  double efficiency = 0;
  double bucket_allreduce_s = 0;
  double busbw_gbps = 0;
  std::string limit;
};

struct ScalingResult {
  std::vector<ScalingPoint> points;
  int ranks_per_node = 0;
  int buckets = 0;
  double bucket_bytes = 0, grad_bytes = 0, compute_s = 0;
  double last_bucket_bytes = 0;
  double alpha_s = 0, busbw_gbps = 0;  ///< fitted on the largest measured node count
  double link_busbw_gbps = 0;          ///< best busbw measured across nodes: the model's ceiling
  double model_busbw_gbps = 0;         ///< busbw the predictions use: min(fitted, link)
  double overhead_s = 0;               ///< measured - modelled step at the largest measured count (>= 0)
  bool overlap = true;                 ///< false when MPI lacks thread support
  std::vector<std::string> assumptions;  ///< what the predictions assume, for the report
};

/// Adds predicted points for `node_counts` beyond the measured ones. The model
/// obeys what was measured: busbw never above the best busbw measured across
/// nodes; a step never shorter than compute plus the allreduce that cannot
/// overlap it (the last bucket), nor than the last measured step; so
/// efficiency never rises past the last measured node count. Fills
/// model_busbw_gbps, overhead_s and assumptions. Needs the measured points
/// (rank 0's view), alpha_s and busbw_gbps.
void add_predictions(ScalingResult& res, const std::vector<int>& node_counts);

struct ScalingHooks {
  std::function<void(const std::string&)> phase;
};

/// Why --scaling cannot run on these hosts ("" when it can): fewer than 2
/// hosts, or unequal ranks per host.
std::string scaling_host_problem(const HostMap& hosts);

/// Collective over ctx.comm (the world). Needs ranks on >= 2 hosts and the
/// same number of ranks on each (InputError otherwise).
ScalingResult run_scaling(const BackendContext& ctx, const Target& t, const HostMap& hosts,
                          bool thread_support, const ScalingHooks& hooks);

Json scaling_json(const ScalingResult& s);
std::string scaling_text(const ScalingResult& s, const std::string& target);

}  // namespace nodeprobe::allreduce
