# Unity ("jumbo") builds: several .cpp files of a target compiled as one
# translation unit, so the headers they share are parsed once per batch
# instead of once per file. scripts/test.sh turns it on (a clean build on the
# 2-core CI machine: 381 s instead of 551 s of ninja wall time); the default
# build and setup.sh keep one translation unit per file (fast incremental
# rebuilds while editing). Correctness never depends on it.
option(NODEPROBE_UNITY "Compile each target's sources in batches (unity build)" OFF)
set(NODEPROBE_UNITY_BATCH 8 CACHE STRING "Source files per unity batch")

# Files whose file-local names (anonymous namespaces, using-aliases) collide
# with a sibling's in one batch; they stay translation units of their own.
# A new collision is a compile error in the unity build (scripts/test.sh),
# fixed by a unique name or by adding the file here.
set(_np_unity_alone
  reports/src/render_html.cpp
  bench/gemm/nvml.cpp
  bench/allreduce/launcher.cpp
  diag/engine/playbook.cpp
  diag/engine/scanner.cpp
  diag/fleet/fleet_phases.cpp
  diag/runner/collect_cmd.cpp
  tests/allreduce/coll_plan_test.cpp
  tests/allreduce/faults_test.cpp
  tests/allreduce/table_test.cpp
  tests/core/size_test.cpp
  tests/setup/setup_accept_test.cpp
  tests/diag/catalogue_test.cpp
  tests/diag/normalise_test.cpp
  tests/gemm/h200_compare_test.cpp)

function(nodeprobe_apply_unity)
  if(NOT NODEPROBE_UNITY)
    return()
  endif()
  list(TRANSFORM _np_unity_alone PREPEND ${CMAKE_SOURCE_DIR}/ OUTPUT_VARIABLE _alone)
  _np_pch_targets(${CMAKE_SOURCE_DIR} _all)
  foreach(_t IN LISTS _all)
    get_target_property(_type ${_t} TYPE)
    if(_type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$" AND NOT _t MATCHES "^nodeprobe-fuzz-")
      list(APPEND _unity ${_t})
    endif()
  endforeach()
  # A source file's properties live in the directory of the target that
  # compiles it: set them there for every unity target (a file not among a
  # target's sources is simply not affected).
  set_source_files_properties(${_alone} TARGET_DIRECTORY ${_unity} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  set_target_properties(${_unity} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${NODEPROBE_UNITY_BATCH})
endfunction()
