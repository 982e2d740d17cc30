#include "sim/traffic/bw_peak.h"

#include <algorithm>
#include <limits>

namespace rnic::traffic {

// The slope from hull point (i, posted[i]) to the query (j + 1, D[j]) is the window's time per
// message. The minimum over points left of the query lies on their upper convex hull (every
// point is on or below the line of least slope through the query), where the slopes to the query
// fall and then rise: a binary search finds the least.
double best_time_per_message(const std::vector<double>& posted,
                             const std::vector<double>& completed) {
  const size_t n = std::min(posted.size(), completed.size());
  double best = std::numeric_limits<double>::infinity();
  double done = -std::numeric_limits<double>::infinity();
  std::vector<size_t> hull;
  auto y = [&](size_t i) { return posted[i]; };
  // b lies on or below the segment a-c (a < b < c in x).
  auto below = [&](size_t a, size_t b, size_t c) {
    return (double(b) - double(a)) * (y(c) - y(a)) - (y(b) - y(a)) * (double(c) - double(a)) >= 0;
  };
  for (size_t j = 0; j < n; ++j) {
    while (hull.size() >= 2 && below(hull[hull.size() - 2], hull.back(), j)) hull.pop_back();
    hull.push_back(j);
    done = std::max(done, completed[j]);
    const double qx = double(j + 1), qy = done;
    auto slope = [&](size_t k) { return (qy - y(hull[k])) / (qx - double(hull[k])); };
    size_t lo = 0,
           hi = hull.size() - 1;  // the least slope is at the first k where it stops falling
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (slope(mid + 1) < slope(mid))
        lo = mid + 1;
      else
        hi = mid;
    }
    best = std::min(best, slope(lo));
  }
  return best;
}

}  // namespace rnic::traffic
