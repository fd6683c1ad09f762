// SPDX-License-Identifier: GPL-2.0
/*
 * The latsplit.ko backend: drives the module through its debugfs files
 * (Documentation/kmod.rst): `control` takes verbs, `hist` is a binary
 * snapshot (struct ls_hist_header + histograms), `records` streams
 * struct ls_record, `observer` is text: the probes' own cost per CPU and
 * handler.
 */
#include "backend.h"
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LS_KMOD_DIR	"/sys/kernel/debug/latsplit"
#define LS_KMOD_CONTROL	LS_KMOD_DIR "/control"
#define LS_KMOD_CONFIG	LS_KMOD_DIR "/config"
/* The benchmark's A/A control (kmod/latsplit_main.c): Y = probes idle. */
#define LS_KMOD_INERT	"/sys/module/latsplit/parameters/inert"
#define LS_KMOD_HIST	LS_KMOD_DIR "/hist"
#define LS_KMOD_RECORDS	LS_KMOD_DIR "/records"
#define LS_KMOD_OBSERVER LS_KMOD_DIR "/observer"

/* Records read per read(2) call in drain(). */
#define LS_KMOD_BATCH	256

struct ls_backend {
	int ctl_fd;		/* control, held open for the session */
	int rec_fd;		/* records, -1 when ring_kib == 0 */
	/* records handed on as two (LS_REC_F_INTF) since the last reset */
	uint64_t twins;
	struct ls_record batch[LS_KMOD_BATCH];
};

/* True when latsplit.ko is loaded and its control file is reachable. */
static bool kmod_available(void)
{
	return access(LS_KMOD_CONTROL, W_OK) == 0;
}

/* Write one control verb line; the module validates and answers with errno. */
static int kmod_verb(struct ls_backend *b, const char *verb, struct ls_err *err)
{
	size_t len = strlen(verb);
	ssize_t n;

	n = write(b->ctl_fd, verb, len);
	if (n < 0) {
		char shown[256];
		size_t i;

		/* Show a multi-line request on one line. */
		snprintf(shown, sizeof(shown), "%s", verb);
		for (i = 0; shown[i]; i++)
			if (shown[i] == '\n')
				shown[i] = shown[i + 1] ? ';' : '\0';
		return ls_errnof(err, errno, "latsplit.ko: control '%s' refused",
				 shown);
	}
	if ((size_t)n != len)
		return ls_errf(err, "latsplit.ko: control '%s': short write (%zd of %zu)",
			       verb, n, len);
	return 0;
}

/* Append "a,b,c" of n unsigned values to buf. */
static void fmt_list_u32(char *buf, size_t len, const char *verb,
			 const uint32_t *v, unsigned int n)
{
	size_t off = (size_t)snprintf(buf, len, "%s ", verb);

	if (n == 0) {
		snprintf(buf + off, len - off, "none");
		return;
	}
	for (unsigned int i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u",
					i ? "," : "", v[i]);
}

/* Validate cfg against the ABI limits before talking to the module. */
static int kmod_check_cfg(const struct ls_backend_cfg *cfg, struct ls_err *err)
{
	if (cfg->nr_irqs > LS_MAX_IRQS)
		return ls_errf(err, "latsplit.ko: %u IRQs given, at most %d",
			       cfg->nr_irqs, LS_MAX_IRQS);
	if (cfg->nr_pids > LS_MAX_TASKS)
		return ls_errf(err, "latsplit.ko: %u tasks given, at most %d",
			       cfg->nr_pids, LS_MAX_TASKS);
	for (unsigned int i = 0; i < cfg->nr_pids; i++)
		if (cfg->pids[i] <= 0)
			return ls_errf(err, "latsplit.ko: bad pid %d", cfg->pids[i]);
	if (cfg->ring_kib > 65536)
		return ls_errf(err, "latsplit.ko: ring of %u KiB per CPU, at most 65536",
			       cfg->ring_kib);
	return 0;
}

/* The `owner` value of the module's config ("none", a PID, "?" unknown). */
static void kmod_owner(char *out, size_t len)
{
	char text[2048], *line, *save = NULL;
	struct ls_err e = { 0 };

	snprintf(out, len, "?");
	if (ls_read_text(LS_KMOD_CONFIG, text, sizeof(text), &e))
		return;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "owner ", 6)) {
			snprintf(out, len, "%s", line + 6);
			return;
		}
	}
}

/*
 * Take the module for this session (`own`): until ctl_fd is closed (or the
 * process dies) nobody else reconfigures it, and closing it disables
 * tracing and frees the rings.
 */
static int kmod_own(struct ls_backend *b, struct ls_err *err)
{
	char owner[32];

	if (write(b->ctl_fd, "own", 3) == 3)
		return 0;
	if (errno == EINVAL)
		return ls_errcf(err, LS_E_UNSUPPORTED,
				"latsplit.ko: control 'own' refused: the loaded module predates ownership; reload it from this build");
	if (errno != EBUSY)
		return ls_errnof(err, errno, "latsplit.ko: control 'own' refused");
	kmod_owner(owner, sizeof(owner));
	if (!strcmp(owner, "none"))
		return ls_errf(err, "latsplit.ko: busy: another writer is configuring it right now; try again");
	return ls_errf(err, "latsplit.ko: busy: owned by process %s (another latsplit session); it is released when that process ends",
		       owner);
}

/* True when the module's A/A control is set: enabled, it records nothing. */
static bool kmod_inert(void)
{
	struct ls_err e = { 0 };
	char v[8];

	/* a module without the control cannot be inert */
	if (ls_read_text(LS_KMOD_INERT, v, sizeof(v), &e))
		return false;
	return v[0] == 'Y';	/* the kernel shows a bool parameter as Y or N */
}

/* Configure the module and start tracing. */
static int kmod_open(struct ls_backend **out, const struct ls_backend_cfg *cfg,
		     struct ls_err *err)
{
	struct ls_backend *b;
	char line[4096], cpus[LS_MAX_CPUS * 4];
	size_t off;
	uint32_t pids[LS_MAX_TASKS];
	int ret = -1;

	*out = NULL;
	if (kmod_check_cfg(cfg, err))
		return -1;
	b = calloc(1, sizeof(*b));
	if (!b)
		return ls_errnof(err, ENOMEM, "latsplit.ko backend");
	b->rec_fd = -1;
	b->ctl_fd = open(LS_KMOD_CONTROL, O_WRONLY | O_CLOEXEC);
	if (b->ctl_fd < 0) {
		ls_errnof(err, errno, "open %s (is latsplit.ko loaded? are you root?)",
			  LS_KMOD_CONTROL);
		goto fail_free;
	}
	if (kmod_own(b, err))
		goto fail_close;
	/* One write: the module validates it whole and applies all or nothing. */
	off = (size_t)snprintf(line, sizeof(line), "disable\n");
	fmt_list_u32(line + off, sizeof(line) - off, "irqs", cfg->irqs, cfg->nr_irqs);
	off = strlen(line);
	ls_format_cpulist(cfg->cpumask, LS_MAX_CPUS, cpus, sizeof(cpus));
	off += (size_t)snprintf(line + off, sizeof(line) - off, "\ncpus %s\n",
				cpus[0] ? cpus : "none");
	for (unsigned int i = 0; i < cfg->nr_pids; i++)
		pids[i] = (uint32_t)cfg->pids[i];
	fmt_list_u32(line + off, sizeof(line) - off, "tasks", pids, cfg->nr_pids);
	off = strlen(line);
	/* records only when the caller reads no histograms (and has a ring) */
	snprintf(line + off, sizeof(line) - off, "\nring %u\nhist %s\nreset\n",
		 cfg->ring_kib, cfg->no_hist && cfg->ring_kib ? "off" : "on");
	if (kmod_verb(b, line, err))
		goto fail_close;
	if (cfg->ring_kib) {
		b->rec_fd = open(LS_KMOD_RECORDS, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (b->rec_fd < 0) {
			ls_errnof(err, errno, "open %s", LS_KMOD_RECORDS);
			goto fail_close;
		}
	}
	if (kmod_verb(b, "enable", err))
		goto fail_records;
	if (kmod_inert())
		ls_warn("latsplit.ko: parameter inert=Y (a benchmark's A/A control): tracing is on, but its probes record and count nothing");
	if (cfg->verbose)
		fprintf(stderr, "latsplit: kmod backend: %u irqs, cpus %s, %u tasks, ring %u KiB\n",
			cfg->nr_irqs, cpus[0] ? cpus : "none", cfg->nr_pids,
			cfg->ring_kib);
	*out = b;
	return 0;

fail_records:
	if (b->rec_fd >= 0)
		close(b->rec_fd);
fail_close:
	close(b->ctl_fd);
fail_free:
	free(b);
	return ret;
}

/* Zero every histogram, counter and the record rings. */
static int kmod_reset(struct ls_backend *b, struct ls_err *err)
{
	b->twins = 0;
	return kmod_verb(b, "reset", err);
}

/* Read the whole hist file into snap. */
static int kmod_snapshot(struct ls_backend *b, struct ls_snapshot *snap,
			 struct ls_err *err)
{
	struct ls_hist_header hdr;
	size_t want, got = 0;
	char *buf = NULL;
	ssize_t n;
	int fd, ret = -1;

	memset(snap, 0, sizeof(*snap));
	fd = open(LS_KMOD_HIST, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ls_errnof(err, errno, "open %s", LS_KMOD_HIST);
	n = pread(fd, &hdr, sizeof(hdr), 0);
	if (n < 0) {
		ls_errnof(err, errno, "read %s", LS_KMOD_HIST);
		goto out;
	}
	if ((size_t)n < sizeof(hdr) || hdr.magic != LS_HIST_MAGIC ||
	    hdr.hdr_size < sizeof(hdr)) {
		ls_errf(err, "%s: not a latsplit histogram header (%zd bytes, magic %#x)",
			LS_KMOD_HIST, n, (size_t)n >= sizeof(hdr.magic) ? hdr.magic : 0);
		goto out;
	}
	if (hdr.abi_version != LATSPLIT_ABI_VERSION ||
	    hdr.hist_size != sizeof(struct ls_hist) || hdr.nr_slots != LS_NR_SLOTS ||
	    hdr.nr_irqs > LS_MAX_IRQS || hdr.nr_cpus == 0 || hdr.nr_cpus > 8192) {
		ls_errf(err, "%s: ABI mismatch (module abi %u, hist %u B, %u slots, %u cpus; tool abi %d, hist %zu B, %d slots)",
			LS_KMOD_HIST, hdr.abi_version, hdr.hist_size, hdr.nr_slots,
			hdr.nr_cpus, LATSPLIT_ABI_VERSION, sizeof(struct ls_hist),
			LS_NR_SLOTS);
		goto out;
	}
	want = (size_t)hdr.nr_cpus * LS_NR_SLOTS * sizeof(struct ls_hist);
	buf = malloc(want);
	if (!buf) {
		ls_errnof(err, ENOMEM, "histogram snapshot of %zu bytes", want);
		goto out;
	}
	while (got < want) {
		n = pread(fd, buf + got, want - got, (off_t)(hdr.hdr_size + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ls_errnof(err, errno, "read %s", LS_KMOD_HIST);
			goto out;
		}
		if (n == 0) {
			ls_errf(err, "%s: truncated (%zu of %zu bytes)", LS_KMOD_HIST,
				got, want);
			goto out;
		}
		got += (size_t)n;
	}
	snap->nr_cpus = hdr.nr_cpus;
	snap->hist = (struct ls_hist *)buf;
	buf = NULL;
	snap->nr_irqs = hdr.nr_irqs;
	memcpy(snap->irqs, hdr.irqs, sizeof(snap->irqs));
	/* as handed on: a record written for two stages counts twice */
	snap->records = hdr.records + b->twins;
	snap->drops = hdr.drops;
	snap->comp_stale = hdr.comp_stale;
	snap->napi_untimed = hdr.napi_untimed;
	snap->no_hist = !!(hdr.flags & LS_HDR_F_NO_HIST);
	ret = 0;
out:
	free(buf);
	close(fd);
	return ret;
}

/* Hand pending records to cb, waiting up to timeout_ms for the first. */
static long kmod_drain(struct ls_backend *b, ls_record_cb cb, void *ctx,
		       int timeout_ms, struct ls_err *err)
{
	long total = 0;
	ssize_t n;

	if (b->rec_fd < 0)
		return ls_errf(err, "latsplit.ko: records are off (ring size 0)");
	if (timeout_ms > 0) {
		struct pollfd pfd = { .fd = b->rec_fd, .events = POLLIN };
		int r;

		do {
			r = poll(&pfd, 1, timeout_ms);
		} while (r < 0 && errno == EINTR);
		if (r < 0)
			return ls_errnof(err, errno, "poll %s", LS_KMOD_RECORDS);
		/* on a timeout, collect what waits below the wake mark */
	}
	for (;;) {
		n = read(b->rec_fd, b->batch, sizeof(b->batch));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return ls_errnof(err, errno, "read %s", LS_KMOD_RECORDS);
		}
		if (n == 0)
			break;
		if (n % sizeof(struct ls_record))
			return ls_errf(err, "%s: read %zd bytes, not whole records",
				       LS_KMOD_RECORDS, n);
		for (size_t i = 0; i < (size_t)n / sizeof(struct ls_record); i++) {
			struct ls_record twin;
			int nr = ls_record_untwin(&b->batch[i], &twin);

			total += nr;
			b->twins += (uint64_t)(nr - 1);
			if (cb(&b->batch[i], ctx) || (nr == 2 && cb(&twin, ctx)))
				return total;
		}
	}
	return total;
}

/*
 * Parse the `observer` file: "# nr_cpus N handlers H", a column header,
 * then "cpu handler name hits ns" for every cell. Every cell must appear
 * once; anything else is a format error naming the line.
 */
static int kmod_parse_observer(FILE *fp, struct ls_obs *obs, struct ls_err *err)
{
	unsigned int nr_cpus, nr_h, cpu, h, line = 1;
	unsigned long long hits, ns;
	char text[256], name[64];
	size_t seen = 0, n;
	unsigned char *got;

	if (!fgets(text, sizeof(text), fp) ||
	    sscanf(text, "# nr_cpus %u handlers %u", &nr_cpus, &nr_h) != 2)
		return ls_errf(err, "%s: line 1 is not '# nr_cpus N handlers H'",
			       LS_KMOD_OBSERVER);
	if (nr_h != LS_NR_HANDLERS || nr_cpus == 0 || nr_cpus > 8192)
		return ls_errf(err, "%s: ABI mismatch (%u cpus, %u handlers; tool knows %d handlers)",
			       LS_KMOD_OBSERVER, nr_cpus, nr_h, LS_NR_HANDLERS);
	n = (size_t)nr_cpus * LS_NR_HANDLERS;
	obs->cell = calloc(n, sizeof(*obs->cell));
	got = calloc(n, 1);
	if (!obs->cell || !got) {
		free(got);
		ls_obs_free(obs);
		return ls_errnof(err, ENOMEM, "%s: %zu cells", LS_KMOD_OBSERVER, n);
	}
	obs->nr_cpus = nr_cpus;
	while (fgets(text, sizeof(text), fp)) {
		line++;
		if (text[0] == '#')
			continue;
		if (sscanf(text, "%u %u %63s %llu %llu", &cpu, &h, name, &hits, &ns) != 5 ||
		    cpu >= nr_cpus || h >= LS_NR_HANDLERS ||
		    strcmp(name, ls_handler_name(h)) || got[cpu * LS_NR_HANDLERS + h]) {
			ls_errf(err, "%s: line %u is not a new 'cpu handler name hits ns' cell",
				LS_KMOD_OBSERVER, line);
			goto fail;
		}
		got[cpu * LS_NR_HANDLERS + h] = 1;
		obs->cell[cpu * LS_NR_HANDLERS + h].hits = hits;
		obs->cell[cpu * LS_NR_HANDLERS + h].ns = ns;
		seen++;
	}
	/* Possible CPUs only: a hole in the CPU ids leaves its cells zero. */
	if (!seen || seen % LS_NR_HANDLERS) {
		ls_errf(err, "%s: %zu cells, not whole CPUs of %d handlers",
			LS_KMOD_OBSERVER, seen, LS_NR_HANDLERS);
		goto fail;
	}
	free(got);
	return 0;
fail:
	free(got);
	ls_obs_free(obs);
	return -1;
}

/* Read the probes' own cost per CPU and handler. */
static int kmod_observer(struct ls_backend *b, struct ls_obs *obs,
			 struct ls_err *err)
{
	FILE *fp;
	int ret;

	(void)b;
	memset(obs, 0, sizeof(*obs));
	fp = fopen(LS_KMOD_OBSERVER, "re");
	if (!fp)
		return ls_errnof(err, errno, "open %s", LS_KMOD_OBSERVER);
	ret = kmod_parse_observer(fp, obs, err);
	if (!ret && ferror(fp))
		ret = ls_errnof(err, EIO, "read %s", LS_KMOD_OBSERVER);
	if (ret)
		ls_obs_free(obs);
	fclose(fp);
	return ret;
}

/* Pause: `disable` (probes return at once, rings keep their records); resume: `enable`. */
static int kmod_pause(struct ls_backend *b, bool paused, struct ls_err *err)
{
	return kmod_verb(b, paused ? "disable" : "enable", err);
}

/* Stop tracing and release the module's files (and with them the module). */
static void kmod_close(struct ls_backend *b)
{
	if (!b)
		return;
	(void)kmod_verb(b, "disable", NULL);
	if (b->rec_fd >= 0)
		close(b->rec_fd);
	close(b->ctl_fd);
	free(b);
}

const struct ls_backend_ops ls_backend_kmod = {
	.name = "kmod",
	.available = kmod_available,
	.open = kmod_open,
	.reset = kmod_reset,
	.snapshot = kmod_snapshot,
	.drain = kmod_drain,
	.observer = kmod_observer,
	.pause = kmod_pause,
	.close = kmod_close,
};
