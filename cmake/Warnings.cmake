# Warnings for our own targets only (never for third-party headers).
add_library(nodeprobe_warnings INTERFACE)
target_compile_options(nodeprobe_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual -Wconversion
    -Wsign-conversion -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough>)
if(NODEPROBE_WERROR)
  target_compile_options(nodeprobe_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
