/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's probe schedule: which peer a node probes in a time slot.
 *
 * Every node of a fleet holds the same peer list (n nodes, node i at index
 * i) and counts slots on the same clock (wall time / slot length, NTP
 * keeps the nodes within a fraction of a slot). In slot s node i probes
 * node (i + k) mod n with one k in 1..n-1 shared by every node in that
 * slot: i -> i + k is a permutation without a fixed point, so no two nodes
 * probe the same target in a slot and none probes itself. A round is n - 1
 * slots; in a round k takes every value once, so each node probes each
 * other node once per round.
 *
 * Round-robin: k = 1 + s mod (n - 1). Randomised: each round starts at an
 * offset drawn from a hash of (seed, round), the same on every node with
 * the same seed, so the order of targets changes from round to round
 * without giving up the property above.
 */
#ifndef LS_AGENT_SCHED_H
#define LS_AGENT_SCHED_H

#include <stddef.h>
#include <stdint.h>

enum ls_sched_kind { LS_SCHED_RR = 0, LS_SCHED_RANDOM = 1 };

/*
 * The index (0..n-1) node self probes in slot, or -1 when there is no
 * other node (n < 2) or self >= n.
 */
long ls_sched_target(enum ls_sched_kind kind, uint64_t seed, size_t self, size_t n,
		     uint64_t slot);

/*
 * How old a result may grow before it is stale, in seconds: rounds rounds
 * of a fleet of n nodes (a round is n - 1 slots of slot_ns) plus grace_ns
 * (a session's longest run: a result can end that late); 0 when n < 2 or
 * rounds is 0 (nothing is ever stale).
 */
double ls_sched_stale_after(size_t n, uint64_t slot_ns, uint64_t rounds, uint64_t grace_ns);

#endif /* LS_AGENT_SCHED_H */
