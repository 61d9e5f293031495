// The backend of a build without the CUDA toolkit: it only says so, and the
// diagnosis turns that into skip (or error when GPUs are expected).
#include <stdexcept>

#include "gpu_backend.h"

namespace nodeprobe::gemm {
namespace {

class NoCudaBackend final : public GpuBackend {
 public:
  CudaEnv query_env() override {
    CudaEnv e;
    e.built_with_cuda = false;
    return e;
  }
  std::vector<LibraryState> libraries() override { return {}; }
  std::string blas_unavailable_reason() override { return kWhy; }
  DeviceInfo device_info(int) override { fail(); }
  std::string unsupported_reason(int, Precision) override { return kWhy; }
  Timing time_gemm(int, const GemmRequest&, const std::vector<std::uint8_t>&,
                   const std::vector<std::uint8_t>&, const BusyHook&) override { fail(); }
  std::vector<std::uint8_t> run_gemm(int, Precision, int, int, int, const std::vector<std::uint8_t>&,
                                     const std::vector<std::uint8_t>&) override { fail(); }
  std::string conv_unavailable_reason() override { return kWhy; }
  Timing time_conv(int, const ConvShape&, Precision, ConvPass, int, int) override { fail(); }
  ConvOutputs run_conv(int, const ConvShape&, Precision, const std::vector<float>&,
                       const std::vector<float>&, const std::vector<float>&) override { fail(); }
  std::string copy_unavailable_reason(DeviceCopy) override { return kWhy; }
  Bandwidth device_bandwidth(int, DeviceCopy, std::size_t, int, int) override { fail(); }
  Bandwidth host_transfer(int, bool, bool, std::size_t, int, int,
                          const BusyHook&) override { fail(); }
  TrainRun train(int, const TrainConfig&, const TrainData&) override { fail(); }
  bool peer_access(int, int) override { return false; }
  Bandwidth peer_copy(int, int, std::size_t, int, int) override { fail(); }

 private:
  static constexpr const char* kWhy = "this build has no CUDA toolkit";
  [[noreturn]] static void fail() { throw std::logic_error(kWhy); }
};

}  // namespace

std::unique_ptr<GpuBackend> make_cuda_backend() { return std::make_unique<NoCudaBackend>(); }

}  // namespace nodeprobe::gemm
