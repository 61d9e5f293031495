#include "fake_cuda_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <unistd.h>

namespace nodeprobe::testing {
namespace {

FakeCudaRuntime* g_current = nullptr;

}  // namespace

// The C functions behind the table reach the instance's private state here.
struct FakeCudaAccess {
  using F = FakeCudaRuntime;
  using L = std::lock_guard<std::recursive_mutex>;
  static F& f() { return F::current(); }
  static std::recursive_mutex& mu() { return f().mu_; }
  // Waits, lock released between tries, for a stream whose step waits on another thread (bounded: a fake never hangs a test).
  static bool run_waiting(cudaStream_t s) {
    for (int i = 0; i < 30000; ++i) {
      {
        L lk(mu());
        if (f().run(s)) return true;
      }
      ::usleep(1000);
    }
    return false;
  }
  static F::Stream& stream(cudaStream_t s) { return f().stream(s); }
  static F::Event* event(cudaEvent_t e) { return reinterpret_cast<F::Event*>(e); }
  static void note(const char* call) {
    if (f().record_calls) f().calls.emplace_back(call);
  }

  static cudaError_t runtime_version(int* v) { L lk(mu()); *v = f().runtime_version; return cudaSuccess; }
  static cudaError_t driver_version(int* v) { L lk(mu()); *v = f().driver_version; return cudaSuccess; }
  static cudaError_t device_count(int* n) {
    L lk(mu());
    note("cudaGetDeviceCount");
    if (f().device_count_error != cudaSuccess) return f().device_count_error;
    *n = static_cast<int>(f().devices.size());
    return cudaSuccess;
  }
  static const char* error_name(cudaError_t e) { return ::cudaGetErrorName(e); }
  static const char* error_string(cudaError_t e) { return ::cudaGetErrorString(e); }
  static cudaError_t last_error() { L lk(mu()); return cudaSuccess; }
  static cudaError_t get_device(int* d) { L lk(mu()); *d = f().current_device; return cudaSuccess; }
  static cudaError_t set_device(int d) {
    L lk(mu());
    if (d < 0 || static_cast<std::size_t>(d) >= f().devices.size()) return cudaErrorInvalidDevice;
    f().current_device = d;
    return cudaSuccess;
  }
  static cudaError_t properties(cudaDeviceProp* p, int d) {
    L lk(mu());
    if (d < 0 || static_cast<std::size_t>(d) >= f().devices.size()) return cudaErrorInvalidDevice;
    *p = f().devices[static_cast<std::size_t>(d)];
    return cudaSuccess;
  }
  static cudaError_t attribute(int* v, cudaDeviceAttr a, int d) {
    L lk(mu());
    cudaDeviceProp p{};
    if (const cudaError_t e = properties(&p, d); e != cudaSuccess) return e;
    *v = a == cudaDevAttrComputeCapabilityMajor ? p.major : a == cudaDevAttrComputeCapabilityMinor ? p.minor : 0;
    return cudaSuccess;
  }
  static cudaError_t bus_id(char* buf, int len, int d) {
    L lk(mu());
    std::snprintf(buf, static_cast<std::size_t>(len), "0000:%02x:00.0", 0x10 + d);
    return cudaSuccess;
  }
  static cudaError_t malloc_device(void** p, size_t n) {
    L lk(mu());
    note("cudaMalloc");
    *p = std::malloc(n ? n : 1);
    std::memset(*p, 0xab, n);  // cudaMalloc'ed memory holds whatever was there
    f().device_[*p] = n;
    return cudaSuccess;
  }
  static cudaError_t free_device(void* p) {
    L lk(mu());
    f().run_all();  // cudaFree synchronises the device
    f().device_.erase(p);
    std::free(p);
    return cudaSuccess;
  }
  static cudaError_t malloc_host(void** p, size_t n) {
    L lk(mu());
    *p = std::malloc(n ? n : 1);
    f().pinned_.insert(*p);
    return cudaSuccess;
  }
  static cudaError_t host_alloc(void** p, size_t n, unsigned int) { L lk(mu()); return malloc_host(p, n); }
  static cudaError_t free_host(void* p) {
    L lk(mu());
    f().pinned_.erase(p);
    std::free(p);
    return cudaSuccess;
  }
  static cudaError_t memcpy_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
    if (kind == cudaMemcpyDeviceToHost) {
      bool waits = false;
      {
        L lk(mu());
        waits = !f().pinned_.count(dst) && !f().hang;
      }
      // Pageable destination: the call waits for its stream, which may wait on another rank.
      if (waits) {
        if (!run_waiting(s)) return cudaErrorLaunchTimeout;
        L lk(mu());
        note(s ? "cudaMemcpyAsync" : "cudaMemcpyAsync(legacy stream)");
        std::memcpy(dst, src, n);
        return cudaSuccess;
      }
    }
    L lk(mu());
    F& x = f();
    note(s ? "cudaMemcpyAsync" : "cudaMemcpyAsync(legacy stream)");
    if (kind == cudaMemcpyHostToDevice) {
      // Staged now, landed when the stream runs.
      auto data = std::make_shared<std::vector<unsigned char>>(static_cast<const unsigned char*>(src),
                                                               static_cast<const unsigned char*>(src) + n);
      x.enqueue(s, [dst, data] { std::memcpy(dst, data->data(), data->size()); });
    } else if (kind == cudaMemcpyDeviceToHost && !x.pinned_.count(dst)) {
      x.run(s);  // pageable destination: the call waits for its stream
      std::memcpy(dst, src, n);
    } else {
      x.enqueue(s, [dst, src, n] { std::memmove(dst, src, n); });
    }
    return cudaSuccess;
  }
  static cudaError_t memset_async(void* p, int v, size_t n, cudaStream_t s) {
    L lk(mu());
    note(s ? "cudaMemsetAsync" : "cudaMemsetAsync(legacy stream)");
    f().enqueue(s, [p, v, n] { std::memset(p, v, n); });
    return cudaSuccess;
  }
  static cudaError_t memcpy_peer_async(void* dst, int, const void* src, int, size_t n, cudaStream_t s) {
    L lk(mu());
    f().enqueue(s, [dst, src, n] { std::memmove(dst, src, n); });
    return cudaSuccess;
  }
  static cudaError_t stream_create(cudaStream_t* s, unsigned int) {
    L lk(mu());
    auto* st = new F::Stream;
    f().streams_.insert(st);
    *s = reinterpret_cast<cudaStream_t>(st);
    return cudaSuccess;
  }
  static cudaError_t stream_destroy(cudaStream_t s) {
    L lk(mu());
    auto* st = &stream(s);
    f().run(s);
    f().streams_.erase(st);
    delete st;
    return cudaSuccess;
  }
  static cudaError_t stream_sync(cudaStream_t s) {
    {
      L lk(mu());
      if (f().hang) return cudaErrorLaunchTimeout;  // a real one would block for ever
    }
    return run_waiting(s) ? cudaSuccess : cudaErrorLaunchTimeout;
  }
  static cudaError_t stream_query(cudaStream_t s) {
    L lk(mu());
    note("cudaStreamQuery");
    if (f().query_error != cudaSuccess) return f().query_error;
    if (f().hang) return cudaErrorNotReady;
    return f().run(s) ? cudaSuccess : cudaErrorNotReady;
  }
  static cudaError_t event_create(cudaEvent_t* e) {
    L lk(mu());
    auto* ev = new F::Event;
    f().events_.insert(ev);
    *e = reinterpret_cast<cudaEvent_t>(ev);
    return cudaSuccess;
  }
  static cudaError_t event_create_flags(cudaEvent_t* e, unsigned int) { L lk(mu()); return event_create(e); }
  static cudaError_t event_destroy(cudaEvent_t e) {
    L lk(mu());
    f().events_.erase(event(e));
    delete event(e);
    return cudaSuccess;
  }
  static cudaError_t event_record(cudaEvent_t e, cudaStream_t s) {
    L lk(mu());
    F::Event* ev = event(e);
    ev->stream = &stream(s);
    ev->recorded = true;
    ev->done = false;
    F& x = f();
    x.enqueue(s, [ev, &x] {
      ev->done = true;
      ev->seq = ++x.seq_;
    });
    return cudaSuccess;
  }
  static cudaStream_t stream_of(F::Event* ev) {
    return ev->stream == &f().legacy_ ? nullptr : reinterpret_cast<cudaStream_t>(ev->stream);
  }
  static cudaError_t event_sync(cudaEvent_t e) {
    cudaStream_t s = nullptr;
    {
      L lk(mu());
      if (f().hang) return cudaErrorLaunchTimeout;
      s = stream_of(event(e));
    }
    return run_waiting(s) ? cudaSuccess : cudaErrorLaunchTimeout;
  }
  static cudaError_t event_query(cudaEvent_t e) {
    L lk(mu());
    if (f().hang) return cudaErrorNotReady;
    return f().run(stream_of(event(e))) || event(e)->done ? cudaSuccess : cudaErrorNotReady;
  }
  static cudaError_t elapsed(float* ms, cudaEvent_t a, cudaEvent_t b) {
    L lk(mu());
    if (!event(a)->done || !event(b)->done) return cudaErrorNotReady;
    *ms = 0.5f * static_cast<float>(event(b)->seq - event(a)->seq);  // 0.5 ms per queued step
    return cudaSuccess;
  }
  static cudaError_t can_access_peer(int* can, int, int) {
    L lk(mu());
    *can = 1;
    return cudaSuccess;
  }
  static cudaError_t enable_peer(int, unsigned int) { L lk(mu()); return cudaSuccess; }
};

FakeCudaRuntime::FakeCudaRuntime() {
  if (g_current) throw std::logic_error("one FakeCudaRuntime at a time");
  g_current = this;
  cudaDeviceProp p{};
  std::snprintf(p.name, sizeof p.name, "%s", "NVIDIA H100 80GB HBM3");
  p.major = 9;
  p.minor = 0;
  p.totalGlobalMem = 80ULL << 30;
  p.multiProcessorCount = 132;
  p.pciBusID = 0x10;
  for (int i = 0; i < 16; ++i) p.uuid.bytes[i] = static_cast<char>(i);
  devices.push_back(p);
  using A = FakeCudaAccess;
  rt_.cudaRuntimeGetVersion = A::runtime_version;
  rt_.cudaDriverGetVersion = A::driver_version;
  rt_.cudaGetDeviceCount = A::device_count;
  rt_.cudaGetErrorName = A::error_name;
  rt_.cudaGetErrorString = A::error_string;
  rt_.cudaGetLastError = A::last_error;
  rt_.cudaGetDevice = A::get_device;
  rt_.cudaSetDevice = A::set_device;
  rt_.cudaGetDeviceProperties = A::properties;
  rt_.cudaDeviceGetAttribute = A::attribute;
  rt_.cudaDeviceGetPCIBusId = A::bus_id;
  rt_.cudaMalloc = A::malloc_device;
  rt_.cudaFree = A::free_device;
  rt_.cudaMallocHost = A::malloc_host;
  rt_.cudaHostAlloc = A::host_alloc;
  rt_.cudaFreeHost = A::free_host;
  rt_.cudaMemcpyAsync = A::memcpy_async;
  rt_.cudaMemsetAsync = A::memset_async;
  rt_.cudaMemcpyPeerAsync = A::memcpy_peer_async;
  rt_.cudaStreamCreateWithFlags = A::stream_create;
  rt_.cudaStreamDestroy = A::stream_destroy;
  rt_.cudaStreamSynchronize = A::stream_sync;
  rt_.cudaStreamQuery = A::stream_query;
  rt_.cudaEventCreate = A::event_create;
  rt_.cudaEventCreateWithFlags = A::event_create_flags;
  rt_.cudaEventDestroy = A::event_destroy;
  rt_.cudaEventRecord = A::event_record;
  rt_.cudaEventSynchronize = A::event_sync;
  rt_.cudaEventQuery = A::event_query;
  rt_.cudaEventElapsedTime = A::elapsed;
  rt_.cudaDeviceCanAccessPeer = A::can_access_peer;
  rt_.cudaDeviceEnablePeerAccess = A::enable_peer;
}

FakeCudaRuntime::~FakeCudaRuntime() {
  for (Stream* s : streams_) delete s;
  for (Event* e : events_) delete e;
  for (auto& [p, n] : device_) std::free(p);
  for (void* p : pinned_) std::free(p);
  g_current = nullptr;
}

FakeCudaRuntime& FakeCudaRuntime::current() {
  if (!g_current) throw std::logic_error("no FakeCudaRuntime installed");
  return *g_current;
}

FakeCudaRuntime::Stream& FakeCudaRuntime::stream(cudaStream_t s) {
  if (!s) return legacy_;
  return *reinterpret_cast<Stream*>(s);
}

void FakeCudaRuntime::enqueue(cudaStream_t s, std::function<void()> op) {
  enqueue_until(s, [op = std::move(op)] {
    op();
    return true;
  });
}

void FakeCudaRuntime::enqueue_until(cudaStream_t s, std::function<bool()> op) {
  std::lock_guard<std::recursive_mutex> lk(mu_);
  stream(s).ops.push_back(std::move(op));
}

bool FakeCudaRuntime::run(cudaStream_t s) {
  std::lock_guard<std::recursive_mutex> lk(mu_);
  if (hang) return false;
  Stream& st = stream(s);
  while (!st.ops.empty()) {
    if (!st.ops.front()()) return false;  // waits on another rank: the stream is not ready
    st.ops.pop_front();
  }
  return true;
}

void FakeCudaRuntime::run_all() {
  std::lock_guard<std::recursive_mutex> lk(mu_);
  run(nullptr);
  for (Stream* s : streams_) run(reinterpret_cast<cudaStream_t>(s));
}

}  // namespace nodeprobe::testing
