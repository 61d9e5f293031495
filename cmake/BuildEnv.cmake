# Writes BUILD/nodeprobe-env.sh: the toolchain, CMake and MPI launcher this
# build was configured with, for everything that runs later outside CMake:
# scripts/test.sh sources it before ctest, benchmark scripts take the MPI
# launcher from it, and a person rebuilding or configuring by hand runs
# `. build/nodeprobe-env.sh` first (RHEL 8's default g++ is GCC 8, and its
# Open MPI is not on PATH).
function(nodeprobe_write_build_env)
  set(_path "")
  get_filename_component(_cmake_dir "${CMAKE_COMMAND}" DIRECTORY)
  list(APPEND _path "${_cmake_dir}")
  set(_lines "")
  string(APPEND _lines "export CC='${CMAKE_C_COMPILER}'\n")
  string(APPEND _lines "export CXX='${CMAKE_CXX_COMPILER}'\n")
  if(CMAKE_CUDA_COMPILER)
    set(_host "${CMAKE_CUDA_HOST_COMPILER}")
    if(NOT _host)
      set(_host "${CMAKE_CXX_COMPILER}")
    endif()
    string(APPEND _lines "export CUDACXX='${CMAKE_CUDA_COMPILER}'\n")
    string(APPEND _lines "export CUDAHOSTCXX='${_host}'\n")
  endif()
  if(NODEPROBE_HAVE_MPI AND MPIEXEC_EXECUTABLE)
    string(APPEND _lines "export NODEPROBE_MPIRUN='${MPIEXEC_EXECUTABLE}'\n")
    get_filename_component(_mpi_dir "${MPIEXEC_EXECUTABLE}" DIRECTORY)
    list(APPEND _path "${_mpi_dir}")
  endif()
  list(REMOVE_DUPLICATES _path)
  string(REPLACE ";" ":" _path "${_path}")
  string(APPEND _lines "export PATH='${_path}':\"$PATH\"\n")
  file(WRITE "${CMAKE_BINARY_DIR}/nodeprobe-env.sh"
    "# nodeprobe build environment (${CMAKE_BINARY_DIR}), written by CMake at configure time:\n"
    "# the compiler, CMake and MPI launcher of this build. Source it before building, testing or\n"
    "# configuring by hand:  . ${CMAKE_BINARY_DIR}/nodeprobe-env.sh\n"
    "${_lines}")
endfunction()
