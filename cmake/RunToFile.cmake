# cmake -DEXE=program -DARG=--help-man -DOUT=file -P RunToFile.cmake: the
# program's output into OUT (only when it exits 0, so a failure never leaves
# a half-written man page behind).
execute_process(COMMAND ${EXE} ${ARG} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${EXE} ${ARG} failed: ${rc}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
