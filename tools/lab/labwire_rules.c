// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: the rules (fault injection): matching a frame, its loss and
 * delay, and the `rule` and `norule` commands that load them.
 */
#include "labwire_int.h"

/* Next value of a splitmix64 generator. */
uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Whether f's PSN passes r's psn= selection (even, odd or hash). */
static bool psn_selected(const struct rule *r, const struct frame *f)
{
	if (r->parity < 0)
		return true;
	if (f->psn < 0)
		return false;
	if (r->parity == 2)
		return ls_psn_hash_bit((unsigned int)f->psn);
	return (f->psn & 1) == r->parity;
}

/* Whether f matches r's fields (every= aside). */
static bool rule_fields_match(const struct rule *r, const struct frame *f)
{
	if (r->roce >= 0 && (f->kind == KIND_ROCE) != (r->roce == 1))
		return false;
	if (r->op >= 0 && f->opclass != r->op)
		return false;
	if (!psn_selected(r, f))
		return false;
	if (r->dqpn >= 0 && f->dqpn != r->dqpn)
		return false;
	if (r->dscp >= 0 && (!f->ipver || f->dscp != r->dscp))
		return false;
	if (r->dport >= 0 && f->dport != r->dport)
		return false;
	return true;
}

/* Run f through d's rules: true when f is lost; sets f->rule and f->delay. */
bool rules_apply(struct dir *d, struct frame *f)
{
	struct rule *r;
	int64_t delay;
	unsigned int i;

	f->rule = -1;
	f->delay = 0;
	for (i = 0; i < NR_RULES; i++) {
		r = &d->rules[i];
		if (!r->used || !rule_fields_match(r, f))
			continue;
		r->seen++;
		if (r->every > 1 && r->seen % r->every)
			continue;
		f->rule = (int8_t)i;
		r->hits++;
		if (r->loss && splitmix64(&r->rng) % 1000000 < r->loss) {
			r->lost++;
			return true;
		}
		delay = (int64_t)r->delay;
		if (r->jitter)
			delay += (int64_t)(splitmix64(&r->rng) % (2 * r->jitter + 1)) -
				 (int64_t)r->jitter;
		f->delay = delay > 0 ? (uint64_t)delay : 0;
		if (f->delay)
			r->delayed++;
		return false;
	}
	return false;
}

/* Restart a rule's PRNG and every= counter and zero its counts. */
void rule_restart(struct rule *r)
{
	r->rng = r->seed;
	r->seen = r->hits = r->lost = r->delayed = 0;
}

/* Parse one rule word into r; an error message in out on failure. */
static int rule_word(struct rule *r, char *word, struct sbuf *out)
{
	static const struct { const char *key; uint64_t max; } nums[] = {
		{ "roce", 1 }, { "dqpn", 0xffffff }, { "dscp", 63 }, { "dport", 65535 },
		{ "every", 1000000000 }, { "delay", MAX_DELAY_NS },
		{ "jitter", MAX_DELAY_NS }, { "loss", 1000000 }, { "seed", UINT64_MAX },
	};
	char *val = split_kv(word);
	uint64_t v;
	unsigned int i;

	if (!val) {
		sb_printf(out, "error: rule: '%s' is not FIELD=VALUE\n", word);
		return -1;
	}
	if (!strcmp(word, "op")) {
		for (i = OP_REQ; i <= OP_ACK; i++)
			if (!strcmp(val, op_name[i]))
				r->op = (int)i;
		if (r->op < 0)
			sb_printf(out, "error: rule: op=%s: must be req, resp or ack\n", val);
		return r->op < 0 ? -1 : 0;
	}
	if (!strcmp(word, "psn")) {
		r->parity = !strcmp(val, "even") ? 0 : !strcmp(val, "odd") ? 1 :
			    !strcmp(val, "hash") ? 2 : -1;
		if (r->parity < 0)
			sb_printf(out, "error: rule: psn=%s: must be even, odd or hash\n", val);
		return r->parity < 0 ? -1 : 0;
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (!strcmp(word, nums[i].key))
			break;
	if (i == sizeof(nums) / sizeof(nums[0])) {
		sb_printf(out, "error: rule: unknown field '%s' (fields: roce op psn dqpn dscp"
			  " dport every delay jitter loss seed)\n", word);
		return -1;
	}
	if (!parse_num(val, nums[i].max, &v) || (i == 4 && !v)) {
		sb_printf(out, "error: rule: %s=%s: not a number in %s..%" PRIu64 "\n", word,
			  val, i == 4 ? "1" : "0", nums[i].max);
		return -1;
	}
	switch (i) {
	case 0: r->roce = (int)v; break;
	case 1: r->dqpn = (int64_t)v; break;
	case 2: r->dscp = (int64_t)v; break;
	case 3: r->dport = (int64_t)v; break;
	case 4: r->every = v; break;
	case 5: r->delay = v; break;
	case 6: r->jitter = v; break;
	case 7: r->loss = v; break;
	default: r->seed = v; break;
	}
	return 0;
}

/* rule DIR N [FIELD=V...]: load rule N (validated as a whole first). */
int cmd_rule(int argc, char **argv, struct sbuf *out)
{
	struct rule r = { .used = true, .roce = -1, .op = -1, .parity = -1,
			  .dqpn = -1, .dscp = -1, .dport = -1, .seed = 1 };
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	uint64_t n;

	if (argc < 3 || !mask || !parse_num(argv[2], NR_RULES - 1, &n)) {
		sb_printf(out, "error: usage: rule ab|ba|both N(0-%d) [FIELD=VALUE...]\n",
			  NR_RULES - 1);
		return -1;
	}
	for (int i = 3; i < argc; i++) {
		char word[CTL_LINE];

		snprintf(word, sizeof(word), "%s", argv[i]);
		if (rule_word(&r, word, out))
			return -1;
	}
	rule_restart(&r);
	for (unsigned int i = 0; i < NR_DIRS; i++)
		if (mask & (1U << i))
			W.d[i].rules[n] = r;
	sb_printf(out, "ok\n");
	return 0;
}

/* norule DIR [N]: clear rule N or every rule. */
int cmd_norule(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	uint64_t n = NR_RULES;

	if (argc < 2 || argc > 3 || !mask ||
	    (argc == 3 && !parse_num(argv[2], NR_RULES - 1, &n))) {
		sb_printf(out, "error: usage: norule ab|ba|both [N(0-%d)]\n", NR_RULES - 1);
		return -1;
	}
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		if (!(mask & (1U << i)))
			continue;
		for (unsigned int k = 0; k < NR_RULES; k++)
			if (n == NR_RULES || n == k)
				memset(&W.d[i].rules[k], 0, sizeof(W.d[i].rules[k]));
	}
	sb_printf(out, "ok\n");
	return 0;
}
