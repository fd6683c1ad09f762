/* SPDX-License-Identifier: GPL-2.0 */
/* Names of the ABI's numbers (stages, softirq vectors, handlers) and histogram slot decoding. */
#ifndef LS_NAMES_H
#define LS_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "../include/uapi/latsplit.h"

/* Name of a stage ("hardirq", "softirq_wait", ...), "unknown" out of range. */
const char *ls_stage_name(unsigned int stage);
/* Name of softirq vector v ("NET_RX"), or "?" when out of range. */
const char *ls_softirq_name(unsigned int v);
/* Name of observer handler h, or NULL when out of range. */
const char *ls_handler_name(unsigned int h);
/*
 * Stage of ABI histogram slot s, and its id: the IRQ (irqs[nr_irqs], the
 * watched IRQs) or the softirq vector; has_id false for per-CPU stages.
 */
unsigned int ls_slot_stage(unsigned int s, const uint32_t *irqs, unsigned int nr_irqs,
			   uint32_t *id, bool *has_id);
/* True when slot s is meaningful with nr_irqs watched IRQs (IRQ slots in range). */
bool ls_slot_valid(unsigned int s, unsigned int nr_irqs);
/*
 * Split a record latsplit.ko wrote once for two stages (LS_REC_F_INTF on a
 * HARDIRQ or SOFTIRQ_RUN): clears the flag in *r, fills *twin with its
 * INTERFERENCE record and returns 2; else 1 (the flag on any other stage
 * is cleared and ignored).
 */
int ls_record_untwin(struct ls_record *r, struct ls_record *twin);

#endif /* LS_NAMES_H */
