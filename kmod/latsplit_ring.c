// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit.ko: per-CPU histograms and record rings, and the `records` file.
 *
 * The producer is always the local CPU with IRQs disabled (a probe), so a
 * ring has exactly one producer and, because `records` opens exclusively,
 * exactly one consumer. A full ring drops the new record and counts it;
 * the kernel never waits for the reader.
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "latsplit.h"

static DECLARE_WAIT_QUEUE_HEAD(ls_wq);
/* A blocked read returns records below the wake mark after this long. */
#define LS_READ_WAIT		(HZ / 10)
static struct irq_work ls_wake_work;
/* Set by a reader about to sleep; a producer that sees it queues a wakeup. */
static int ls_reader_waiting;
/* One reader at a time: bit 0 set while `records` is open. */
static unsigned long ls_records_open;
/* Serializes draining against ring reset. */
static DEFINE_MUTEX(ls_read_mutex);
/* CPU the next drain starts with, so no CPU's ring starves. */
static unsigned int ls_read_next_cpu;

/*
 * A producer filled its ring to the wake mark (ls_emit_record()): queue a
 * wakeup if a reader sleeps. IRQs off.
 */
void ls_ring_wake_reader(void)
{
	/* Pairs with smp_mb() in ls_reader_prepare_wait(). */
	smp_mb();
	if (unlikely(READ_ONCE(ls_reader_waiting))) {
		WRITE_ONCE(ls_reader_waiting, 0);
		irq_work_queue(&ls_wake_work);
	}
}

/* irq_work callback: wake readers (not in the probe: waitqueues take locks). */
static void ls_wake_fn(struct irq_work *work)
{
	wake_up_all(&ls_wq);
}

/* Wake blocked readers now (control path: disable, reset). */
void ls_records_wake(void)
{
	wake_up_all(&ls_wq);
}

/*
 * Some CPU's ring is filled to its wake mark. Reads the per-CPU cursors and
 * whether a ring exists, never a ring's memory, so it is safe without
 * ls_read_mutex (a read's wait condition cannot sleep on it); poll takes it.
 */
static bool ls_rings_ready(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);

		if (READ_ONCE(pc->ring) && smp_load_acquire(&pc->ring_head) -
				READ_ONCE(pc->ring_tail) >= pc->ring_wake)
			return true;
	}
	return false;
}

/* Announce a sleeping reader, then recheck (pairs with ls_ring_wake_reader()). */
static bool ls_reader_prepare_wait(void)
{
	WRITE_ONCE(ls_reader_waiting, 1);
	smp_mb();
	return ls_rings_ready();
}

/* A ring of kib KiB (kib > 0) on cpu's node, or NULL. */
static struct ls_ring *ls_ring_new(u32 kib, unsigned int cpu)
{
	size_t slots = ((size_t)kib * 1024) / sizeof(struct ls_record);
	struct ls_ring *r;

	slots = rounddown_pow_of_two(slots);
	r = vzalloc_node(struct_size(r, rec, slots), cpu_to_node(cpu));
	if (!r)
		return NULL;
	r->mask = slots - 1;
	r->wake = max_t(u32, 1, slots / LS_RING_WAKE_DIV);
	return r;
}

/*
 * Allocate one ring of kib KiB for every online CPU (kib > 0; the caller
 * holds the hotplug lock; a CPU that comes online later gets its ring from
 * ls_ring_add_cpu()).
 */
int ls_rings_alloc(struct ls_ring **rings, u32 kib)
{
	unsigned int cpu;

	for_each_online_cpu(cpu) {
		rings[cpu] = ls_ring_new(kib, cpu);
		if (!rings[cpu]) {
			ls_rings_free(rings);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Give a CPU that is coming online a ring of kib KiB (hotplug prepare: the
 * CPU is down, none of its probes runs). Its cursors are equal: a CPU
 * without a ring never wrote a record.
 */
int ls_ring_add_cpu(unsigned int cpu, u32 kib)
{
	struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);
	struct ls_ring *r = ls_ring_new(kib, cpu);

	if (!r)
		return -ENOMEM;
	mutex_lock(&ls_read_mutex);
	pc->ring_mask = r->mask;
	pc->ring_wake = r->wake;
	WRITE_ONCE(pc->ring_tail, pc->ring_head);
	/* WRITE_ONCE: ls_rings_ready() reads it without ls_read_mutex */
	WRITE_ONCE(pc->ring, r);
	mutex_unlock(&ls_read_mutex);
	return 0;
}

/* How many CPUs have a record ring (for `config`). */
unsigned int ls_rings_count(void)
{
	unsigned int cpu, n = 0;

	for_each_possible_cpu(cpu)
		n += !!READ_ONCE(per_cpu_ptr(ls_pcpu, cpu)->ring);
	return n;
}

/* Free rings allocated by ls_rings_alloc(); NULL entries are skipped. */
void ls_rings_free(struct ls_ring **rings)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		vfree(rings[cpu]);
		rings[cpu] = NULL;
	}
}

/*
 * Swap rings in (probes stopped): rings[] receives the old ones for the
 * caller to free. Under the reader's lock, so a reader that opened
 * `records` meanwhile drains either the old rings or the new ones.
 */
void ls_rings_install(struct ls_ring **rings)
{
	unsigned int cpu;

	mutex_lock(&ls_read_mutex);
	for_each_possible_cpu(cpu) {
		struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);

		swap(pc->ring, rings[cpu]);
		pc->ring_mask = pc->ring ? pc->ring->mask : 0;
		pc->ring_wake = pc->ring ? pc->ring->wake : 0;
	}
	mutex_unlock(&ls_read_mutex);
}

/* Empty every ring and zero the record counters (probes stopped). */
void ls_rings_reset(void)
{
	unsigned int cpu;

	mutex_lock(&ls_read_mutex);
	for_each_possible_cpu(cpu) {
		struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);

		WRITE_ONCE(pc->ring_head, 0);
		WRITE_ONCE(pc->ring_tail, 0);
		pc->written = 0;
		pc->drops = 0;
		pc->comp_stale = 0;
		pc->napi_untimed = 0;
	}
	mutex_unlock(&ls_read_mutex);
}

/* Zero every histogram (probes stopped). */
void ls_hist_reset(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(ls_pcpu, cpu)->hist, 0,
		       LS_NR_SLOTS * sizeof(struct ls_hist));
}

/* Zero the observer's per-CPU cost cells (probes stopped). */
void ls_obs_reset(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);

		memset(pc->obs, 0, sizeof(pc->obs));
		memset(pc->obs_est, 0, sizeof(pc->obs_est));
		/* xorshift32 never leaves 0: seed every CPU apart, non-zero */
		pc->obs_rng = get_random_u32() | 1;
	}
}

/* True while a reader has `records` open (rings cannot be resized then). */
bool ls_records_busy(void)
{
	return test_bit(0, &ls_records_open);
}

/* Copy up to max records of one CPU's ring to buf; returns records copied or -EFAULT. */
static ssize_t ls_ring_copy(struct ls_pcpu *pc, char __user *buf, size_t max)
{
	struct ls_ring *ring = pc->ring;
	u64 tail = pc->ring_tail, head = smp_load_acquire(&pc->ring_head);
	size_t n = min_t(u64, head - tail, max), done = 0;

	while (done < n) {
		u64 i = (tail + done) & ring->mask;
		size_t chunk = min_t(size_t, n - done, ring->mask + 1 - i);

		if (copy_to_user(buf + done * sizeof(struct ls_record),
				 &ring->rec[i], chunk * sizeof(struct ls_record)))
			return -EFAULT;
		done += chunk;
	}
	/* The slots are free for the producer only after the copy. */
	smp_store_release(&pc->ring_tail, tail + n);
	return n;
}

/* Drain rings into buf (whole records), fairly across CPUs. */
static ssize_t ls_records_drain(char __user *buf, size_t count)
{
	size_t max = count / sizeof(struct ls_record), got = 0;
	unsigned int i, cpu = READ_ONCE(ls_read_next_cpu);
	ssize_t n;

	mutex_lock(&ls_read_mutex);
	for (i = 0; i < nr_cpu_ids && got < max; i++, cpu++) {
		struct ls_pcpu *pc;

		if (cpu >= nr_cpu_ids)
			cpu = 0;
		if (!cpu_possible(cpu))
			continue;
		pc = per_cpu_ptr(ls_pcpu, cpu);
		if (!pc->ring)
			continue;
		n = ls_ring_copy(pc, buf + got * sizeof(struct ls_record),
				 max - got);
		if (n < 0) {
			mutex_unlock(&ls_read_mutex);
			return got ? got * sizeof(struct ls_record) : n;
		}
		got += n;
	}
	WRITE_ONCE(ls_read_next_cpu, cpu >= nr_cpu_ids ? 0 : cpu);
	mutex_unlock(&ls_read_mutex);
	return got * sizeof(struct ls_record);
}

/* open `records`: root only, one reader at a time. */
static int ls_records_open_fn(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (file->f_mode & FMODE_WRITE)
		return -EINVAL;
	if (test_and_set_bit(0, &ls_records_open))
		return -EBUSY;
	return nonseekable_open(inode, file);
}

/* release `records`; rings a departed owner left to this reader are freed. */
static int ls_records_release(struct inode *inode, struct file *file)
{
	clear_bit(0, &ls_records_open);
	ls_ctl_records_closed();
	return 0;
}

/*
 * read `records`: whole struct ls_record only. Blocks until records arrive;
 * returns 0 (end of file) when tracing is disabled and the rings are empty.
 */
static ssize_t ls_records_read(struct file *file, char __user *buf,
			       size_t count, loff_t *ppos)
{
	ssize_t n;
	long err;

	if (count < sizeof(struct ls_record))
		return -EINVAL;
	for (;;) {
		/* Read the flag first: once off, every record is in the rings. */
		bool on = ls_is_enabled();

		n = ls_records_drain(buf, count);
		if (n)
			return n;
		if (!on)
			return 0;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		/* Woken at the wake mark; records below it wait at most this long. */
		err = wait_event_interruptible_timeout(ls_wq, ls_reader_prepare_wait() ||
						       !ls_is_enabled(), LS_READ_WAIT);
		if (err < 0)
			return err;
	}
}

/*
 * poll `records`: readable when a ring is filled to its wake mark; HUP when
 * disabled. A poller with fewer records waiting collects them on its own
 * timeout (a read returns whatever is there).
 */
static __poll_t ls_records_poll(struct file *file, poll_table *wait)
{
	__poll_t mask = 0;

	poll_wait(file, &ls_wq, wait);
	mutex_lock(&ls_read_mutex);
	if (ls_reader_prepare_wait())
		mask |= EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&ls_read_mutex);
	if (!ls_is_enabled())
		mask |= EPOLLHUP;
	return mask;
}

const struct file_operations ls_records_fops = {
	.owner = THIS_MODULE,
	.open = ls_records_open_fn,
	.release = ls_records_release,
	.read = ls_records_read,
	.poll = ls_records_poll,
};

/* Set up the reader wakeup. */
int ls_ring_init(void)
{
	init_irq_work(&ls_wake_work, ls_wake_fn);
	return 0;
}

/* Wait for a queued wakeup to finish (probes already unregistered). */
void ls_ring_exit(void)
{
	irq_work_sync(&ls_wake_work);
}
