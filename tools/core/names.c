// SPDX-License-Identifier: GPL-2.0
/*
 * Names of what the ABI (include/uapi/latsplit.h) numbers: stages, softirq
 * vectors, observer handlers, and the decoding of histogram slots. The one
 * home of these tables for every command and report.
 */
#include "names.h"

#include <stddef.h>

#include "util.h"

static const char *const stage_names[LS_NR_STAGES] = LS_STAGE_NAMES;

static const char *const softirq_names[LS_NR_SOFTIRQS] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
	"SCHED", "HRTIMER", "RCU",
};

static const char *const handler_names[LS_NR_HANDLERS] = LS_HANDLER_NAMES;

/* Name of a stage. */
const char *ls_stage_name(unsigned int stage)
{
	return stage < LS_NR_STAGES ? stage_names[stage] : "unknown";
}

/* Name of softirq vector v ("NET_RX"), or "?" when out of range. */
const char *ls_softirq_name(unsigned int v)
{
	return v < LS_NR_SOFTIRQS ? softirq_names[v] : "?";
}

/* Name of handler h, or NULL when out of range. */
const char *ls_handler_name(unsigned int h)
{
	return h < LS_NR_HANDLERS ? handler_names[h] : NULL;
}

/* Stage, id and whether the id is meaningful, for ABI slot s (irqs: the watched IRQs). */
unsigned int ls_slot_stage(unsigned int s, const uint32_t *irqs, unsigned int nr_irqs,
			   uint32_t *id, bool *has_id)
{
	*has_id = true;
	*id = 0;
	if (s < LS_SLOT_COMPLETION) {
		*id = s < nr_irqs ? irqs[s] : 0;
		return LS_STAGE_HARDIRQ;
	}
	if (s < LS_SLOT_IRQ_THREAD) {
		s -= LS_SLOT_COMPLETION;
		*id = s < nr_irqs ? irqs[s] : 0;
		return LS_STAGE_COMPLETION;
	}
	if (s < LS_SLOT_SOFTIRQ_WAIT) {
		s -= LS_SLOT_IRQ_THREAD;
		*id = s < nr_irqs ? irqs[s] : 0;
		return LS_STAGE_IRQ_THREAD;
	}
	if (s < LS_SLOT_SOFTIRQ_RUN) {
		*id = s - LS_SLOT_SOFTIRQ_WAIT;
		return LS_STAGE_SOFTIRQ_WAIT;
	}
	if (s < LS_SLOT_NAPI_POLL) {
		*id = s - LS_SLOT_SOFTIRQ_RUN;
		return LS_STAGE_SOFTIRQ_RUN;
	}
	*has_id = false;
	if (s == LS_SLOT_NAPI_POLL)
		return LS_STAGE_NAPI_POLL;
	if (s == LS_SLOT_WAKEUP)
		return LS_STAGE_WAKEUP;
	if (s == LS_SLOT_INTERFERENCE)
		return LS_STAGE_INTERFERENCE;
	return LS_STAGE_PREEMPT;
}

/* True when slot s is meaningful with nr_irqs watched IRQs (IRQ slots in range). */
bool ls_slot_valid(unsigned int s, unsigned int nr_irqs)
{
	unsigned int irq_base[] = { LS_SLOT_HARDIRQ, LS_SLOT_COMPLETION,
				    LS_SLOT_IRQ_THREAD };

	for (size_t i = 0; i < ARRAY_SIZE(irq_base); i++)
		if (s >= irq_base[i] && s < irq_base[i] + LS_MAX_IRQS)
			return s - irq_base[i] < nr_irqs;
	return true;
}

/* Split a record written once for two stages (see names.h). */
int ls_record_untwin(struct ls_record *r, struct ls_record *twin)
{
	bool twinned = r->flags & LS_REC_F_INTF;

	r->flags &= (uint16_t)~LS_REC_F_INTF;
	if (!twinned || (r->stage != LS_STAGE_HARDIRQ && r->stage != LS_STAGE_SOFTIRQ_RUN))
		return 1;
	*twin = *r;
	twin->stage = LS_STAGE_INTERFERENCE;
	if (r->stage == LS_STAGE_SOFTIRQ_RUN)
		twin->id = LS_ID_SOFTIRQ_BASE + r->id;
	return 2;
}
