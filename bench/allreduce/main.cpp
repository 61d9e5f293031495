// nodeprobe-allreduce: allreduce bus bandwidth over MPI, libfabric (tcp, efa,
// shm, ...) and NCCL, nccl-tests compatible; mesh preflight; scaling.
//
//   mpirun -np N -H a,b,c,d nodeprobe-allreduce --backend fabric --provider efa ...
//   nodeprobe-allreduce --np 4 --backend mpi,fabric:shm      (local ranks, no launcher)
#include <CLI/CLI.hpp>
#include <iostream>

#include "driver.h"
#include "nodeprobe/emit.h"
#include "launcher.h"
#include "nodeprobe/mpi_sanitizer_options.h"
#include "nodeprobe/mpirun.h"
#include "options.h"

int main(int argc, char** argv) {
  using namespace nodeprobe;
  using namespace nodeprobe::allreduce;
  CLI::App app{"nodeprobe-allreduce: allreduce bus bandwidth over mpi, fabric (libfabric: tcp, efa, shm, "
               "udp ...) and nccl, with nccl-tests compatible flags and table; --mesh preflight; --scaling",
               "nodeprobe-allreduce"};
  Options opt;
  add_allreduce_flags(app, opt);
  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  if (opt.common.list) {
    text_stream(opt.common) << "allreduce\tallreduce busbw per size over mpi / fabric / nccl, mesh preflight, scaling\n";
    return exit_code::kOk;
  }
  if (launched_by_mpi()) return run_ranks(opt, argc, argv);
  if (opt.np > 0) return run_local_ranks(opt, argc, argv);
  return write_error_report(
      opt, argc, argv, Status::kError,
      "not started by a launcher: run `mpirun -np N -H host1,host2,... nodeprobe-allreduce ...` (or srun), "
      "or add --np N to start N local ranks");
}
