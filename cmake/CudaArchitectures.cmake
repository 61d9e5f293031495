# Default CUDA architectures for nodeprobe's own kernels, set before
# enable_language(CUDA). One real (SASS) architecture per major the toolkit
# supports -- the lowest of each major, whose code runs on every later minor
# of that major -- plus PTX of the newest for GPUs newer than the toolkit.
# nvcc thus compiles each kernel once per major, which keeps the build short.
#
# Override with -DNODEPROBE_CUDA_ARCHS="80-real;90" (or CMAKE_CUDA_ARCHITECTURES).
set(NODEPROBE_CUDA_ARCHS "" CACHE STRING
  "CUDA architectures for nodeprobe's kernels (default: one per supported major, from nvcc --list-gpu-arch)")

if(NOT NODEPROBE_CUDA_ARCHS STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES "${NODEPROBE_CUDA_ARCHS}")
elseif(NOT CMAKE_CUDA_ARCHITECTURES)
  set(_np_archs "")
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-arch
    OUTPUT_VARIABLE _np_out RESULT_VARIABLE _np_rc ERROR_QUIET)
  if(_np_rc EQUAL 0)
    string(REGEX MATCHALL "compute_[0-9]+" _np_list "${_np_out}")
    set(_np_majors "")
    foreach(_a IN LISTS _np_list)
      string(REPLACE "compute_" "" _n "${_a}")
      math(EXPR _major "${_n} / 10")
      if(NOT DEFINED _np_min_${_major} OR _n LESS _np_min_${_major})
        set(_np_min_${_major} ${_n})
      endif()
      list(APPEND _np_majors ${_major})
    endforeach()
    list(REMOVE_DUPLICATES _np_majors)
    list(SORT _np_majors COMPARE NATURAL)
    list(LENGTH _np_majors _np_count)
    set(_i 0)
    foreach(_major IN LISTS _np_majors)
      math(EXPR _i "${_i} + 1")
      if(_i EQUAL _np_count)
        list(APPEND _np_archs "${_np_min_${_major}}")        # SASS + PTX
      else()
        list(APPEND _np_archs "${_np_min_${_major}}-real")   # SASS only
      endif()
    endforeach()
  endif()
  if(NOT _np_archs)
    set(_np_archs "70-real;80-real;90")  # nvcc too old for --list-gpu-arch
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${_np_archs}")
endif()
