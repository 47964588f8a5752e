// A stop flag that also holds a deadline: quit() is set once `stop` is set or the deadline (none
// until one is given) has passed, by a thread that looks every 20 ms. Hand quit() to every wait
// that reads a stop flag (a Redis call's retries, say): a deadline then holds where the waits
// never look at a clock. The worker's --minutes and the trainer's run.stop_after_minutes use it.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

namespace oppidum::util {

class StopWatch {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StopWatch(const std::atomic<bool>& stop)
      : thread_([this, &stop] {
          while (!done_.load()) {
            const Clock::rep deadline = deadline_.load();
            if (stop.load() || (deadline != kNone && Clock::now().time_since_epoch().count() >=
                                                         deadline)) {
              quit_ = true;
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  ~StopWatch() {
    done_ = true;
    thread_.join();
  }
  StopWatch(const StopWatch&) = delete;
  StopWatch& operator=(const StopWatch&) = delete;

  void set_deadline(Clock::time_point at) { deadline_ = at.time_since_epoch().count(); }
  // After `seconds` from now (0 or less: none; nor past a century, which the clock's count of
  // nanoseconds could not hold: 2e8 minutes was a deadline in the past).
  void set_deadline_in(double seconds) {
    if (seconds > 0 && seconds < 100 * 365.25 * 86400)
      set_deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds)));
  }
  const std::atomic<bool>& quit() const { return quit_; }

 private:
  static constexpr Clock::rep kNone = 0;
  std::atomic<bool> quit_{false}, done_{false};
  std::atomic<Clock::rep> deadline_{kNone};
  std::thread thread_;  // last: it starts once the flags exist
};

}  // namespace oppidum::util
