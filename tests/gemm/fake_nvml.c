/* A stand-in for libnvidia-ml.so.1 for tests on machines without a GPU.
 *   FAKE_NVML_INIT_RESULT  nvmlInit_v2's return (default 0; 18 = driver/library mismatch)
 *   FAKE_NVML_GPUS         number of GPUs (default 1)
 *   FAKE_NVML_NAME         device name (default "NVIDIA A100-SXM4-40GB")
 *   FAKE_NVML_PCIE         "gen,width,maxgen,maxwidth" (default "4,16,4,16")
 *   FAKE_NVML_ECC_UNCORRECTED  volatile uncorrectable ECC errors (default 0)
 *   FAKE_NVML_REMAP_FAILURE    1: row remapping failed (default 0)
 *   FAKE_NVML_MIG_MODE     1: every GPU is in MIG mode (default 0)
 *   FAKE_NVML_MIG          MIG profiles on every GPU in MIG mode, "3g.20gb,3g.20gb"
 *                          (default none: MIG on, no instance created)
 *   FAKE_NVML_THROTTLE     throttle-reason mask while busy (default 0x1 GpuIdle)
 *   FAKE_NVML_POWER_W      instantaneous power and energy-counter rate (default 300)
 * MIG device m of GPU i has UUID MIG-00000000-0000-0000-<m+1 as 4 hex>-<i as 12 digits>. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}
/* GPU i's handle is i + 1; MIG device m of GPU i is (m + 1) << 16 | (i + 1). */
static unsigned index_of(nvmlDevice_t d) { return (unsigned)((unsigned long)d - 1); }
static int valid(nvmlDevice_t d) { return d && index_of(d) < (unsigned)env_int("FAKE_NVML_GPUS", 1); }
static int mig_of(nvmlDevice_t d) { return (int)(((unsigned long)d >> 16) & 0xff) - 1; }
static unsigned mig_gpu(nvmlDevice_t d) { return (unsigned)(((unsigned long)d & 0xffff) - 1); }

/* The n-th (0-based) profile of FAKE_NVML_MIG into buf; 0 when there is none. */
static int mig_profile(int n, char* buf, size_t len) {
  const char* v = getenv("FAKE_NVML_MIG");
  if (!v || !*v) return 0;
  for (int i = 0; *v; ++i) {
    const char* end = strchr(v, ',');
    const size_t l = end ? (size_t)(end - v) : strlen(v);
    if (i == n) {
      snprintf(buf, len, "%.*s", (int)l, v);
      return 1;
    }
    if (!end) break;
    v = end + 1;
  }
  return 0;
}
static int valid_mig(nvmlDevice_t d) {
  char p[32];
  return mig_of(d) >= 0 && mig_gpu(d) < (unsigned)env_int("FAKE_NVML_GPUS", 1) &&
         env_int("FAKE_NVML_MIG_MODE", 0) == 1 && mig_profile(mig_of(d), p, sizeof p);
}

int nvmlInit_v2(void) { return env_int("FAKE_NVML_INIT_RESULT", 0); }
int nvmlShutdown(void) { return 0; }
const char* nvmlErrorString(int rc) {
  return rc == 18 ? "RM has detected an NVML/RM version mismatch." : rc ? "Unknown Error" : "Success";
}
int nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  snprintf(buf, len, "%s", "550.54.15");
  return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = 12040;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = (unsigned)env_int("FAKE_NVML_GPUS", 1);
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i >= (unsigned)env_int("FAKE_NVML_GPUS", 1)) return 2;
  *d = (nvmlDevice_t)(unsigned long)(i + 1);
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_t d, char* buf, unsigned len) {
  const char* n = getenv("FAKE_NVML_NAME");
  const char* name = n && *n ? n : "NVIDIA A100-SXM4-40GB";
  if (valid_mig(d)) {
    char p[32];
    mig_profile(mig_of(d), p, sizeof p);
    snprintf(buf, len, "%s MIG %s", name, p);
    return 0;
  }
  if (!valid(d)) return 2;
  snprintf(buf, len, "%s", name);
  return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_t d, char* buf, unsigned len) {
  if (valid_mig(d)) {
    snprintf(buf, len, "MIG-00000000-0000-0000-%04x-%012u", (unsigned)mig_of(d) + 1, mig_gpu(d));
    return 0;
  }
  if (!valid(d)) return 2;
  snprintf(buf, len, "GPU-00000000-0000-0000-0000-%012u", index_of(d));
  return 0;
}
int nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* cur, unsigned* pending) {
  if (!valid(d)) return 2;
  *cur = *pending = (unsigned)env_int("FAKE_NVML_MIG_MODE", 0);
  return 0;
}
int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned* n) {
  if (!valid(d)) return 2;
  *n = 7;
  return 0;
}
int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned m, nvmlDevice_t* out) {
  if (!valid(d) || m >= 7) return 2;
  nvmlDevice_t mig = (nvmlDevice_t)(unsigned long)(((m + 1UL) << 16) | (index_of(d) + 1UL));
  if (!valid_mig(mig)) return 6; /* NOT_FOUND */
  *out = mig;
  return 0;
}
typedef struct {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double d;
    unsigned ui;
    unsigned long long ull;
  } value;
} nvmlFieldValue_t;
int nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t* v) {
  if (!valid(d)) return 2;
  for (int i = 0; i < n; ++i) {
    if (v[i].fieldId == 186) { /* NVML_FI_DEV_POWER_INSTANT, mW */
      v[i].valueType = 1;
      v[i].value.ui = (unsigned)env_int("FAKE_NVML_POWER_W", 300) * 1000u;
      v[i].nvmlReturn = 0;
    } else {
      v[i].nvmlReturn = 3;
    }
  }
  return 0;
}
/* Grows at FAKE_NVML_POWER_W with the monotonic clock, as a busy GPU's would. */
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  if (!valid(d)) return 2;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const double s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  *mj = (unsigned long long)(s * env_int("FAKE_NVML_POWER_W", 300) * 1000.0);
  return 0;
}
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  if (!valid(d)) return 2;
  memset(p, 0, sizeof *p);
  snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", 0x10 + index_of(d));
  return 0;
}
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  if (!valid(d)) return 2;
  *major = 8;
  *minor = 0;
  return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  if (valid_mig(d)) {
    m->total = 20ULL << 30;
    m->used = 1ULL << 20;
    m->free = m->total - m->used;
    return 0;
  }
  if (!valid(d)) return 2;
  m->total = 40ULL << 30;
  m->used = 1ULL << 20;
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* mode) {
  *mode = 1;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetEccMode(nvmlDevice_t d, int* cur, int* pending) {
  *cur = *pending = 1;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long* n) {
  (void)counter;
  *n = type == 1 ? (unsigned long long)env_int("FAKE_NVML_ECC_UNCORRECTED", 0) : 3;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* corr, unsigned* unc, unsigned* pending,
                              unsigned* failure) {
  *corr = *unc = *pending = 0;
  *failure = (unsigned)env_int("FAKE_NVML_REMAP_FAILURE", 0);
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned* count, unsigned long long* a) {
  (void)cause;
  (void)a;
  *count = 0;
  return valid(d) ? 3 : 2; /* NOT_SUPPORTED: Ampere remaps rows instead */
}
static int pcie(int field, int fallback) {
  const char* v = getenv("FAKE_NVML_PCIE");
  int f[4] = {4, 16, 4, 16};
  if (v && *v) sscanf(v, "%d,%d,%d,%d", &f[0], &f[1], &f[2], &f[3]);
  return field >= 0 && field < 4 ? f[field] : fallback;
}
int nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned* v) {
  *v = (unsigned)pcie(0, 4);
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned* v) {
  *v = (unsigned)pcie(1, 16);
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned* v) {
  *v = (unsigned)pcie(2, 4);
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned* v) {
  *v = (unsigned)pcie(3, 16);
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  *mhz = type == 2 ? 1215 : 1410;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  *mhz = type == 2 ? 1215 : 1410;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned* mw) {
  *mw = 400000;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  *mw = 61000;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* c) {
  (void)sensor;
  *c = 33;
  return valid(d) ? 0 : 2;
}
int nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int* active) {
  if (!valid(d) || link >= 12) return 2;
  *active = 1;
  return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* r) {
  const char* v = getenv("FAKE_NVML_THROTTLE");
  *r = v && *v ? strtoull(v, 0, 0) : 0x1; /* GpuIdle */
  return valid(d) ? 0 : 2;
}
