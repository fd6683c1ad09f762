// SPDX-License-Identifier: GPL-2.0
/* The agent's probe schedule: one collision-free target per node and slot. */
#include "agent_sched.h"

/* A 64-bit mix of x (splitmix64's finaliser): the round's offset, the same everywhere. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The index node self probes in slot (see agent_sched.h), or -1. */
long ls_sched_target(enum ls_sched_kind kind, uint64_t seed, size_t self, size_t n,
		     uint64_t slot)
{
	uint64_t m, pos, k;

	if (n < 2 || self >= n)
		return -1;
	m = n - 1;
	pos = slot % m;
	if (kind == LS_SCHED_RANDOM)
		pos = (pos + mix64(seed ^ mix64(slot / m)) % m) % m;
	k = 1 + pos;
	return (long)((self + k) % n);
}

/* The age past which a result is stale (see agent_sched.h), seconds. */
double ls_sched_stale_after(size_t n, uint64_t slot_ns, uint64_t rounds, uint64_t grace_ns)
{
	if (n < 2 || !rounds)
		return 0;
	return ((double)rounds * (double)(n - 1) * (double)slot_ns + (double)grace_ns) / 1e9;
}
