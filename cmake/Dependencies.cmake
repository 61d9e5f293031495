# Dependency detection. Required: nlohmann-json, CLI11 (and GoogleTest / Google
# Benchmark when tests / benchmarks are built), see RequiredLibraries.cmake.
# Optional ones each have a NODEPROBE_WITH_<X> cache option: AUTO (use when
# found), ON (must be found), OFF (never). A missing optional dependency never
# breaks the build.

include(FindPackageHandleStandardArgs)
find_package(PkgConfig QUIET)

set(_np_summary "")
macro(_np_note name state detail)
  string(APPEND _np_summary "  ${name}|${state}|${detail}\n")
endmacro()

# Declares NODEPROBE_WITH_<NAME> with AUTO/ON/OFF.
macro(np_option name doc)
  set(NODEPROBE_WITH_${name} AUTO CACHE STRING "${doc} (AUTO, ON or OFF)")
  set_property(CACHE NODEPROBE_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
endmacro()

# Sets NODEPROBE_HAVE_<NAME> from whether it was found, honouring the option.
function(np_resolve name found detail)
  set(opt "${NODEPROBE_WITH_${name}}")
  if(opt STREQUAL "OFF")
    set(NODEPROBE_HAVE_${name} FALSE PARENT_SCOPE)
    _np_note(${name} "off" "disabled by NODEPROBE_WITH_${name}=OFF")
  elseif(${found})
    set(NODEPROBE_HAVE_${name} TRUE PARENT_SCOPE)
    _np_note(${name} "yes" "${detail}")
  elseif(opt STREQUAL "ON")
    message(FATAL_ERROR "NODEPROBE_WITH_${name}=ON but ${name} was not found (${detail})")
  else()
    set(NODEPROBE_HAVE_${name} FALSE PARENT_SCOPE)
    _np_note(${name} "no" "${detail}")
  endif()
  set(_np_summary "${_np_summary}" PARENT_SCOPE)
endfunction()

# ---- required ---------------------------------------------------------------
include(RequiredLibraries)

# ---- CUDA toolkit libraries (nvcc not needed) --------------------------------
np_option(CUDA "CUDA runtime and cuBLAS")
set(_cuda_found FALSE)
set(_cuda_detail "CUDA toolkit not found (hint: CUDAToolkit_ROOT)")
if(NOT NODEPROBE_WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart AND TARGET CUDA::cublas)
    set(_cuda_found TRUE)
    set(_cuda_detail "${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_DIR}")
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      string(APPEND _cuda_detail ", nvcc available")
    else()
      string(APPEND _cuda_detail ", no nvcc (library-only probes)")
    endif()
  endif()
endif()
np_resolve(CUDA _cuda_found "${_cuda_detail}")

# ---- nvcc: only nodeprobe's own kernels need it (the CUDA libraries do not) ---
np_option(NVCC "nvcc for nodeprobe's CUDA kernels")
set(_nvcc_found FALSE)
set(_nvcc_detail "nvcc not found (hint: CUDACXX or CMAKE_CUDA_COMPILER)")
if(NODEPROBE_HAVE_CUDA AND NOT NODEPROBE_WITH_NVCC STREQUAL "OFF" AND CMAKE_CUDA_COMPILER)
  include(CudaArchitectures)
  enable_language(CUDA)
  set(_nvcc_found TRUE)
  string(REPLACE ";" " " _np_arch_text "${CMAKE_CUDA_ARCHITECTURES}")
  set(_nvcc_detail "${CMAKE_CUDA_COMPILER_VERSION}, architectures ${_np_arch_text}")
elseif(NOT NODEPROBE_HAVE_CUDA)
  set(_nvcc_detail "needs CUDA")
endif()
np_resolve(NVCC _nvcc_found "${_nvcc_detail}")

# ---- cuDNN -------------------------------------------------------------------
np_option(CUDNN "cuDNN")
set(_cudnn_found FALSE)
set(_cudnn_detail "cudnn.h / libcudnn not found (hint: CUDNN_ROOT)")
if(NODEPROBE_HAVE_CUDA AND NOT NODEPROBE_WITH_CUDNN STREQUAL "OFF")
  find_path(CUDNN_INCLUDE_DIR cudnn.h
    HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include)
  find_library(CUDNN_LIBRARY cudnn
    HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_DIR}
    PATH_SUFFIXES lib64 lib)
  if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    set(_cudnn_found TRUE)
    set(_cudnn_detail "${CUDNN_LIBRARY}")
    if(NOT TARGET nodeprobe::cudnn)
      add_library(nodeprobe::cudnn UNKNOWN IMPORTED)
      set_target_properties(nodeprobe::cudnn PROPERTIES
        IMPORTED_LOCATION ${CUDNN_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${CUDNN_INCLUDE_DIR})
    endif()
  endif()
elseif(NOT NODEPROBE_HAVE_CUDA)
  set(_cudnn_detail "needs CUDA")
endif()
np_resolve(CUDNN _cudnn_found "${_cudnn_detail}")

# ---- NCCL --------------------------------------------------------------------
np_option(NCCL "NCCL")
set(NCCL_HOME "" CACHE PATH "Where NCCL is installed (include/, lib/)")
set(_nccl_found FALSE)
set(_nccl_detail "nccl.h / libnccl not found (hint: NCCL_HOME)")
if(NODEPROBE_HAVE_CUDA AND NOT NODEPROBE_WITH_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR nccl.h
    HINTS ${NCCL_HOME} $ENV{NCCL_HOME} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl
    HINTS ${NCCL_HOME} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_DIR}
    PATH_SUFFIXES lib64 lib)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_nccl_found TRUE)
    set(_nccl_detail "${NCCL_LIBRARY}")
    if(NOT TARGET nodeprobe::nccl)
      add_library(nodeprobe::nccl UNKNOWN IMPORTED)
      set_target_properties(nodeprobe::nccl PROPERTIES
        IMPORTED_LOCATION ${NCCL_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
    endif()
  endif()
elseif(NOT NODEPROBE_HAVE_CUDA)
  set(_nccl_detail "needs CUDA")
endif()
np_resolve(NCCL _nccl_found "${_nccl_detail}")

# ---- MPI ---------------------------------------------------------------------
np_option(MPI "MPI (Open MPI or another implementation)")
set(_mpi_found FALSE)
set(_mpi_detail "MPI not found (hint: MPI_HOME or mpicc on PATH)")
if(NOT NODEPROBE_WITH_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(_mpi_found TRUE)
    set(_mpi_detail "MPI ${MPI_C_VERSION}, mpiexec ${MPIEXEC_EXECUTABLE}")
  endif()
endif()
np_resolve(MPI _mpi_found "${_mpi_detail}")

# ---- libfabric (OS package or /opt/amazon/efa) -------------------------------
np_option(LIBFABRIC "libfabric")
set(LIBFABRIC_HOME "/opt/amazon/efa" CACHE PATH "Preferred libfabric prefix (EFA installer)")
set(_fab_found FALSE)
set(_fab_detail "libfabric not found (hint: LIBFABRIC_HOME, pkg-config)")
if(NOT NODEPROBE_WITH_LIBFABRIC STREQUAL "OFF")
  # The EFA installer's build wins over the OS one: it carries the efa provider.
  find_path(LIBFABRIC_INCLUDE_DIR rdma/fabric.h
    HINTS ${LIBFABRIC_HOME}/include NO_DEFAULT_PATH)
  find_library(LIBFABRIC_LIBRARY fabric
    HINTS ${LIBFABRIC_HOME}/lib64 ${LIBFABRIC_HOME}/lib NO_DEFAULT_PATH)
  if(NOT (LIBFABRIC_INCLUDE_DIR AND LIBFABRIC_LIBRARY) AND PkgConfig_FOUND)
    pkg_check_modules(PC_LIBFABRIC QUIET libfabric)
    find_path(LIBFABRIC_INCLUDE_DIR rdma/fabric.h HINTS ${PC_LIBFABRIC_INCLUDE_DIRS})
    find_library(LIBFABRIC_LIBRARY fabric HINTS ${PC_LIBFABRIC_LIBRARY_DIRS})
  endif()
  if(LIBFABRIC_INCLUDE_DIR AND LIBFABRIC_LIBRARY)
    set(_fab_found TRUE)
    set(_fab_detail "${LIBFABRIC_LIBRARY}")
    if(NOT TARGET nodeprobe::libfabric)
      add_library(nodeprobe::libfabric UNKNOWN IMPORTED)
      set_target_properties(nodeprobe::libfabric PROPERTIES
        IMPORTED_LOCATION ${LIBFABRIC_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${LIBFABRIC_INCLUDE_DIR})
    endif()
  endif()
endif()
np_resolve(LIBFABRIC _fab_found "${_fab_detail}")

# ---- smaller optional libraries -----------------------------------------------
# Found through pkg-config; each becomes nodeprobe::<name> when present.
function(np_pkg name module doc)
  np_option(${name} "${doc}")
  set(_found FALSE)
  set(_detail "${module} not found (pkg-config)")
  if(NOT NODEPROBE_WITH_${name} STREQUAL "OFF" AND PkgConfig_FOUND)
    pkg_check_modules(PC_${name} QUIET IMPORTED_TARGET GLOBAL ${module})
    if(PC_${name}_FOUND)
      set(_found TRUE)
      set(_detail "${module} ${PC_${name}_VERSION}")
      add_library(nodeprobe::${module} ALIAS PkgConfig::PC_${name})
    endif()
  endif()
  np_resolve(${name} _found "${_detail}")
  set(NODEPROBE_HAVE_${name} ${NODEPROBE_HAVE_${name}} PARENT_SCOPE)
  set(_np_summary "${_np_summary}" PARENT_SCOPE)
endfunction()
np_pkg(URING liburing "io_uring reads (nodeprobe-io)")
np_pkg(RE2 re2 "RE2 multi-pattern log scanning")
np_pkg(PCRE2 libpcre2-8 "PCRE2 JIT log scanning")
np_pkg(ZLIB zlib "gzip log reading")

# Test-only: an independent JSON Schema validator.
find_path(VALIJSON_INCLUDE_DIR valijson/validator.hpp)
if(VALIJSON_INCLUDE_DIR)
  _np_note(valijson "yes" "schema tests use ${VALIJSON_INCLUDE_DIR}")
else()
  _np_note(valijson "no" "schema validation tests will be skipped")
endif()

function(nodeprobe_print_summary)
  message(STATUS "")
  message(STATUS "nodeprobe ${PROJECT_VERSION} (${NODEPROBE_GIT}) configuration")
  message(STATUS "  ------------------------------------------------------------")
  string(REPLACE "\n" ";" _lines "${_np_summary}")
  foreach(_l IN LISTS _lines)
    if(_l STREQUAL "")
      continue()
    endif()
    string(REPLACE "|" ";" _parts "${_l}")
    list(GET _parts 0 _n)
    list(GET _parts 1 _s)
    list(GET _parts 2 _d)
    string(STRIP "${_n}" _n)
    string(LENGTH "${_n}" _len)
    math(EXPR _pad "16 - ${_len}")
    if(_pad LESS 1)
      set(_pad 1)
    endif()
    string(REPEAT " " ${_pad} _sp)
    message(STATUS "  ${_n}${_sp}${_s}  ${_d}")
  endforeach()
  message(STATUS "  werror=${NODEPROBE_WERROR} tests=${NODEPROBE_BUILD_TESTS} "
                 "benchmarks=${NODEPROBE_BUILD_BENCHMARKS} device-tests=${NODEPROBE_DEVICE_TESTS}")
  message(STATUS "")
endfunction()
