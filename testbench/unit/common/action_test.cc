// Action (models/common/action.h): a callable that fits is kept inside, a larger one on the
// heap; either way it runs, moves and is destroyed exactly once.
#include "models/common/action.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <utility>

namespace rnic {
namespace {

// Counts live copies through a shared counter.
struct Tracked {
  std::shared_ptr<int> live;
  explicit Tracked(std::shared_ptr<int> l) : live(std::move(l)) { ++*live; }
  Tracked(const Tracked& o) : live(o.live) { ++*live; }
  Tracked(Tracked&& o) noexcept : live(o.live) { ++*live; }
  ~Tracked() { --*live; }
};

TEST(Action, SmallAndLargeCallablesRunMoveAndDieOnce) {
  for (const bool large : {false, true}) {
    auto live = std::make_shared<int>(0);
    int runs = 0;
    {
      Action a;
      EXPECT_FALSE(a);
      if (large) {
        std::array<char, Action::kInline> pad{};
        a = Action([t = Tracked(live), &runs, pad] { runs += 1 + pad[0]; });
      } else {
        a = Action([t = Tracked(live), &runs] { ++runs; });
      }
      EXPECT_TRUE(a);
      EXPECT_EQ(*live, 1);
      Action b(std::move(a));
      EXPECT_FALSE(a);
      EXPECT_EQ(*live, 1) << (large ? "large" : "small");
      b();
      b();
      EXPECT_EQ(runs, 2);
      Action c;
      c = std::move(b);
      c();
      EXPECT_EQ(runs, 3);
      c.reset();
      EXPECT_EQ(*live, 0);
      c = Action([t = Tracked(live)] {});
      EXPECT_EQ(*live, 1);
    }
    EXPECT_EQ(*live, 0) << (large ? "large" : "small") << ": a copy outlived its action";
  }
}

}  // namespace
}  // namespace rnic
