# Version and git description, baked into every binary and every report.
set(NODEPROBE_GIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE NODEPROBE_GIT OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE _git_rc)
  if(NOT _git_rc EQUAL 0 OR NODEPROBE_GIT STREQUAL "")
    set(NODEPROBE_GIT "unknown")
  endif()
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/version.h.in
  ${CMAKE_BINARY_DIR}/generated/nodeprobe/version.h @ONLY)
