// SPDX-License-Identifier: GPL-2.0
/* Unit tests: --peers list parsing (comments, blanks, order, bad lines, limits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "bad_case.h"

#include "peers.h"

/* Parse s; returns the status. */
static int parse(const char *s, struct ls_peers *p, struct ls_err *err)
{
	return ls_peers_parse("f", s, strlen(s), p, err);
}

TEST(order_comments_blanks)
{
	struct ls_peers p;
	struct ls_err err;

	ASSERT_EQ(0, parse("# fleet\n\nnode1\n  node2\t# rack 2\n\t\n10.0.0.3\nfe80::1%eth0\n[::1]", &p, &err));
	ASSERT_EQ(5, p.n);
	EXPECT_STREQ("node1", p.v[0]);
	EXPECT_STREQ("node2", p.v[1]);
	EXPECT_STREQ("10.0.0.3", p.v[2]);
	EXPECT_STREQ("fe80::1%eth0", p.v[3]);
	/* last line without a newline; the brackets stripped (getaddrinfo takes none) */
	EXPECT_STREQ("::1", p.v[4]);
	ls_peers_free(&p);
	EXPECT_EQ(0, p.n);
	ASSERT_EQ(0, parse("a\r\nb\r\n", &p, &err));	/* CRLF files */
	ASSERT_EQ(2, p.n);
	EXPECT_STREQ("b", p.v[1]);
	ls_peers_free(&p);
}

TEST(bad_lists)
{
	static const struct bad_case cases[] = {
		{ "", "f: no peers" },
		{ "# nothing\n\n  \n", "f: no peers" },
		{ "a\nb\na\n", "f:3: a is listed twice" },
		{ "Node1\nnode1\n", "f:2: node1 is listed twice" },
		{ "[::1]\n::1\n", "f:2: ::1 is listed twice" },
		{ "[::1\n", "f:1: '[::1' is not [IPv6 address]" },
		{ "[]\n", "f:1: '[]' is not [IPv6 address]" },
		{ "[node1]\n", "f:1: '[node1]' is not [IPv6 address]" },
		{ "a]b\n", "f:1: 'a]b' is not a host name" },
		{ "a b\n", "f:1: 'a b' is not a host name" },
		{ "ok\nh;rm\n", "f:2: 'h;rm' is not a host name" },
		{ "a\n\0b\n", "f:2: NUL byte" },
	};
	struct ls_peers p;
	struct ls_err err;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = strlen(cases[i].in);

		if (strstr(cases[i].want, "NUL"))
			len = 5;
		memset(&err, 0, sizeof(err));
		ASSERT_EQ(-1, ls_peers_parse("f", cases[i].in, len, &p, &err)) TH_LOG("case %zu", i);
		assert_err_has(_metadata, &cases[i], err.msg);
		EXPECT_EQ(0, p.n);	/* nothing half-filled */
		EXPECT_EQ(NULL, p.v);
	}
}

TEST(limits)
{
	char name[LS_PEER_NAME_MAX + 2];
	struct ls_peers p;
	struct ls_err err;
	char *big;
	size_t n = 0;

	memset(name, 'h', sizeof(name));
	name[LS_PEER_NAME_MAX] = '\0';
	ASSERT_EQ(0, parse(name, &p, &err));	/* exactly the longest name */
	ls_peers_free(&p);
	name[LS_PEER_NAME_MAX] = 'h';
	name[LS_PEER_NAME_MAX + 1] = '\0';
	ASSERT_EQ(-1, parse(name, &p, &err));
	ASSERT_NE(NULL, strstr(err.msg, "longer than 255"));
	big = malloc((LS_PEERS_MAX + 1) * 8);
	ASSERT_NE(NULL, big);
	for (unsigned int i = 0; i <= LS_PEERS_MAX; i++)
		n += sprintf(big + n, "h%u\n", i);
	ASSERT_EQ(-1, ls_peers_parse("f", big, n, &p, &err));
	ASSERT_NE(NULL, strstr(err.msg, "more than 4096 peers"));
	/* one fewer fits */
	n = strrchr(big, 'h') - big;
	ASSERT_EQ(0, ls_peers_parse("f", big, n, &p, &err));
	EXPECT_EQ(LS_PEERS_MAX, p.n);
	ls_peers_free(&p);
	free(big);
}

/* Fleet tally: pairs walked in order, statuses 0 / 1 (some failed) / 2 (none started). */
TEST(fleet_status)
{
	static const int cases[][3] = {
		/* exit statuses of three pairs, then the fleet's */
		{ 0, 0, 0 }, { 0, 1, 0 }, { 2, 0, 0 }, { 2, 2, 1 }, { 1, 1, 1 },
	};
	static const int want[] = { LS_EXIT_OK, LS_EXIT_FAIL, LS_EXIT_FAIL, LS_EXIT_FAIL,
				    LS_EXIT_FAIL };
	struct ls_peers p;
	struct ls_err err;
	struct ls_fleet f;
	const char *peer;

	ASSERT_EQ(0, parse("a\nb\nc\n", &p, &err));
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		ls_fleet_init(&f, &p, "probe", true);
		ASSERT_EQ(3, f.n);
		for (size_t i = 0; i < f.n; i++) {
			peer = NULL;
			ls_fleet_next(&f, i, &peer);
			ASSERT_NE(NULL, peer);
			EXPECT_STREQ(p.v[i], peer);
			ls_fleet_done(&f, peer, cases[k][i], false);
		}
		EXPECT_EQ(want[k], ls_fleet_status(&f));
	}
	/* every pair unable to start: the fleet could not run at all */
	ls_fleet_init(&f, &p, "breakdown", true);
	for (size_t i = 0; i < f.n; i++)
		ls_fleet_done(&f, p.v[i], LS_EXIT_USAGE, false);
	EXPECT_EQ(LS_EXIT_USAGE, ls_fleet_status(&f));
	EXPECT_EQ(3, f.unstarted);
	ls_peers_free(&p);
	/* one pair from the command line: no host is substituted */
	ls_fleet_init(&f, NULL, "probe", false);
	EXPECT_EQ(1, f.n);
	peer = "cli";
	ls_fleet_next(&f, 0, &peer);
	EXPECT_STREQ("cli", peer);
	ls_fleet_done(&f, peer, LS_EXIT_FAIL, false);
	EXPECT_EQ(LS_EXIT_FAIL, ls_fleet_status(&f));
}

/* What the fleet runner's calls saw: labels and the host it set. */
struct fake_fleet {
	const int *rcs;
	unsigned int calls;
	const char *const *peer;
	char seen[4][80];
	char peer_seen[4][80];
};

/* A fake pair run: note the label and host, return the scripted status. */
static int fake_run(void *arg, const char *label, void *pair)
{
	struct fake_fleet *f = arg;

	snprintf(f->seen[f->calls], sizeof(f->seen[0]), "%s", label);
	snprintf(f->peer_seen[f->calls], sizeof(f->peer_seen[0]), "%s", *f->peer);
	return f->rcs[f->calls++];
}

TEST(fleet_run_visits_every_pair_and_decides_the_status)
{
	static const int mixed[3] = { LS_EXIT_OK, LS_EXIT_FAIL, LS_EXIT_USAGE };
	static const int none[3] = { LS_EXIT_USAGE, LS_EXIT_USAGE, LS_EXIT_USAGE };
	struct ls_err err;
	struct ls_peers p;
	const char *peer = NULL;
	struct fake_fleet f = { .rcs = mixed, .peer = &peer };
	struct ls_fleet_cmd fc = { .kind = "probe", .json = true, .peers = &p, .peer = &peer,
				   .port = 7, .run = fake_run, .arg = &f,
				   .failed_run_reports = true };

	ASSERT_EQ(0, parse("h1\nh2\nh3\n", &p, &err));
	EXPECT_EQ(LS_EXIT_FAIL, ls_fleet_run(&fc));
	EXPECT_EQ(3, f.calls);
	EXPECT_STREQ("h1:7", f.seen[0]);
	EXPECT_STREQ("h3:7", f.seen[2]);
	EXPECT_STREQ("h2", f.peer_seen[1]);
	/* no pair could start: exit 2 */
	f = (struct fake_fleet){ .rcs = none, .peer = &peer };
	EXPECT_EQ(LS_EXIT_USAGE, ls_fleet_run(&fc));
	EXPECT_EQ(3, f.calls);
	/* one PEER: its own status, the host left as the command line gave it */
	peer = "solo";
	fc.peers = NULL;
	f = (struct fake_fleet){ .rcs = mixed + 1, .peer = &peer };
	EXPECT_EQ(LS_EXIT_FAIL, ls_fleet_run(&fc));
	EXPECT_EQ(1, f.calls);
	EXPECT_STREQ("solo", f.peer_seen[0]);
	ls_peers_free(&p);
}

TEST_HARNESS_MAIN
