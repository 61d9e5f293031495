# Required libraries: nlohmann-json, CLI11, and GoogleTest / Google Benchmark
# when tests / benchmarks are built. The OS package is used when it is new
# enough (Debian 12, Ubuntu 22.04+, EPEL 9); otherwise the pinned release of
# cmake/pinned-deps.txt is built from source: downloaded at configure time,
# or read from NODEPROBE_DEPS_DIR (scripts/fetch-deps.sh DIR fills it on a
# connected machine) without touching the network.
#
# Needs _np_note(name state detail) from the including file.

option(NODEPROBE_FETCH_MISSING "Build pinned releases of required libraries the OS lacks" ON)
set(NODEPROBE_DEPS_DIR "" CACHE PATH
  "Offline: directory with the pinned sources (scripts/fetch-deps.sh DIR); nothing is downloaded")
set(NODEPROBE_PINNED_DEPS "${CMAKE_CURRENT_LIST_DIR}/pinned-deps.txt" CACHE FILEPATH
  "The pinned releases (name version file sha256 url per line)")
include(FetchContent)
if(POLICY CMP0135)
  cmake_policy(SET CMP0135 NEW)  # extracted files get the extraction time: rebuilds stay right
endif()
include(CheckCXXSourceCompiles)
include(CMakePushCheckState)

file(STRINGS "${NODEPROBE_PINNED_DEPS}" _np_pin_lines REGEX "^[A-Za-z]")
foreach(_l IN LISTS _np_pin_lines)
  string(REGEX REPLACE "[ \t]+" ";" _p "${_l}")
  list(GET _p 0 _name)
  list(GET _p 1 _NP_PIN_${_name}_VERSION)
  list(GET _p 2 _NP_PIN_${_name}_FILE)
  list(GET _p 3 _NP_PIN_${_name}_SHA256)
  list(GET _p 4 _NP_PIN_${_name}_URL)
endforeach()

# Declares the pinned release of `name` (a line of pinned-deps.txt) for
# FetchContent: from NODEPROBE_DEPS_DIR when set, else from its URL.
macro(np_fetch name why)
  if(NOT DEFINED _NP_PIN_${name}_URL)
    message(FATAL_ERROR "${NODEPROBE_PINNED_DEPS} has no line for ${name}")
  endif()
  if(NOT NODEPROBE_FETCH_MISSING)
    message(FATAL_ERROR "${name}: ${why}, and NODEPROBE_FETCH_MISSING=OFF; "
                        "run scripts/setup.sh to install it")
  endif()
  if(NODEPROBE_DEPS_DIR)
    set(_np_src "${NODEPROBE_DEPS_DIR}/${_NP_PIN_${name}_FILE}")
    if(NOT EXISTS "${_np_src}")
      message(FATAL_ERROR "${name}: ${why}, and the offline directory NODEPROBE_DEPS_DIR=${NODEPROBE_DEPS_DIR} "
                          "has no ${_NP_PIN_${name}_FILE} (run scripts/fetch-deps.sh DIR on a connected machine)")
    endif()
  else()
    set(_np_src "${_NP_PIN_${name}_URL}")
  endif()
  message(STATUS "${name}: ${why}; building ${_NP_PIN_${name}_VERSION} from ${_np_src}")
  FetchContent_Declare(${name} URL "${_np_src}" URL_HASH SHA256=${_NP_PIN_${name}_SHA256})
endmacro()

# The OS's <pkg> >= min through its CMake package (which checks the version),
# else the pinned release `pin`; ARGN: NAME VALUE pairs of settings for the
# pinned build (no tests, no install).
macro(np_require pkg min pin label)
  find_package(${pkg} ${min} CONFIG QUIET)
  if(${pkg}_FOUND)
    _np_note(${label} "yes" "${${pkg}_VERSION}")
  else()
    np_fetch(${pin} "not found, or older than ${min}")
    set(_np_opts ${ARGN})
    while(_np_opts)
      list(POP_FRONT _np_opts _np_key _np_value)
      set(${_np_key} ${_np_value} CACHE INTERNAL "")
    endwhile()
    FetchContent_MakeAvailable(${pin})
    _np_note(${label} "built" "${_NP_PIN_${pin}_VERSION} (pinned)")
  endif()
endmacro()

np_require(nlohmann_json 3.9 nlohmann_json nlohmann_json JSON_Install OFF)
np_require(CLI11 2.0 cli11 CLI11
  CLI11_PRECOMPILED OFF CLI11_BUILD_TESTS OFF CLI11_BUILD_EXAMPLES OFF CLI11_BUILD_DOCS OFF)
find_package(Threads REQUIRED)

# ---- GoogleTest >= 1.10 (GTEST_SKIP, MOCK_METHOD) ----------------------------
# find_package(GTest 1.10) in module mode accepts RHEL 8's 1.8 (FindGTest sets
# no version), so: config mode first (a real version), else the headers
# FindGTest would take are checked by compiling what the tests use. Below
# CMake 3.23 FindGTest has no GTest::gmock: it is added here.
function(_np_gtest_usable out why)
  find_path(_NP_GTEST_INC gtest/gtest.h HINTS ${GTEST_ROOT} $ENV{GTEST_ROOT} PATH_SUFFIXES include)
  find_path(_NP_GMOCK_INC gmock/gmock.h HINTS ${GTEST_ROOT} $ENV{GTEST_ROOT} PATH_SUFFIXES include)
  if(NOT _NP_GTEST_INC OR NOT _NP_GMOCK_INC)
    set(${out} FALSE PARENT_SCOPE)
    set(${why} "not found" PARENT_SCOPE)
    return()
  endif()
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_INCLUDES ${_NP_GTEST_INC} ${_NP_GMOCK_INC})
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # compile only: the macros are the question
  # The result is cached under a name that carries the headers' place.
  string(MAKE_C_IDENTIFIER "NP_GTEST_1_10_AT_${_NP_GTEST_INC}" _var)
  check_cxx_source_compiles([[
#include <gtest/gtest.h>
#include <gmock/gmock.h>
struct Api { virtual ~Api() = default; virtual int f(int) = 0; };
struct MockApi : Api { MOCK_METHOD(int, f, (int), (override)); };
TEST(Probe, Skips) { GTEST_SKIP() << "needs GoogleTest 1.10"; }
]] ${_var})
  cmake_pop_check_state()
  set(${out} ${${_var}} PARENT_SCOPE)
  set(${why} "${_NP_GTEST_INC} has no GTEST_SKIP/MOCK_METHOD (GoogleTest older than 1.10)" PARENT_SCOPE)
endfunction()

if(NODEPROBE_BUILD_TESTS)
  find_package(GTest 1.10 CONFIG QUIET)
  if(GTest_FOUND)
    _np_note(GoogleTest "yes" "${GTest_VERSION}")
  else()
    _np_gtest_usable(_np_gtest_ok _np_gtest_why)
    if(_np_gtest_ok)
      find_package(GTest MODULE REQUIRED)
      if(NOT TARGET GTest::gmock)
        find_library(_NP_GMOCK_LIB gmock HINTS ${GTEST_ROOT} $ENV{GTEST_ROOT} PATH_SUFFIXES lib lib64)
        find_library(_NP_GMOCK_MAIN_LIB gmock_main HINTS ${GTEST_ROOT} $ENV{GTEST_ROOT} PATH_SUFFIXES lib lib64)
        if(NOT _NP_GMOCK_LIB)
          message(FATAL_ERROR "GoogleTest at ${_NP_GTEST_INC} has no libgmock (install gmock-devel)")
        endif()
        add_library(GTest::gmock UNKNOWN IMPORTED)
        set_target_properties(GTest::gmock PROPERTIES IMPORTED_LOCATION ${_NP_GMOCK_LIB}
          INTERFACE_INCLUDE_DIRECTORIES ${_NP_GMOCK_INC} INTERFACE_LINK_LIBRARIES GTest::gtest)
        if(_NP_GMOCK_MAIN_LIB)
          add_library(GTest::gmock_main UNKNOWN IMPORTED)
          set_target_properties(GTest::gmock_main PROPERTIES IMPORTED_LOCATION ${_NP_GMOCK_MAIN_LIB}
            INTERFACE_LINK_LIBRARIES GTest::gmock)
        endif()
      endif()
      _np_note(GoogleTest "yes" "at ${_NP_GTEST_INC} (no version in module mode, GTEST_SKIP and MOCK_METHOD compile)")
    else()
      np_fetch(googletest "${_np_gtest_why}")
      set(INSTALL_GTEST OFF CACHE INTERNAL "")
      FetchContent_MakeAvailable(googletest)
      _np_note(GoogleTest "built" "${_NP_PIN_googletest_VERSION} (pinned, ${_np_gtest_why})")
    endif()
  endif()
endif()

if(NODEPROBE_BUILD_BENCHMARKS)
  np_require(benchmark 1.5 benchmark GoogleBenchmark BENCHMARK_ENABLE_TESTING OFF BENCHMARK_ENABLE_INSTALL OFF)
endif()
