# Precompiled headers. Most of the build's time goes into parsing the same
# heavy headers (nlohmann/json, GoogleTest) in every translation unit; one
# precompiled copy for the product and one for the tests is shared by every
# target (REUSE_FROM). A target whose flags make the copy unusable simply
# parses the headers as before: correctness never depends on it.
option(NODEPROBE_PCH "Share precompiled heavy headers across targets" ON)

function(_np_pch_targets dir out)
  get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _np_pch_targets(${_sub} _more)
    list(APPEND _targets ${_more})
  endforeach()
  set(${out} ${_targets} PARENT_SCOPE)
endfunction()

function(nodeprobe_apply_pch)
  if(NOT NODEPROBE_PCH)
    return()
  endif()
  set(_std <string> <vector> <map> <memory> <algorithm> <functional> <sstream> <iostream>)
  add_library(nodeprobe_pch STATIC ${CMAKE_SOURCE_DIR}/cmake/pch_anchor.cpp)
  target_link_libraries(nodeprobe_pch PRIVATE nlohmann_json::nlohmann_json Threads::Threads nodeprobe_warnings)
  target_precompile_headers(nodeprobe_pch PRIVATE <nlohmann/json.hpp> ${_std})
  if(NODEPROBE_BUILD_TESTS)
    add_library(nodeprobe_test_pch STATIC ${CMAKE_SOURCE_DIR}/cmake/pch_anchor.cpp)
    target_link_libraries(nodeprobe_test_pch PRIVATE nlohmann_json::nlohmann_json GTest::gtest GTest::gmock
      Threads::Threads nodeprobe_warnings)
    target_precompile_headers(nodeprobe_test_pch PRIVATE <gtest/gtest.h> <gmock/gmock.h>
      <nlohmann/json.hpp> ${_std})
  endif()
  # An unusable copy must never fail a -Werror build; it only costs time.
  # Some dependencies' pkg-config flags bring -pthread (which defines
  # _REENTRANT) and others do not: compile everything with it so one copy fits.
  target_compile_options(nodeprobe_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wno-error=invalid-pch> $<$<COMPILE_LANGUAGE:CXX>:-pthread>)
  _np_pch_targets(${CMAKE_SOURCE_DIR} _all)
  foreach(_t IN LISTS _all)
    get_target_property(_type ${_t} TYPE)
    if(NOT _type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$" OR _t MATCHES "_pch$" OR _t MATCHES "^nodeprobe-fuzz-")
      continue()
    endif()
    get_target_property(_srcs ${_t} SOURCES)
    set(_has_cxx FALSE)
    foreach(_s IN LISTS _srcs)
      if(_s MATCHES "\\.(cpp|cc)$")
        set(_has_cxx TRUE)
        # A file with its own flags (e.g. -O3 on a hot loop) must not take a
        # header compiled with other ones: GCC 12 can even crash on it.
        set(_abs ${_s})
        if(NOT IS_ABSOLUTE ${_abs})
          get_target_property(_tdir ${_t} SOURCE_DIR)
          set(_abs ${_tdir}/${_s})
        endif()
        get_source_file_property(_own ${_abs} TARGET_DIRECTORY ${_t} COMPILE_OPTIONS)
        if(_own)
          set_source_files_properties(${_abs} TARGET_DIRECTORY ${_t} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
        endif()
      endif()
    endforeach()
    if(NOT _has_cxx)
      continue()
    endif()
    target_compile_options(${_t} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wno-error=invalid-pch> $<$<COMPILE_LANGUAGE:CXX>:-pthread>)
    get_target_property(_dir ${_t} SOURCE_DIR)
    if(_dir MATCHES "^${CMAKE_SOURCE_DIR}/tests" AND TARGET nodeprobe_test_pch)
      target_link_libraries(${_t} PRIVATE GTest::gtest GTest::gmock Threads::Threads)
      target_precompile_headers(${_t} REUSE_FROM nodeprobe_test_pch)
    else()
      target_link_libraries(${_t} PRIVATE nlohmann_json::nlohmann_json Threads::Threads)
      target_precompile_headers(${_t} REUSE_FROM nodeprobe_pch)
    endif()
  endforeach()
endfunction()
