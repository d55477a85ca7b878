/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault points for the debug lane, compiled in only with KVERBS_FAULTS=y
 * (scripts/check-debug builds so): places where a test may hold a
 * handler up, as an interrupt or a preempted vCPU would, to show that
 * nothing is touched after the point where its waiter may free it.
 * Documentation/testing.rst, "Completions as a NIC may deliver them".
 */
#ifndef _KVERBS_FAULT_H
#define _KVERBS_FAULT_H

enum kverbs_fault {
	/* A drain marker's handler, right after its waiter may run. */
	KVERBS_FAULT_MARKER_DONE,
	KVERBS_FAULT_MAX,
};

#ifdef KVERBS_FAULTS
void kverbs_fault_stall(enum kverbs_fault where);
#else
static inline void kverbs_fault_stall(enum kverbs_fault where)
{
}
#endif

#endif /* _KVERBS_FAULT_H */
