// The peak bandwidth of a bandwidth test (perftest's "BW peak") from each message's post and
// completion time, in O(n log n).
//
// perftest takes the best, over windows of messages i..j in posting order ending at a signaled
// one, of (j - i + 1) messages per (tcompleted[j] - tposted[i]). With several QPs or unsignaled
// WRs that can exceed the wire: messages of the window on other QPs may complete after j, yet
// count. rnicsim ends a window when every message up to j has completed (D[j], the latest
// completion among messages 0..j), so the messages counted were all carried between tposted[i]
// and D[j] and the peak never exceeds the wire (docs/verbs.md).
#pragma once

#include <vector>

namespace rnic::traffic {

// min over i <= j of (D[j] - posted[i]) / (j - i + 1), D[j] = max(completed[0..j]): the best time
// per message. posted must not decrease; completed[k] >= posted[k].
double best_time_per_message(const std::vector<double>& posted,
                             const std::vector<double>& completed);

}  // namespace rnic::traffic
