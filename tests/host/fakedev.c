// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD shim for the host tests: libibverbs lists one RDMA device,
 * "fake0", whose open fails (ENODEV). `latsplit agent` checks for a device
 * before it starts, so on a host without RDMA the shim lets the real agent
 * run (its HTTP server, schedule, signals) while every session and
 * responder fails as on a node whose device went away. Built by the test
 * that uses it (tests/host/agent-http.sh).
 */
#include <errno.h>
#include <stddef.h>
#include <infiniband/verbs.h>

static struct ibv_device dev;
static struct ibv_device *list[2] = { &dev, NULL };

/* One device. */
struct ibv_device **ibv_get_device_list(int *n)
{
	if (n)
		*n = 1;
	return list;
}

/* Nothing was allocated. */
void ibv_free_device_list(struct ibv_device **l)
{
	(void)l;
}

/* Its open fails: the device is gone. */
struct ibv_context *ibv_open_device(struct ibv_device *d)
{
	(void)d;
	errno = ENODEV;
	return NULL;
}

/* Its name. */
const char *ibv_get_device_name(struct ibv_device *d)
{
	(void)d;
	return "fake0";
}
