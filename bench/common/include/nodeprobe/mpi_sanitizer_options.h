#pragma once
/// Included once by each executable that calls MPI_Init (nodeprobe-allreduce,
/// nodeprobe-fleet); only a sanitizer build (scripts/test.sh --sanitize)
/// compiles the definition below.
///
/// Open MPI keeps allocations until exit by design and scripts/lsan.supp names
/// its libraries, but ASan's fast frame-pointer unwinder stops inside Open
/// MPI's components (no frame pointers; dlclosed at MPI_Finalize, so
/// "<unknown module>"): every rank reported ~117 KB that no suppression could
/// match. MPI ranks unwind fully instead and reach the libmpi / libopen-pal
/// frames. Not for every process: that made diag_unit_tests 12.8x slower
/// (17.5 -> 223 s of CPU); not through mpirun's mca_base_env_list: Open MPI
/// refuses it together with `mpirun -x`; not through srun's environment: one
/// launcher each. ASAN_OPTIONS still overrides it.

#if defined(__SANITIZE_ADDRESS__)
#define NODEPROBE_MPI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NODEPROBE_MPI_ASAN 1
#endif
#endif

#ifdef NODEPROBE_MPI_ASAN
extern "C" const char* __asan_default_options();
extern "C" __attribute__((used, visibility("default"))) const char* __asan_default_options() {
  return "fast_unwind_on_malloc=0";
}
#endif
