// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for `latsplit report` (tools/cli/report_*.c, the plot
 * geometry of tools/core/svg.c): any input is either refused with a message
 * or rendered into a page that starts with the doctype and ends with
 * </html>, without a crash, leak or sanitizer report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* One input: read it as a stream of documents and render the page. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_report r = { 0 };
	struct ls_err err = { 0 };
	struct ls_sb page = { 0 };
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!ls_report_add_text(&r, "fuzz.json", text, size, &err)) {
		if (ls_report_render(&r, &page, &err)) {
			if (!err.msg[0])
				abort();	/* a refusal must say why */
		} else if (strncmp(page.s, "<!DOCTYPE html>", 15) ||
			   !strstr(page.s + page.len - 9, "</html>")) {
			abort();
		}
	} else if (!err.msg[0]) {
		abort();
	}
	ls_sb_free(&page);
	ls_report_free(&r);
	return 0;
}
