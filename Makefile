# SPDX-License-Identifier: GPL-2.0
#
# latsplit: one top-level build for the module, the eBPF object and the CLI.
#
#   make              install missing packages, build module (KVER), eBPF, CLI
#   make check        build everything and run every test (unit, host, lab)
#   make demo         boot the two-node lab and run the main job in it
#   make bench        benchmarks (ratios against a reference in the same run)
#   make fuzz         longer libFuzzer runs
#   make modules-all  build latsplit.ko for every installed lab kernel
#
# KVER picks the kernel: 6.1 (default), 6.12, 6.1-rt, or a full release
# string from /lib/modules. KDIR overrides the build tree.

SHELL := /bin/bash
B := $(CURDIR)/build

# ---- kernels -----------------------------------------------------------
kver_of = $(shell ls -1 /lib/modules 2>/dev/null | grep -E '$(1)' | sort -V | tail -n 1)
KVER_6_1   := $(call kver_of,^6\.1\.[0-9]+-[0-9]+-amd64$$)
KVER_6_12  := $(call kver_of,^6\.12\.[0-9.]+\+deb[0-9]+-amd64$$)
KVER_6_1RT := $(call kver_of,^6\.1\.[0-9]+-[0-9]+-rt-amd64$$)

KVER ?= 6.1
resolve_kver = $(if $(filter 6.1,$(1)),$(KVER_6_1),$(if $(filter 6.12,$(1)),$(KVER_6_12),$(if $(filter 6.1-rt rt,$(1)),$(KVER_6_1RT),$(1))))
KREL := $(call resolve_kver,$(KVER))
KDIR ?= /lib/modules/$(KREL)/build
KRELS_ALL := $(KVER_6_1) $(KVER_6_12) $(KVER_6_1RT)

# ---- user space ----------------------------------------------------------
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
CFLAGS_WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2 -Wno-format-truncation
CFLAGS  ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(CFLAGS_WARN) -std=gnu11 -D_GNU_SOURCE -I$(CURDIR) -I$(B)/ebpf -MMD -MP
LDLIBS  := -libverbs -lrdmacm -lbpf -lelf -lz -lm -lpthread

TOOL_SRCS := $(wildcard tools/*.c)
TOOL_OBJS := $(patsubst tools/%.c,$(B)/tools/%.o,$(TOOL_SRCS))
LIB_OBJS  := $(filter-out $(B)/tools/latsplit.o,$(TOOL_OBJS))

BPF_SRCS := $(wildcard ebpf/*.bpf.c)
BPF_OBJS := $(patsubst ebpf/%.bpf.c,$(B)/ebpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst ebpf/%.bpf.c,$(B)/ebpf/%.skel.h,$(BPF_SRCS))

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRCS))

KSFT_DIR := $(B)/ksft
KSFT_HDRS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h

.PHONY: all deps kmod modules-all ebpf tools unit check demo bench fuzz doc clean install lab
all: deps
	@$(MAKE) --no-print-directory kmod ebpf tools

deps:
	@bash tools/install-deps.sh

# ---- kernel module -------------------------------------------------------
# kbuild writes its outputs next to the sources, so each kernel gets its own
# copy of the tree under build/kmod/RELEASE and the source tree stays clean.
define kmod_build
	@test -d /lib/modules/$(1)/build || { echo "no kernel build tree for '$(1)': run 'make deps' (linux-headers)" >&2; exit 1; }
	@mkdir -p $(B)/kmod/$(1)/include
	@cp -p Kbuild $(B)/kmod/$(1)/
	@cp -pr kmod $(B)/kmod/$(1)/
	@cp -pr include/uapi $(B)/kmod/$(1)/include/
	$(MAKE) -C $(2) M=$(B)/kmod/$(1) W=1 modules
endef

kmod:
	$(call kmod_build,$(KREL),$(KDIR))

modules-all:
	@test -n "$(strip $(KRELS_ALL))" || { echo "no lab kernels installed: run 'make deps'" >&2; exit 1; }
	@for k in $(KRELS_ALL); do \
		$(MAKE) --no-print-directory kmod KVER=$$k KDIR=/lib/modules/$$k/build || exit 1; \
	done

# ---- eBPF ----------------------------------------------------------------
$(B)/vmlinux.h:
	@mkdir -p $(@D)
	@test -r /sys/kernel/btf/vmlinux || { echo "no /sys/kernel/btf/vmlinux: this kernel has no BTF, cannot generate vmlinux.h" >&2; exit 1; }
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/ebpf/%.bpf.o: ebpf/%.bpf.c $(B)/vmlinux.h include/uapi/latsplit.h $(wildcard ebpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(B) -I$(CURDIR) -c $< -o $@

$(B)/ebpf/%.skel.h: $(B)/ebpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@.tmp && mv $@.tmp $@

ebpf: $(BPF_OBJS) $(BPF_SKELS)

# ---- CLI -----------------------------------------------------------------
$(B)/tools/%.o: tools/%.c $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(B)/latsplit: $(TOOL_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

tools: $(B)/latsplit

# ---- tests ---------------------------------------------------------------
# The kselftest harness comes from Debian's linux-source package, not from git.
$(KSFT_HDRS):
	@mkdir -p $(KSFT_DIR)
	@test -r /usr/src/linux-source-6.1.tar.xz || { echo "no /usr/src/linux-source-6.1.tar.xz: run 'make deps' (linux-source-6.1)" >&2; exit 1; }
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C $(KSFT_DIR) --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	@touch $(KSFT_HDRS)

$(B)/tests/unit/%: tests/unit/%.c $(LIB_OBJS) $(KSFT_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wno-sign-compare -I$(KSFT_DIR) -o $@ $< $(LIB_OBJS) $(LDLIBS)

unit: $(UNIT_BINS)

check: deps
	@$(MAKE) --no-print-directory modules-all ebpf tools unit
	@bash tests/run.sh

demo: all
	@bash tools/demo.sh

bench: all
	@bash tests/bench.sh

clean:
	rm -rf $(B)

-include $(wildcard $(B)/tools/*.d)
