// ibv_modify_qp's transition rules: the connection path as rdma-core RC programs (perftest)
// set it, the iWARP minimum, every illegal transition, missing and disallowed attributes.
#include "models/host/verbs/qp_state.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace rnic {
namespace {

constexpr int kInitMask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRtsMask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;

TEST(QpState, RdmaCoreConnectionPath) {
  EXPECT_EQ(qp_transition_check(IBV_QPS_RESET, IBV_QPS_INIT, kInitMask), 0);
  EXPECT_EQ(qp_transition_check(IBV_QPS_INIT, IBV_QPS_RTR, kRtrMask), 0);
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTR, IBV_QPS_RTS, kRtsMask), 0);
}

TEST(QpState, IwarpMinimum) {
  EXPECT_EQ(qp_transition_check(IBV_QPS_RESET, IBV_QPS_INIT,
                                IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
            0);
  EXPECT_EQ(
      qp_transition_check(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN),
      0);
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_STATE), 0);
}

TEST(QpState, RequiredAttributesAreRequired) {
  EXPECT_EQ(qp_transition_check(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS),
            EINVAL);
  EXPECT_EQ(qp_transition_check(IBV_QPS_INIT, IBV_QPS_RTR, kRtrMask & ~IBV_QP_AV), EINVAL);
  EXPECT_EQ(qp_transition_check(IBV_QPS_INIT, IBV_QPS_RTR, kRtrMask & ~IBV_QP_DEST_QPN), EINVAL);
}

TEST(QpState, AttributesOutsideTheTransitionAreRefused) {
  EXPECT_EQ(qp_transition_check(IBV_QPS_RESET, IBV_QPS_INIT, kInitMask | IBV_QP_QKEY),
            EINVAL);  // UD only
  EXPECT_EQ(qp_transition_check(IBV_QPS_RESET, IBV_QPS_INIT, kInitMask | IBV_QP_DEST_QPN), EINVAL);
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTR, IBV_QPS_RTS, kRtsMask | IBV_QP_DEST_QPN), EINVAL);
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTS, IBV_QPS_ERR, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
}

TEST(QpState, IllegalTransitions) {
  const ibv_qp_state all[] = {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
                              IBV_QPS_SQD,   IBV_QPS_SQE,  IBV_QPS_ERR};
  // The legal ones, with no attributes beyond what each requires.
  auto legal = [](ibv_qp_state a, ibv_qp_state b) {
    if (b == IBV_QPS_RESET || b == IBV_QPS_ERR) return true;
    return (a == IBV_QPS_RESET && b == IBV_QPS_INIT) ||
           (a == IBV_QPS_INIT && (b == IBV_QPS_INIT || b == IBV_QPS_RTR)) ||
           (a == IBV_QPS_RTR && b == IBV_QPS_RTS) ||
           (a == IBV_QPS_RTS && (b == IBV_QPS_RTS || b == IBV_QPS_SQD)) ||
           (a == IBV_QPS_SQD && (b == IBV_QPS_SQD || b == IBV_QPS_RTS)) ||
           (a == IBV_QPS_SQE && b == IBV_QPS_RTS);
  };
  auto needs = [](ibv_qp_state a, ibv_qp_state b) {
    if (a == IBV_QPS_RESET && b == IBV_QPS_INIT) return IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    if (a == IBV_QPS_INIT && b == IBV_QPS_RTR) return IBV_QP_AV | IBV_QP_DEST_QPN;
    return 0;
  };
  for (auto a : all)
    for (auto b : all)
      EXPECT_EQ(qp_transition_check(a, b, IBV_QP_STATE | needs(a, b)), legal(a, b) ? 0 : EINVAL)
          << "from " << a << " to " << b;
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTS, ibv_qp_state(9), IBV_QP_STATE), EINVAL);
}

TEST(QpState, AttributesWithoutAStateChange) {
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTS, IBV_QPS_RTS, IBV_QP_ACCESS_FLAGS), 0);
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTR, IBV_QPS_RTR, IBV_QP_ACCESS_FLAGS),
            EINVAL);  // no RTR -> RTR
  // Without IBV_QP_STATE the next state is ignored: RTS -> RTS rules apply.
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTS, IBV_QPS_RESET, IBV_QP_ACCESS_FLAGS), 0);
  EXPECT_EQ(qp_transition_check(IBV_QPS_RTS, IBV_QPS_RESET, IBV_QP_TIMEOUT),
            EINVAL);  // not in RTS -> RTS
}

}  // namespace
}  // namespace rnic
