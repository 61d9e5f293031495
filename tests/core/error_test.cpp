#include "nodeprobe/error.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace nodeprobe {
namespace {

TEST(ApiError, CheckMacroCarriesCallCodeAndPlace) {
  try {
    NP_CHECK_ERRNO(::open("/definitely/not/here", O_RDONLY));
    FAIL() << "no throw";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.info().api, "posix");
    EXPECT_EQ(e.info().code, ENOENT);
    EXPECT_EQ(e.info().code_name, "ENOENT");
    EXPECT_EQ(e.info().file, "error_test.cpp");
    EXPECT_GT(e.info().line, 0);
    EXPECT_EQ(e.info().host, process_hostname());
    const std::string what = e.what();
    EXPECT_NE(what.find("::open(\"/definitely/not/here\", O_RDONLY)"), std::string::npos);
    EXPECT_NE(what.find("ENOENT (2)"), std::string::npos);
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST(ApiError, ErrnumVariant) {
  EXPECT_THROW(NP_CHECK_ERRNUM(EINVAL), ApiError);
  EXPECT_NO_THROW(NP_CHECK_ERRNUM(0));
  EXPECT_NO_THROW(NP_CHECK_ERRNO(0));
}

TEST(ApiError, RankFromLauncherEnvironment) {
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  EXPECT_EQ(process_rank(), 3);
  ::setenv("OMPI_COMM_WORLD_RANK", "x", 1);
  ::unsetenv("PMIX_RANK");
  ::unsetenv("PMI_RANK");
  ::unsetenv("SLURM_PROCID");
  EXPECT_EQ(process_rank(), -1);
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  try {
    ::setenv("SLURM_PROCID", "7", 1);
    throw_api_error("mpi", 5, "MPI_ERR_COMM", "invalid communicator", "MPI_Bcast(...)", "x.cpp", 9);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.info().rank, 7);
    EXPECT_NE(std::string(e.what()).find("rank 7"), std::string::npos);
  }
  ::unsetenv("SLURM_PROCID");
}

TEST(ErrnoName, KnownAndUnknown) {
  EXPECT_EQ(errno_name(ENOMEM), "ENOMEM");
  EXPECT_EQ(errno_name(EMFILE), "EMFILE");
  EXPECT_EQ(errno_name(99999), "E99999");
}

}  // namespace
}  // namespace nodeprobe
