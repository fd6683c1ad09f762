// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: the storage flow, a closed-loop bulk writer that shares the
 * wire's egress queues with the guests' own frames.
 *
 *   flow DIR class=C [block=BYTES] [depth=N] [frame=BYTES] [ect=0|1]
 *            [spread=PCT] [seed=N]
 *   flow DIR off
 *
 * The flow stands for a storage client on DIR's sending node writing
 * BLOCK-byte blocks with DEPTH of them outstanding, as an NVMe-oF or
 * RDMA-storage initiator does: a block is issued the moment one of its
 * previous blocks has left the link. With spread=PCT each block's size is
 * drawn uniformly from BLOCK x [1 - PCT %, 1 + PCT %] (splitmix64, seed=N,
 * default 1; `flow` restarts it), as storage I/O sizes vary; a closed-loop
 * probe then meets the flow at every phase of a block instead of locking
 * to its boundaries. A block is FRAME-byte frames in class
 * C's FIFO: they take room in the class's byte limit, count toward its CE
 * threshold (and its max queued bytes), are serialized at the link rate,
 * and, being sent strictly by priority, hold a frame of a higher class for
 * at most the frame in progress. Once they have left the link they are
 * gone: the flow's receiver is the wire itself, so the guests spend no
 * CPU on it and only the queue it builds reaches the probe. Its frames
 * are not in the per-frame log nor in the class's rx/tx counters; the
 * `stats` member "flow" counts them, and each class's flow_tx_frames,
 * flow_tx_bytes, flow_ce_marked and flow_dropped (frames) count the flow's
 * share of that class. A block that does not fit the class limit (guest frames can fill
 * it) is dropped and issued again when a frame leaves the link: the
 * flow's own next block, or any other.
 * While no guest frame waits for the link the flow takes no wake-ups: its
 * departures are caught up on their own schedule when a frame arrives or
 * a command reads the state (dir_next), so it costs the host nothing the
 * guests could feel.
 */
#include "labwire_int.h"

#define FLOW_MIN_FRAME	64
#define FLOW_MAX_FRAME	9000
#define FLOW_MAX_BLOCK	(64ULL << 20)
#define FLOW_MAX_DEPTH	64
#define NKEYS(a)	(sizeof(a) / sizeof((a)[0]))

/* Frames per block of bytes (the last one is padded to a whole frame). */
static uint32_t flow_nfr(const struct flow *fl, uint64_t bytes)
{
	return (uint32_t)((bytes + fl->frame - 1) / fl->frame);
}

/* The most bytes fl can hold in its class: DEPTH of its largest blocks. */
uint64_t flow_room(const struct flow *fl)
{
	return (uint64_t)flow_nfr(fl, fl->block + fl->block * fl->spread / 100) * fl->frame *
	       fl->depth;
}

/* The size of fl's next block: BLOCK, or drawn from its spread. */
static uint64_t flow_block(struct flow *fl)
{
	uint64_t lo, span, b;

	if (!fl->spread)
		return fl->block;
	lo = fl->block - fl->block * fl->spread / 100;
	span = 2 * (fl->block * fl->spread / 100) + 1;
	b = lo + splitmix64(&fl->rng) % span;
	return b ? b : 1;
}

/* Issue blocks of d's flow at time t until DEPTH are outstanding. */
void flow_issue(struct dir *d, uint64_t t)
{
	struct flow *fl = &d->flow;
	uint64_t bytes, drops;
	struct frame *f;
	uint8_t why;
	int32_t idx;

	if (!d->rate)	/* without a rate blocks would leave at once, forever */
		fl->on = false;
	while (fl->on && fl->outstanding < fl->depth) {
		idx = slot_get(d, 0, &why);
		if (idx < 0) {
			fl->dropped++;
			return;
		}
		drops = fl->dropped;
		f = &d->slots[idx];
		slot_fill(f, &(struct frame){ 0 });
		bytes = flow_block(fl);
		f->pn = flow_nfr(fl, bytes);
		f->plen = fl->frame;
		f->len = f->pn * f->plen;
		f->cls = fl->cls;
		f->ecn_in = f->ecn_out = fl->ect ? 2 : 0;
		f->arrive = f->ready = t;
		f->blk_end = true;
		f->rule = -1;
		f->kind = KIND_OTHER;
		if (!fl->block_min || f->len < fl->block_min)
			fl->block_min = f->len;
		if (f->len > fl->block_max)
			fl->block_max = f->len;
		fl->outstanding++;
		fl->blocks++;
		egress_enqueue(d, idx);
		if (fl->dropped != drops)
			return;	/* no room: try again when a frame leaves */
	}
}

/*
 * A flow block left the link (or was dropped): count it. A block that left
 * makes room for the next; a dropped one is issued again only when a frame
 * leaves (flow_issue from link_send), never at once into the same full
 * queue.
 */
void flow_done(struct dir *d, const struct frame *f, bool sent, uint64_t t)
{
	struct flow *fl = &d->flow;
	bool end = f->blk_end;	/* f's slot is free: the next block may take it */

	if (sent) {
		fl->frames += f->pn;
		fl->bytes += f->len;
	} else {
		fl->dropped++;
	}
	if (end && fl->outstanding)
		fl->outstanding--;
	if (end && sent)
		flow_issue(d, t);
}

/* Parse flow's KEY=VALUE words into fl (which holds the defaults); 0 or -1. */
static int flow_parse(int argc, char **argv, struct flow *fl, struct sbuf *out)
{
	static const struct {
		const char *key;
		uint64_t lo, hi;
	} keys[] = {
		{ "class", 0, NR_CLASSES - 1 }, { "block", 1, FLOW_MAX_BLOCK },
		{ "depth", 1, FLOW_MAX_DEPTH }, { "frame", FLOW_MIN_FRAME, FLOW_MAX_FRAME },
		{ "ect", 0, 1 }, { "spread", 0, 100 }, { "seed", 0, UINT64_MAX - 1 },
	};
	uint64_t v[NKEYS(keys)] = { NONE, fl->block, fl->depth, fl->frame, fl->ect, 0, 1 };
	unsigned int k;
	char *val;

	for (int i = 2; i < argc; i++) {
		val = split_kv(argv[i]);
		for (k = 0; val && k < NKEYS(keys); k++) {
			if (!strcmp(argv[i], keys[k].key))
				break;
		}
		if (!val || k == NKEYS(keys)) {
			sb_printf(out, "error: flow: '%s' is not class=, block=, depth=, frame=,"
				  " ect=, spread= or seed=\n", argv[i]);
			return -1;
		}
		if (!parse_num(val, keys[k].hi, &v[k]) || v[k] < keys[k].lo) {
			sb_printf(out, "error: flow: %s=%s: not a number in %" PRIu64 "..%" PRIu64
				  "\n", keys[k].key, val, keys[k].lo, keys[k].hi);
			return -1;
		}
	}
	if (v[0] == NONE) {
		sb_printf(out, "error: flow: class=C is required\n");
		return -1;
	}
	fl->cls = (uint8_t)v[0];
	fl->block = v[1];
	fl->depth = (uint32_t)v[2];
	fl->frame = (uint32_t)v[3];
	fl->ect = v[4] != 0;
	fl->spread = (uint32_t)v[5];
	fl->seed = v[6];
	return 0;
}

/* flow DIR class=C [block=] [depth=] [frame=] [ect=] | flow DIR off. */
int cmd_flow(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc >= 3 ? parse_dir(argv[1]) : 0;
	struct flow fl = { .block = 65536, .depth = 4, .frame = 1500, .ect = true };
	uint64_t bytes;

	if (!mask) {
		sb_printf(out, "error: usage: flow ab|ba|both class=C [block=BYTES] [depth=N]"
			  " [frame=BYTES] [ect=0|1] | flow DIR off\n");
		return -1;
	}
	if (argc == 3 && !strcmp(argv[2], "off")) {
		for (unsigned int i = 0; i < NR_DIRS; i++) {
			if (mask & (1U << i))
				W.d[i].flow.on = false;	/* queued blocks drain */
		}
		sb_printf(out, "ok\n");
		return 0;
	}
	if (flow_parse(argc, argv, &fl, out))
		return -1;
	bytes = flow_room(&fl);
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		if ((mask & (1U << i)) && !W.d[i].rate) {
			sb_printf(out, "error: flow: %s has no link rate (link %s rate=BPS first)\n",
				  dir_name[i], dir_name[i]);
			return -1;
		}
		if ((mask & (1U << i)) && bytes > W.d[i].limit[fl.cls]) {
			sb_printf(out, "error: flow: depth x block = %" PRIu64 " bytes exceeds"
				  " class %u's limit of %" PRIu64 " in %s (class %s %u limit=BYTES)\n",
				  bytes, fl.cls, W.d[i].limit[fl.cls], dir_name[i], dir_name[i],
				  fl.cls);
			return -1;
		}
		if ((mask & (1U << i)) && W.d[i].flow.on) {
			sb_printf(out, "error: flow: %s already has a flow (flow %s off first)\n",
				  dir_name[i], dir_name[i]);
			return -1;
		}
	}
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		struct flow *f = &W.d[i].flow;

		if (!(mask & (1U << i)))
			continue;
		f->on = true;
		f->cls = fl.cls;
		f->block = fl.block;
		f->depth = fl.depth;
		f->frame = fl.frame;
		f->ect = fl.ect;
		f->spread = fl.spread;
		f->seed = f->rng = fl.seed;
		f->block_min = f->block_max = 0;
		flow_issue(&W.d[i], mono_ns());
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* Write d's flow as the JSON member "flow". */
void flow_json(struct sbuf *sb, const struct dir *d)
{
	const struct flow *fl = &d->flow;

	sb_printf(sb, ",\"flow\":{\"on\":%s,\"class\":%u,\"block\":%" PRIu64 ",\"depth\":%u"
		  ",\"frame\":%u,\"ect\":%u,\"spread\":%u,\"seed\":%" PRIu64
		  ",\"block_min\":%" PRIu64 ",\"block_max\":%" PRIu64
		  ",\"outstanding\":%u,\"blocks\":%" PRIu64
		  ",\"frames\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"marked\":%" PRIu64
		  ",\"dropped\":%" PRIu64 ",\"preempted\":%" PRIu64 "}",
		  fl->on ? "true" : "false", fl->cls, fl->block, fl->depth, fl->frame,
		  fl->ect ? 1U : 0U, fl->spread, fl->seed, fl->block_min, fl->block_max,
		  fl->outstanding, fl->blocks, fl->frames, fl->bytes,
		  fl->marked, fl->dropped, fl->preempted);
}
