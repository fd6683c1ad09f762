// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: the control socket: its connections, the command lines and
 * the commands but the rules' and `stats`; the text helpers they share.
 */
#include <ctype.h>
#include <poll.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "labwire_int.h"

/* Parse an unsigned number (decimal or 0x hex) no larger than max. */
bool parse_num(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s || !((*s >= '0' && *s <= '9') || (base == 16 && isxdigit((unsigned char)*s))))
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* Append printf-formatted text to sb (sets sb->oom on failure). */
__attribute__((format(printf, 2, 3)))
void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	for (;;) {
		room = sb->cap - sb->len;
		va_start(ap, fmt);
		n = vsnprintf(sb->p ? sb->p + sb->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->oom = true;
			return;
		}
		if ((size_t)n < room) {
			sb->len += (size_t)n;
			return;
		}
		size_t cap = (sb->cap ? sb->cap * 2 : 4096) + (size_t)n;
		char *p = realloc(sb->p, cap);

		if (!p) {
			sb->oom = true;
			return;
		}
		sb->p = p;
		sb->cap = cap;
	}
}

/* Parse a direction word into a mask (1 ab, 2 ba, 3 both); 0 if bad. */
unsigned int parse_dir(const char *s)
{
	if (!strcmp(s, "ab"))
		return 1;
	if (!strcmp(s, "ba"))
		return 2;
	if (!strcmp(s, "both"))
		return 3;
	return 0;
}

/* Split "key=value" in place: the value, or NULL when there is no '='. */
char *split_kv(char *word)
{
	char *eq = strchr(word, '=');

	if (!eq || eq == word)
		return NULL;
	*eq = '\0';
	return eq + 1;
}

/* link DIR rate=BPS: set the link rate (0 = unlimited). */
static int cmd_link(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	char *val = argc == 3 ? split_kv(argv[2]) : NULL;
	uint64_t rate;

	if (argc != 3 || !mask || !val || strcmp(argv[2], "rate")) {
		sb_printf(out, "error: usage: link ab|ba|both rate=BPS\n");
		return -1;
	}
	if (!parse_num(val, MAX_RATE, &rate)) {
		sb_printf(out, "error: link: rate=%s: not a number in 0..%llu bit/s\n", val,
			  (unsigned long long)MAX_RATE);
		return -1;
	}
	for (unsigned int i = 0; i < NR_DIRS; i++)
		if (mask & (1U << i))
			W.d[i].rate = rate;
	sb_printf(out, "ok\n");
	return 0;
}

/* class DIR N [limit=BYTES] [ecn=BYTES]: set a class's queue limit and CE threshold. */
static int cmd_class(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	uint64_t n, v, limit = NONE, ecn = NONE;
	char *val;

	if (argc < 4 || !mask || !parse_num(argv[2], NR_CLASSES - 1, &n)) {
		sb_printf(out, "error: usage: class ab|ba|both N(0-%d) [limit=BYTES]"
			  " [ecn=BYTES]\n", NR_CLASSES - 1);
		return -1;
	}
	for (int i = 3; i < argc; i++) {
		val = split_kv(argv[i]);
		if (!val || (strcmp(argv[i], "limit") && strcmp(argv[i], "ecn"))) {
			sb_printf(out, "error: class: '%s' is not limit=BYTES or ecn=BYTES\n",
				  argv[i]);
			return -1;
		}
		if (!parse_num(val, MAX_LIMIT, &v)) {
			sb_printf(out, "error: class: %s=%s: not a number in 0..%llu\n", argv[i],
				  val, (unsigned long long)MAX_LIMIT);
			return -1;
		}
		*(argv[i][0] == 'l' ? &limit : &ecn) = v;
	}
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		const struct flow *fl = &W.d[i].flow;

		if ((mask & (1U << i)) && limit != NONE && fl->on && fl->cls == n &&
		    limit < flow_room(fl)) {
			sb_printf(out, "error: class: limit=%" PRIu64 " is below the %" PRIu64
				  " bytes of %s's flow in class %" PRIu64 " (flow %s off first)\n",
				  limit, flow_room(fl), dir_name[i], n, dir_name[i]);
			return -1;
		}
	}
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		if (!(mask & (1U << i)))
			continue;
		if (limit != NONE)
			W.d[i].limit[n] = limit;
		if (ecn != NONE)
			W.d[i].ecn[n] = ecn;
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* Parse "D=C[,D=C...]" into map (entries set only); an error in out on failure. */
static int dscp_pairs(char *list, int map[NR_DSCP], struct sbuf *out)
{
	char *save = NULL, *tok, *val;
	uint64_t dscp, cls;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		val = split_kv(tok);
		if (!val || !parse_num(tok, NR_DSCP - 1, &dscp) ||
		    !parse_num(val, NR_CLASSES - 1, &cls)) {
			sb_printf(out, "error: dscp: '%s%s%s' is not DSCP(0-63)=CLASS(0-7)\n",
				  tok, val ? "=" : "", val ? val : "");
			return -1;
		}
		map[dscp] = (int)cls;
	}
	return 0;
}

/* dscp DIR D=C[,D=C...] | dscp DIR reset: change the DSCP->class map. */
static int cmd_dscp(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	bool reset = argc == 3 && !strcmp(argv[2], "reset");
	int map[NR_DSCP];

	if (argc < 3 || !mask) {
		sb_printf(out, "error: usage: dscp ab|ba|both DSCP=CLASS[,DSCP=CLASS...]"
			  " | dscp DIR reset\n");
		return -1;
	}
	for (unsigned int k = 0; k < NR_DSCP; k++)
		map[k] = reset ? 0 : -1;
	for (int i = 2; i < argc && !reset; i++)
		if (dscp_pairs(argv[i], map, out))
			return -1;
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		if (!(mask & (1U << i)))
			continue;
		for (unsigned int k = 0; k < NR_DSCP; k++)
			if (map[k] >= 0)
				W.d[i].dscp_map[k] = (uint8_t)map[k];
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* log FILE | log off: switch or close the log. */
static int cmd_log(int argc, char **argv, struct sbuf *out)
{
	int err;

	if (argc != 2) {
		sb_printf(out, "error: usage: log FILE | log off\n");
		return -1;
	}
	if (!strcmp(argv[1], "off")) {
		log_close();
		sb_printf(out, "ok\n");
		return 0;
	}
	if (argv[1][0] != '/') {
		sb_printf(out, "error: log: %s: give an absolute path\n", argv[1]);
		return -1;
	}
	err = log_open(argv[1]);
	if (err) {
		sb_printf(out, "error: log: open %s: %s\n", argv[1], strerror(-err));
		return -1;
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* Run one command line; the reply goes to out. */
static void ctl_run(char *line, struct sbuf *out)
{
	char *argv[64], *save = NULL, *w;
	int argc = 0;

	for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (argc == 64) {
			sb_printf(out, "error: too many words (at most 64)\n");
			return;
		}
		argv[argc++] = w;
	}
	for (unsigned int i = 0; i < NR_DIRS; i++)
		process_due(&W.d[i], mono_ns());	/* a command sees and changes the present */
	if (!argc) {
		sb_printf(out, "error: empty command\n");
	} else if (!strcmp(argv[0], "ping") && argc == 1) {
		sb_printf(out, "ok\n");
	} else if (!strcmp(argv[0], "rule")) {
		cmd_rule(argc, argv, out);
	} else if (!strcmp(argv[0], "norule")) {
		cmd_norule(argc, argv, out);
	} else if (!strcmp(argv[0], "link")) {
		cmd_link(argc, argv, out);
	} else if (!strcmp(argv[0], "class")) {
		cmd_class(argc, argv, out);
	} else if (!strcmp(argv[0], "dscp")) {
		cmd_dscp(argc, argv, out);
	} else if (!strcmp(argv[0], "flow")) {
		cmd_flow(argc, argv, out);
	} else if (!strcmp(argv[0], "stats") && argc == 1) {
		cmd_stats(out);
	} else if (!strcmp(argv[0], "reset") && argc == 1) {
		for (unsigned int i = 0; i < NR_DIRS; i++)
			dir_reset(&W.d[i]);
		sb_printf(out, "ok\n");
	} else if (!strcmp(argv[0], "flush") && argc == 1) {
		log_flush(LOG_RECS);
		sb_printf(out, "ok\n");
	} else if (!strcmp(argv[0], "log")) {
		cmd_log(argc, argv, out);
	} else {
		sb_printf(out, "error: unknown command '%s' (ping rule norule link class dscp"
			  " flow stats reset flush log; stats/reset/flush/ping take no arguments)\n",
			  argv[0]);
	}
}

/* Send the whole reply to c (waiting at most ~1 s for room) and close it. */
static void ctl_reply(struct client *c, const struct sbuf *out)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	size_t off = 0;
	ssize_t n;
	int tries = 0;

	while (off < out->len && tries < 10) {
		n = send(c->fd, out->p + off, out->len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			poll(&pfd, 1, 100);
			tries++;
		} else {
			break;
		}
	}
	close(c->fd);
	c->fd = -1;
}

/* Read from client c; once its line is complete, run it and reply. */
void ctl_read(struct client *c)
{
	struct sbuf out = { 0 };
	char *nl;
	ssize_t n;

	n = recv(c->fd, c->buf + c->n, sizeof(c->buf) - 1 - c->n, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		c->n += (uint32_t)n;
	c->buf[c->n] = '\0';
	nl = strchr(c->buf, '\n');
	if (!nl && n > 0 && c->n < sizeof(c->buf) - 1)
		return;
	if (n < 0 && !nl) {
		close(c->fd);
		c->fd = -1;
		return;
	}
	if (nl)
		*nl = '\0';
	if (!nl && c->n >= sizeof(c->buf) - 1)
		sb_printf(&out, "error: command longer than %d bytes\n", CTL_LINE - 2);
	else
		ctl_run(c->buf, &out);
	if (out.oom) {
		out.len = 0;
		sb_printf(&out, "error: out of memory\n");
	}
	ctl_reply(c, &out);
	free(out.p);
}

/* Accept pending control connections (refusing beyond MAX_CLIENTS). */
void ctl_accept(uint64_t now)
{
	static const char busy[] = "error: busy (too many control connections)\n";
	int fd;

	for (;;) {
		fd = accept4(W.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (W.cl[i].fd >= 0)
				continue;
			W.cl[i].fd = fd;
			W.cl[i].n = 0;
			W.cl[i].since = now;
			fd = -1;
			break;
		}
		if (fd >= 0) {
			if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
				fprintf(stderr, "labwire: control: refuse a client: %s\n",
					strerror(errno));
			close(fd);
		}
	}
}

/* Create the control socket at path (mode 0600), replacing a stale one; 0 or 1. */
int ctl_listen(const char *path, int *fdp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, err;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "labwire: socket (control): %s\n", strerror(errno));
		return 1;
	}
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "labwire: control socket %s: exists and is not a"
				" socket\n", path);
			goto fail;
		}
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || errno == EAGAIN) {
			fprintf(stderr, "labwire: control socket %s: a running wire answers"
				" there\n", path);
			goto fail;
		}
		close(fd);
		unlink(path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			fprintf(stderr, "labwire: socket (control): %s\n", strerror(errno));
			return 1;
		}
	}
	old = umask(077);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (err || chmod(path, 0600) || listen(fd, 16)) {
		fprintf(stderr, "labwire: control socket %s: %s\n", path, strerror(errno));
		goto fail;
	}
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return 1;
}
