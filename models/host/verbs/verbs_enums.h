// rdma-core's enums and structs (Debian's libibverbs-dev, <infiniband/verbs.h>) are the verbs
// library's own (DESIGN.md §5; docs/decisions.md, "rdma-core's header"), plus the few codes of
// rnicsim's extensions, named RNIC_* and taken from the values rdma-core leaves to providers.
#pragma once

#include <infiniband/verbs.h>

// A fast registration (rnic_alloc_fast_mr; rnic_wr_fast_reg sets its fields in ibv_send_wr).
#define RNIC_WR_FAST_REG_MR IBV_WR_DRIVER1
// A fast registration completed (the kernel's IB_WC_REG_MR).
#define RNIC_WC_FAST_REG_MR IBV_WC_DRIVER1
