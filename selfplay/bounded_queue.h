// A closable, bounded multi-producer multi-consumer queue: producers block while it is full
// (backpressure from a slow consumer), consumers block while it is empty; close() wakes everyone:
// push then returns false and pop drains what is left before returning nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace oppidum::selfplay {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // Blocks while full; false (item dropped) once the queue is closed.
  bool push(T item) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Blocks while empty and open; nothing once closed and drained.
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // As pop(), but gives up at `deadline`: then nothing, with `timed_out` set (else cleared).
  template <class Clock, class Duration>
  std::optional<T> pop_until(const std::chrono::time_point<Clock, Duration>& deadline,
                             bool& timed_out) {
    std::unique_lock<std::mutex> lock(mutex_);
    timed_out = !not_empty_.wait_until(lock, deadline, [&] { return closed_ || !items_.empty(); });
    if (timed_out || items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  // Opens a closed, drained queue again (for a producer and consumer that restart).
  void reopen() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = false;
  }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace oppidum::selfplay
