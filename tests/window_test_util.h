// The replay window's settings (the run config's training section) for tests, by their sizes.
#pragma once

#include "trainer/replay_window.h"

namespace oppidum::trainer {

inline WindowSettings window_of(int min, int max, double growth) {
  WindowSettings w;
  w.window_min = min;
  w.window_max = max;
  w.window_growth = growth;
  return w;
}

}  // namespace oppidum::trainer
