/* SPDX-License-Identifier: GPL-2.0 */
/* The log-linear histograms of the ABI (struct ls_hist, include/uapi/latsplit.h): add, merge, quantile. */
#ifndef LS_HIST_H
#define LS_HIST_H

#include <stdint.h>

#include "../include/uapi/latsplit.h"

void ls_hist_add(struct ls_hist *h, uint64_t v);
void ls_hist_merge(struct ls_hist *dst, const struct ls_hist *src);
/* Value at quantile q in [0,1]: midpoint of the bucket holding it (exact below 16 ns, max for q=1). */
double ls_hist_quantile(const struct ls_hist *h, double q);

#endif /* LS_HIST_H */
