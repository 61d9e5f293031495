#pragma once
/// Typed errors and the check-macro pattern (after nvbench's cuda_call.cuh).
///
/// Every API family (CUDA, cuBLAS, cuDNN, NCCL, MPI, libfabric, NVML, POSIX)
/// gets one macro that throws ApiError carrying the API, the numeric code, the
/// code's name, the call text, file:line, host and rank. Exceptions are caught
/// once, at the probe boundary. Vendor families define their macros in their
/// own folders on top of throw_api_error(); this header stays vendor-free.

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nodeprobe {

struct ApiErrorInfo {
  std::string api;        ///< "posix", "cuda", "nccl", "mpi", "libfabric", ...
  long long code = 0;     ///< the API's numeric code
  std::string code_name;  ///< e.g. "ENOMEM", "cudaErrorNoDevice"
  std::string message;    ///< the API's own text for the code (+ extra context)
  std::string call;       ///< the call as written in the source
  std::string file;
  int line = 0;
  std::string host;
  int rank = -1;          ///< MPI rank when known, else -1
};

/// An API call failed. what() is one line: "api: call failed: code_name (code): message [file:line host rank]".
class ApiError : public std::runtime_error {
 public:
  explicit ApiError(ApiErrorInfo info);
  const ApiErrorInfo& info() const { return info_; }

 private:
  ApiErrorInfo info_;
};

/// Bad user input (flags, files): a one-line reason, exit code 2 (or 64 for usage).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The work stopped itself because its deadline (--timeout, a budget) was too
/// near to finish: status timeout, not error; what finished stays reported.
class DeadlineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Fills host and rank, then throws ApiError.
[[noreturn]] void throw_api_error(std::string api, long long code, std::string code_name,
                                  std::string message, const char* call, const char* file,
                                  int line);

/// Hostname of this process (cached).
const std::string& process_hostname();
/// MPI rank from the launcher's environment (Open MPI, PMI, PMIx, Slurm), or -1.
int process_rank();

/// Symbolic errno name ("ENOMEM"); "E<number>" when unknown.
std::string errno_name(int err);

/// Logs a failed cleanup call to stderr instead of throwing (destructors, unwinding).
void report_cleanup_failure(const std::string& what) noexcept;

}  // namespace nodeprobe

/// POSIX calls returning -1 and setting errno.
#define NP_CHECK_ERRNO(call)                                                              \
  do {                                                                                    \
    if ((call) == -1) {                                                                   \
      const int np_err_ = errno;                                                          \
      ::nodeprobe::throw_api_error("posix", np_err_, ::nodeprobe::errno_name(np_err_),    \
                                   std::strerror(np_err_), #call, __FILE__, __LINE__);    \
    }                                                                                     \
  } while (0)

/// POSIX calls returning 0 on success or an error number (pthread_*, posix_fallocate).
#define NP_CHECK_ERRNUM(call)                                                             \
  do {                                                                                    \
    const int np_rc_ = (call);                                                            \
    if (np_rc_ != 0) {                                                                    \
      ::nodeprobe::throw_api_error("posix", np_rc_, ::nodeprobe::errno_name(np_rc_),      \
                                   std::strerror(np_rc_), #call, __FILE__, __LINE__);     \
    }                                                                                     \
  } while (0)

/// No-throw variant for cleanup paths: logs and carries on.
#define NP_CHECK_ERRNO_NOTHROW(call)                                                      \
  do {                                                                                    \
    if ((call) == -1) {                                                                   \
      ::nodeprobe::report_cleanup_failure(std::string(#call) + ": " +                     \
                                          std::strerror(errno));                          \
    }                                                                                     \
  } while (0)
