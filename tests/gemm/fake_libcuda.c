/* A stand-in for the NVIDIA driver library (libcuda.so.1) for tests on
 * machines without a GPU. The real CUDA runtime loads it, asks its version
 * and initialises it, so the probe's no-GPU diagnosis runs end to end:
 *   FAKE_CUDA_DRIVER_VERSION=13000  driver version reported (default 13000)
 *   FAKE_CUDA_INIT_RESULT=100       cuInit's CUresult (default 100: no device)
 * Everything else the runtime asks for is reported missing. */
#include <stdlib.h>
#include <string.h>

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

int cuDriverGetVersion(int* v) {
  if (!v) return 1;
  *v = env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
  return 0;
}

int cuInit(unsigned flags) {
  (void)flags;
  return env_int("FAKE_CUDA_INIT_RESULT", 100);
}

int cuGetProcAddress_v2(const char* symbol, void** fn, int version, unsigned long long flags,
                        int* status);

/* The runtime first asks for cuGetProcAddress itself (the _v2 entry point),
 * then for everything else through it. */
static int lookup(const char* symbol, void** fn) {
  if (!symbol || !fn) return 1;
  if (strcmp(symbol, "cuDriverGetVersion") == 0) *fn = (void*)cuDriverGetVersion;
  else if (strcmp(symbol, "cuInit") == 0) *fn = (void*)cuInit;
  else if (strcmp(symbol, "cuGetProcAddress") == 0) *fn = (void*)cuGetProcAddress_v2;
  else {
    *fn = 0;
    return 500; /* CUDA_ERROR_NOT_FOUND */
  }
  return 0;
}

int cuGetProcAddress_v2(const char* symbol, void** fn, int version, unsigned long long flags,
                        int* status) {
  (void)version;
  (void)flags;
  const int rc = lookup(symbol, fn);
  if (status) *status = rc == 0 ? 0 : 1;
  return rc;
}

int cuGetProcAddress(const char* symbol, void** fn, int version, unsigned long long flags) {
  (void)version;
  (void)flags;
  return lookup(symbol, fn);
}

int cuGetExportTable(const void** table, const void* id) {
  (void)id;
  if (table) *table = 0;
  return 500;
}
