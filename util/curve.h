// A curve of any number of points in bounded memory, for the charts of a run (the page's summary,
// `report`): points come in order of x (a step, a generation), each with N values and a weight
// (the steps a train row's mean losses stand for, the games of a chunk), and are kept as at most
// `capacity` bins of consecutive points. When the bins are full, neighbours merge pairwise and
// each bin takes twice as many points from then on, so a bin holds the weighted sums of a run of
// whole points. points(max) draws at most `max` of them: consecutive bins in groups of the same
// count, each the weighted mean of its points' x and values. With no more points than `capacity`
// that is exactly the mean of each group of ceil(n / max) consecutive points.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace oppidum::util {

template <std::size_t N>
class BoundedCurve {
 public:
  struct Point {
    double x = 0;
    std::array<double, N> y{};
    double weight = 0;  // the sum of the weights of the points it stands for
  };

  BoundedCurve() = default;
  explicit BoundedCurve(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 2)) {}

  // A point; one whose weight is not above 0 or any number not finite is left out.
  void add(double x, const std::array<double, N>& y, double weight = 1.0) {
    if (!(weight > 0) || !std::isfinite(weight) || !std::isfinite(x)) return;
    for (const double v : y)
      if (!std::isfinite(v)) return;
    if (bins_.empty() || bins_.back().count >= per_bin_) {
      if (bins_.size() == capacity_) merge_pairs();
      bins_.push_back({});
    }
    Bin& b = bins_.back();
    b.weight += weight;
    b.wx += weight * x;
    for (std::size_t i = 0; i < N; ++i) b.wy[i] += weight * y[i];
    ++b.count;
    weight_ += weight;
    ++points_;
  }

  std::size_t size() const { return points_; }  // the points added
  double weight() const { return weight_; }      // their weights' sum

  // At most `max_points` (at least 1) points, oldest first.
  std::vector<Point> points(std::size_t max_points) const {
    max_points = std::max<std::size_t>(max_points, 1);
    const std::size_t group = (bins_.size() + max_points - 1) / max_points;
    std::vector<Point> out;
    for (std::size_t i = 0; i < bins_.size(); i += group) {
      Bin sum;
      for (std::size_t k = i; k < std::min(bins_.size(), i + group); ++k) sum += bins_[k];
      Point p;
      p.x = sum.wx / sum.weight;
      for (std::size_t v = 0; v < N; ++v) p.y[v] = sum.wy[v] / sum.weight;
      p.weight = sum.weight;
      out.push_back(p);
    }
    return out;
  }

 private:
  struct Bin {
    double weight = 0, wx = 0;
    std::array<double, N> wy{};
    std::size_t count = 0;  // the points in it
    Bin& operator+=(const Bin& o) {
      weight += o.weight, wx += o.wx, count += o.count;
      for (std::size_t i = 0; i < N; ++i) wy[i] += o.wy[i];
      return *this;
    }
  };

  void merge_pairs() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < bins_.size(); i += 2, ++kept) {
      Bin b = bins_[i];
      if (i + 1 < bins_.size()) b += bins_[i + 1];
      bins_[kept] = b;
    }
    bins_.resize(kept);
    per_bin_ *= 2;
  }

  std::size_t capacity_ = 4096;
  std::size_t per_bin_ = 1;  // points a bin takes before the next opens
  std::vector<Bin> bins_;
  double weight_ = 0;
  std::size_t points_ = 0;
};

}  // namespace oppidum::util
