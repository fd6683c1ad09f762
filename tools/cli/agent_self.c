// SPDX-License-Identifier: GPL-2.0
/* The agent's own entry in its peers list: by name, else by this host's addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent.h"

/* Whether a and b hold the same IPv4 or IPv6 address (ports and scopes ignored). */
static bool same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

/*
 * Whether host resolves to one of local[0..n): only numeric addresses when
 * numeric_only (no name lookup), and a host that does not resolve is not local.
 */
static bool host_is_local(const char *host, const struct sockaddr_storage *local, size_t n,
			  bool numeric_only)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = numeric_only ? AI_NUMERICHOST : 0 };
	struct addrinfo *res, *ai;
	bool found = false;

	if (getaddrinfo(host, NULL, &hints, &res))
		return false;
	for (ai = res; ai && !found; ai = ai->ai_next)
		for (size_t i = 0; i < n && !found; i++)
			found = same_addr(ai->ai_addr, (const struct sockaddr *)&local[i]);
	freeaddrinfo(res);
	return found;
}

/* This host's interface addresses (see agent.h). */
int ls_agent_local_addrs(struct sockaddr_storage **out, size_t *n, struct ls_err *err)
{
	struct ifaddrs *ifa, *i;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (getifaddrs(&ifa))
		return ls_errnof(err, errno, "agent: this host's addresses (getifaddrs)");
	for (i = ifa; i; i = i->ifa_next)
		k += i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
				     i->ifa_addr->sa_family == AF_INET6);
	*out = calloc(k ? k : 1, sizeof(**out));
	if (!*out) {
		freeifaddrs(ifa);
		return ls_errnof(err, ENOMEM, "agent: %zu addresses of this host", k);
	}
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			memcpy(&(*out)[(*n)++], i->ifa_addr, sizeof(struct sockaddr_in));
		else if (i->ifa_addr->sa_family == AF_INET6)
			memcpy(&(*out)[(*n)++], i->ifa_addr, sizeof(struct sockaddr_in6));
	}
	freeifaddrs(ifa);
	return 0;
}

/* Find this node in the list (see agent.h). */
int ls_agent_find_self(const struct ls_peers *l, const char *file, const char *self,
		       bool given, const struct sockaddr_storage *local, size_t nlocal,
		       size_t *idx, struct ls_err *err)
{
	size_t by_name = l->n, by_addr = l->n;

	*idx = l->n;
	for (size_t i = 0; i < l->n && by_name == l->n; i++)
		if (!strcasecmp(l->v[i], self))
			by_name = i;
	if (given && by_name == l->n)
		return ls_errcf(err, LS_E_USAGE, "--self %s is not in %s (give this node's entry as it is written there)",
				self, file);
	for (size_t i = 0; i < l->n; i++) {
		/* found by name: only the other numeric entries are checked (no lookups) */
		if (i == by_name || !host_is_local(l->v[i], local, nlocal, by_name < l->n))
			continue;
		if (by_name < l->n)
			return ls_errcf(err, LS_E_USAGE, "%s lists this node twice: %s (%s) and %s (an address of this host)",
					file, l->v[by_name], given ? "--self" : "the host name", l->v[i]);
		if (by_addr < l->n)
			return ls_errcf(err, LS_E_USAGE, "%s lists this node twice: %s and %s are both addresses of this host (give --self)",
					file, l->v[by_addr], l->v[i]);
		by_addr = i;
	}
	*idx = by_name < l->n ? by_name : by_addr;
	return 0;
}
