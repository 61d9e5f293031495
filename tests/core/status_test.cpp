#include "nodeprobe/status.h"

#include <gtest/gtest.h>

namespace nodeprobe {
namespace {

using S = Status;

TEST(Status, StringRoundTrip) {
  for (S s : {S::kPass, S::kWarn, S::kFail, S::kSkip, S::kError, S::kTimeout})
    EXPECT_EQ(status_from_string(to_string(s)), s);
  EXPECT_EQ(status_from_string("bogus"), S::kUnknown);
  EXPECT_EQ(to_string(S::kUnknown), "unknown");
}

TEST(Status, AggregationRule) {
  EXPECT_EQ(aggregate({}), S::kSkip);
  EXPECT_EQ(aggregate({S::kSkip, S::kSkip}), S::kSkip);
  EXPECT_EQ(aggregate({S::kPass, S::kSkip}), S::kPass);
  EXPECT_EQ(aggregate({S::kPass, S::kWarn, S::kSkip}), S::kWarn);
  EXPECT_EQ(aggregate({S::kWarn, S::kFail, S::kPass}), S::kFail);
  EXPECT_EQ(aggregate({S::kFail, S::kError}), S::kError);
  EXPECT_EQ(aggregate({S::kWarn, S::kTimeout}), S::kError);
  EXPECT_EQ(aggregate({S::kPass, S::kUnknown}), S::kError);
  EXPECT_EQ(aggregate({S::kWarn}), S::kWarn);
  EXPECT_EQ(aggregate({S::kSkip, S::kWarn}), S::kWarn);
}

TEST(Status, ExitCodes) {
  EXPECT_EQ(exit_code_for(S::kPass), 0);
  EXPECT_EQ(exit_code_for(S::kWarn), 0);
  EXPECT_EQ(exit_code_for(S::kFail), 1);
  EXPECT_EQ(exit_code_for(S::kError), 2);
  EXPECT_EQ(exit_code_for(S::kUnknown), 2);
  EXPECT_EQ(exit_code_for(S::kSkip), 77);
  EXPECT_EQ(exit_code_for(S::kTimeout), 124);
  for (S s : {S::kFail, S::kError, S::kSkip, S::kTimeout})
    EXPECT_EQ(status_for_exit_code(exit_code_for(s)), s);
  EXPECT_EQ(status_for_exit_code(0), S::kPass);
  EXPECT_EQ(status_for_exit_code(139), S::kError);
}

}  // namespace
}  // namespace nodeprobe
