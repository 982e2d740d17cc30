// The host interface's QP contexts and state machine (QpTable, qp_table.h) driven directly,
// with no SystemC: what CREATE_QP refuses, MODIFY_QP's attributes and clamps, what each state
// change tells the engines (reset, flush), RESET keeping the QP's resources, doorbells taken or
// ignored; an SRQ's rules (an RQ only, no state, not destroyed while a QP uses it).
#include "models/rnic/host_if/qp_table.h"

#include <gtest/gtest.h>

#include "models/rnic/abi/regs.h"

namespace rnic {
namespace {

abi::CreateQp create(uint32_t qpn) {
  abi::CreateQp c;
  c.qpn = qpn;
  c.pd = 4;
  c.send_cqn = 1;
  c.recv_cqn = 2;
  c.sq_depth = 16;
  c.rq_depth = 32;
  return c;
}
bool cqs_1_2(uint32_t n) { return n == 1 || n == 2; }

TEST(QpTable, CreateChecksNumberCqsAndDepths) {
  QpTable t(4, 64, 8, 4);
  abi::CreateQp c = create(4);
  EXPECT_FALSE(t.create(c, cqs_1_2));  // out of range
  c = create(1);
  c.recv_cqn = 3;
  EXPECT_FALSE(t.create(c, cqs_1_2));  // CQ 3 not in use
  c = create(1);
  c.sq_depth = 0;
  EXPECT_FALSE(t.create(c, cqs_1_2));
  c = create(1);
  c.rq_depth = 65;
  EXPECT_FALSE(t.create(c, cqs_1_2));
  EXPECT_FALSE(t.valid(1));
  ASSERT_TRUE(t.create(create(1), cqs_1_2));
  EXPECT_FALSE(t.create(create(1), cqs_1_2));  // in use
  const QpTable::Qp& q = t.at(1);
  EXPECT_EQ(q.ctx.state, abi::kQpReset);
  EXPECT_EQ(q.ctx.pd, 4u);
  EXPECT_EQ(q.ctx.ird, 8u);
  EXPECT_EQ(q.ctx.ord, 4u);
  EXPECT_EQ(q.depth(false), 16u);
  EXPECT_EQ(q.depth(true), 32u);
  ASSERT_TRUE(t.create(create(2), cqs_1_2));
  EXPECT_NE(t.at(2).ctx.epoch, q.ctx.epoch);
}

TEST(QpTable, ModifySetsWhatItNamesAndClampsIrdOrd) {
  QpTable t(4, 64, 8, 4);
  ASSERT_TRUE(t.create(create(1), cqs_1_2));
  abi::ModifyQp m;
  m.qpn = 1;
  m.set = abi::ModifyQp::kPeerQpn | abi::ModifyQp::kIrd | abi::ModifyQp::kOrd;
  m.peer_qpn = 9;
  m.ird = 100;
  m.ord = 0;
  m.peer_mac = {1, 2, 3, 4, 5, 6};  // not named: not set
  QpTable::Change ch{true, true};
  ASSERT_TRUE(t.modify(m, &ch));
  EXPECT_FALSE(ch.reset || ch.flush);
  EXPECT_EQ(t.at(1).ctx.peer_qpn, 9u);
  EXPECT_EQ(t.at(1).ctx.ird, 8u);
  EXPECT_EQ(t.at(1).ctx.ord, 1u);
  EXPECT_EQ(t.at(1).ctx.peer_mac, MacAddr{});
  m.qpn = 3;
  EXPECT_FALSE(t.modify(m, &ch));  // not in use
}

// The connection role travels in the access word's bits 8-9 and is set only when named.
TEST(QpTable, TheConnectionRoleCrossesTheCommandAndIsSetOnlyWhenNamed) {
  QpTable t(4, 64, 8, 4);
  ASSERT_TRUE(t.create(create(1), cqs_1_2));
  abi::ModifyQp m;
  m.qpn = 1;
  m.set = abi::ModifyQp::kAccess;
  m.access = 0x5A;
  m.role = abi::kRolePassive;  // not named: not set
  const auto words = m.encode();
  const abi::ModifyQp d = abi::ModifyQp::decode(words.data());
  EXPECT_EQ(d.access, 0x5A);
  EXPECT_EQ(d.role, abi::kRolePassive);
  QpTable::Change ch;
  ASSERT_TRUE(t.modify(d, &ch));
  EXPECT_EQ(t.at(1).ctx.role, abi::kRoleByRule);
  m.set = abi::ModifyQp::kRole;
  m.role = abi::kRoleActive;
  ASSERT_TRUE(t.modify(abi::ModifyQp::decode(m.encode().data()), &ch));
  EXPECT_EQ(t.at(1).ctx.role, abi::kRoleActive);
  EXPECT_EQ(t.at(1).ctx.access, 0x5A);
}

TEST(QpTable, ErrorFlushesOnceAndResetKeepsResources) {
  QpTable t(4, 64, 8, 4);
  ASSERT_TRUE(t.create(create(1), cqs_1_2));
  EXPECT_FALSE(t.set_state(1, abi::kQpRts).flush);
  uint64_t first = 0;
  ASSERT_TRUE(t.doorbell(1, false, 3, &first));
  QpTable::Change ch = t.set_state(1, abi::kQpError);
  EXPECT_TRUE(ch.flush);
  EXPECT_FALSE(ch.reset);
  EXPECT_FALSE(t.set_state(1, abi::kQpError).flush);  // already in ERROR
  const uint64_t epoch = t.at(1).ctx.epoch;
  ch = t.set_state(1, abi::kQpReset);
  EXPECT_TRUE(ch.reset);
  const QpTable::Qp& q = t.at(1);
  EXPECT_TRUE(q.ctx.valid);
  EXPECT_EQ(q.ctx.state, abi::kQpReset);
  EXPECT_EQ(q.ctx.pd, 4u);
  EXPECT_EQ(q.ctx.scq, 1u);
  EXPECT_EQ(q.depth(true), 32u);
  EXPECT_EQ(q.db[0], 0u);  // the doorbell counts start over
  EXPECT_NE(q.ctx.epoch, epoch);
  EXPECT_TRUE(t.destroy(1));
  EXPECT_FALSE(t.valid(1));
  EXPECT_FALSE(t.destroy(1));
}

TEST(QpTable, DoorbellsMustBeNewerAndFitTheWindowOrRing) {
  QpTable t(4, 64, 8, 4);
  ASSERT_TRUE(t.create(create(1), cqs_1_2));
  uint64_t first = 99;
  EXPECT_FALSE(t.doorbell(1, false, 0, &first));                      // not newer
  EXPECT_FALSE(t.doorbell(1, false, reg::kWindowSlots + 1, &first));  // more than the window
  ASSERT_TRUE(t.doorbell(1, false, reg::kWindowSlots, &first));
  EXPECT_EQ(first, 0u);
  ASSERT_TRUE(t.doorbell(1, false, reg::kWindowSlots + 2, &first));
  EXPECT_EQ(first, uint64_t(reg::kWindowSlots));
  EXPECT_TRUE(t.doorbell(1, true, 1, &first));  // the RQ counts on its own
  abi::CreateQp r = create(2);
  r.flags = abi::CreateQp::kQpHostRings;
  ASSERT_TRUE(t.create(r, cqs_1_2));
  EXPECT_TRUE(t.doorbell(2, false, 16, &first));  // a ring holds its depth
  EXPECT_FALSE(t.doorbell(2, true, 33, &first));
}

TEST(QpTable, SrqHasAnRqOnlyAndOutlivesItsQps) {
  QpTable t(8, 64, 8, 4);
  using C = abi::CreateQp;
  abi::CreateQp srq;
  srq.qpn = 5;
  srq.pd = 4;
  srq.rq_depth = 64;
  srq.flags = C::kQpSrq;
  srq.sq_depth = 1;
  EXPECT_FALSE(t.create(srq, cqs_1_2));  // an SRQ has no SQ
  srq.sq_depth = 0;
  srq.rq_depth = 0;
  EXPECT_FALSE(t.create(srq, cqs_1_2));  // nor no RQ
  srq.rq_depth = 64;
  ASSERT_TRUE(t.create(srq, cqs_1_2));  // and needs no CQ
  EXPECT_TRUE(t.at(5).ctx.is_srq);
  EXPECT_EQ(t.at(5).ctx.rcq, QpTable::kNoCq);

  abi::CreateQp qp = create(1);
  qp.flags = C::kQpUsesSrq;
  qp.srq = 5;
  EXPECT_FALSE(t.create(qp, cqs_1_2));  // an RQ of its own too
  qp.rq_depth = 0;
  qp.srq = 2;
  EXPECT_FALSE(t.create(qp, cqs_1_2));  // no SRQ 2
  qp.srq = 5;
  qp.pd = 7;
  EXPECT_FALSE(t.create(qp, cqs_1_2));  // another PD's SRQ
  qp.pd = 4;
  ASSERT_TRUE(t.create(qp, cqs_1_2));
  EXPECT_EQ(t.at(1).ctx.srq, 5u);
  abi::CreateQp on_qp = create(2);
  on_qp.flags = C::kQpUsesSrq;
  on_qp.rq_depth = 0;
  on_qp.srq = 1;
  EXPECT_FALSE(t.create(on_qp, cqs_1_2));  // a QP is not an SRQ

  abi::ModifyQp m;
  m.qpn = 5;
  m.set = abi::ModifyQp::kState;
  m.state = abi::kQpRtr;
  QpTable::Change ch;
  EXPECT_FALSE(t.modify(m, &ch));  // an SRQ is never connected
  uint64_t first = 0;
  EXPECT_FALSE(t.doorbell(5, false, 1, &first));  // nor sends
  EXPECT_TRUE(t.doorbell(5, true, 8, &first));

  m.qpn = 1;
  m.state = abi::kQpReset;
  ASSERT_TRUE(t.modify(m, &ch));
  EXPECT_EQ(t.at(1).ctx.srq, 5u);  // RESET keeps the binding
  EXPECT_FALSE(t.destroy(5));      // QP 1 still takes its WQEs
  ASSERT_TRUE(t.destroy(1));
  EXPECT_TRUE(t.destroy(5));
}

}  // namespace
}  // namespace rnic
