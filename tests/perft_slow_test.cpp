// Deep perft: label `slow`, left out of the default test run.
#include <gtest/gtest.h>

#include "games/mg/position.h"
#include "games/perft.h"

namespace oppidum {
namespace {

TEST(MgPerftSlow, DepthSixFromTheStart) {
  EXPECT_EQ(perft(mg::Position::initial(), 6, true), 31422048u);
  EXPECT_EQ(perft(mg::Position::initial(), 6, false), 31422048u);
}

}  // namespace
}  // namespace oppidum
