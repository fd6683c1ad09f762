# SPDX-License-Identifier: GPL-2.0
#
# latsplit: one top-level build for the module, the eBPF object and the CLI.
#
#   make              build module (KVER), eBPF, CLI and the lab's wire (installs nothing)
#   make deps         install the missing packages (tools/install-deps.sh, idempotent)
#   make check        deps, build everything and run every test (unit, host, lab)
#   make demo         deps, boot the two-node lab and run the main job in it
#   make bench        deps, benchmarks (ratios against a reference in the same run)
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
# The CLI's directories (Documentation/architecture.rst); every header is
# found by its name through them.
TOOL_DIRS := tools tools/core tools/sys tools/probe tools/backend tools/cli tools/breakdown
TOOL_INC := $(addprefix -I$(CURDIR)/,$(TOOL_DIRS))
ALL_CFLAGS := $(CFLAGS) $(CFLAGS_WARN) -std=gnu11 -D_GNU_SOURCE -I$(CURDIR) $(TOOL_INC) -I$(B)/ebpf -MMD -MP
# libmicrohttpd: the agent's /metrics endpoint (tools/cli/cmd_agent.c); the core links none of these.
LDLIBS  := -libverbs -lrdmacm -lbpf -lelf -lz -lm -lpthread -lcrypto -lmicrohttpd

# The core: pure computation (statistics, histograms, the split and the
# causal attribution, the clock offset, the verdict, the transmission and
# training models, significance tests, JSON series) with no output of its
# own: libls-core.a, linked by the CLI, the unit tests and the fuzzers.
CORE_NAMES := util stats hist split causal verdict model signif jseries jsonr wire \
	ctr_diff probe_conv names analysis baseline svg compare agent_sched
TOOL_SRCS := $(wildcard $(addsuffix /*.c,$(TOOL_DIRS)))
CORE_SRCS := $(filter $(addprefix %/,$(addsuffix .c,$(CORE_NAMES))),$(TOOL_SRCS))
CLI_SRCS  := $(filter-out $(CORE_SRCS),$(TOOL_SRCS))
CORE_OBJS := $(patsubst tools/%.c,$(B)/tools/%.o,$(CORE_SRCS))
CLI_OBJS  := $(patsubst tools/%.c,$(B)/tools/%.o,$(CLI_SRCS))
LIB_OBJS  := $(filter-out %/latsplit.o,$(CLI_OBJS))
CORE_LIB  := $(B)/libls-core.a

BPF_SRCS := $(wildcard ebpf/*.bpf.c)
BPF_OBJS := $(patsubst ebpf/%.bpf.c,$(B)/ebpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst ebpf/%.bpf.c,$(B)/ebpf/%.skel.h,$(BPF_SRCS))

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRCS))

KSFT_DIR := $(B)/ksft
KSFT_HDRS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h

.PHONY: web-deps all deps kmod modules-all ebpf tools unit check demo bench fuzz doc clean install lab faultinj-all need-krels
all: kmod ebpf tools lab

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
	+$(MAKE) -C $(2) M=$(B)/kmod/$(1) W=1 modules
endef

kmod:
	$(call kmod_build,$(KREL),$(KDIR))

# One target per kernel, so that `make -j` builds them side by side.
modules-all: need-krels $(addprefix kmod-for-,$(KRELS_ALL))

kmod-for-%:
	$(call kmod_build,$*,/lib/modules/$*/build)

need-krels:
	@test -n "$(strip $(KRELS_ALL))" || { echo "no lab kernels installed: run 'make deps'" >&2; exit 1; }

# ---- lab: the host-side wire and the in-guest fault injector -------------
# labwire forwards the two guests' Ethernet frames (tools/lab/labwire*.c);
# ls_faultinj.ko (tests/lab/faultinj/) adds known softirq work to selected
# RoCEv2 packets in a guest. Tests only: neither is installed.
LABWIRE_SRCS := $(addprefix tools/lab/,labwire.c labwire_loop.c labwire_path.c \
	labwire_classify.c labwire_rules.c labwire_log.c labwire_stats.c labwire_ctl.c \
	labwire_flow.c)
$(B)/lab/labwire: $(LABWIRE_SRCS) tools/lab/labwire_int.h tools/lab/roce_bth.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CFLAGS_WARN) -std=gnu11 -D_GNU_SOURCE -o $@ $(LABWIRE_SRCS) -lm

# hostile_peer (tests/lab/hostile_peer.c): a misbehaving prober for the
# responder's limits test, built from the project's own OOB code.
$(B)/tests/hostile_peer: tests/lab/hostile_peer.c $(B)/tools/probe/oob.o $(B)/tools/probe/auth.o $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/tools/probe/oob.o $(B)/tools/probe/auth.o $(CORE_LIB) -lcrypto -lm

lab: $(B)/lab/labwire $(B)/tests/hostile_peer

faultinj-all: need-krels $(addprefix faultinj-for-,$(KRELS_ALL))

faultinj-for-%:
	@test -d /lib/modules/$*/build || { echo "no kernel build tree for '$*': run 'make deps' (linux-headers)" >&2; exit 1; }
	@mkdir -p $(B)/faultinj/$*
	@cp -p tests/lab/faultinj/Kbuild tests/lab/faultinj/*.c tools/lab/roce_bth.h $(B)/faultinj/$*/
	+$(MAKE) -C /lib/modules/$*/build M=$(B)/faultinj/$* W=1 modules

# ---- eBPF ----------------------------------------------------------------
$(B)/vmlinux.h:
	@mkdir -p $(@D)
	@test -r /sys/kernel/btf/vmlinux || { echo "no /sys/kernel/btf/vmlinux: this kernel has no BTF, cannot generate vmlinux.h" >&2; exit 1; }
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

# The BPF target architecture is the build host's (libbpf's bpf_tracing.h names).
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' -e 's/aarch64.*/arm64/' \
	-e 's/armv.*/arm/' -e 's/s390x/s390/' -e 's/ppc64.*/powerpc/' -e 's/riscv64/riscv/' \
	-e 's/loongarch64/loongarch/' -e 's/mips.*/mips/')

$(B)/ebpf/%.bpf.o: ebpf/%.bpf.c $(B)/vmlinux.h include/uapi/latsplit.h $(wildcard ebpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(B) -I$(CURDIR) -c $< -o $@

$(B)/ebpf/%.skel.h: $(B)/ebpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@.tmp && mv $@.tmp $@

ebpf: $(BPF_OBJS) $(BPF_SKELS)

# ---- CLI -----------------------------------------------------------------
# Only the eBPF backend includes the skeleton; nothing else waits for it.
$(B)/tools/%.o: tools/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(filter %/backend_ebpf.o,$(CLI_OBJS)): $(BPF_SKELS)

$(CORE_LIB): $(CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/latsplit: $(CLI_OBJS) $(CORE_LIB)
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

# A unit test of the core links libls-core.a alone; the others (the
# commands' own parts, the OOB protocol, sysfs readers) the CLI's objects too.
UNIT_CORE := agent_sched analysis causal compare_stats hist jseries model names probe_limits split svg \
	verdict wire
UNIT_CORE_BINS := $(patsubst %,$(B)/tests/unit/%,$(UNIT_CORE))

$(UNIT_CORE_BINS): $(B)/tests/unit/%: tests/unit/%.c $(CORE_LIB) $(KSFT_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wno-sign-compare -I$(KSFT_DIR) -o $@ $< $(CORE_LIB) -lm

$(filter-out $(UNIT_CORE_BINS),$(UNIT_BINS)): $(B)/tests/unit/%: tests/unit/%.c $(LIB_OBJS) $(CORE_LIB) $(KSFT_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wno-sign-compare -I$(KSFT_DIR) -o $@ $< $(LIB_OBJS) $(CORE_LIB) $(LDLIBS)

unit: $(UNIT_BINS)

# The HTML report's test tools (html-validate, vnu-jar, playwright-core) from the npm
# registry, pinned by tests/web/package-lock.json; node_modules is not tracked.
WEB_DIR := tests/web
WEB_STAMP := $(WEB_DIR)/node_modules/.package-lock.json

$(WEB_STAMP): $(WEB_DIR)/package.json $(WEB_DIR)/package-lock.json
	cd $(WEB_DIR) && npm ci --no-audit --no-fund --loglevel=error

web-deps: $(WEB_STAMP)

check: deps
	@$(MAKE) --no-print-directory -j$(shell nproc) modules-all faultinj-all ebpf tools lab unit fuzz-build web-deps
	@bash tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@bash tools/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all web-deps
	@bash tests/bench.sh

clean:
	rm -rf $(B)

-include $(wildcard $(B)/tools/*.d $(B)/tools/*/*.d)

# ---- fuzzing (libFuzzer) -------------------------------------------------
# Every tests/fuzz/NAME_fuzz.c is a libFuzzer target linked against the
# tools/ objects rebuilt with clang and ASan (the core as its own
# libls-core.a). Seeds: tests/fuzz/seeds/NAME/, an optional dictionary
# tests/fuzz/NAME.dict; the growing corpus lives in build/fuzz/corpus/NAME. `fuzz-short` (run by `make check`) gives each
# target FUZZ_SHORT_SECS, `fuzz` gives FUZZ_SECS.
FUZZ_SRCS := $(wildcard tests/fuzz/*_fuzz.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRCS))
FUZZ_CORE_OBJS := $(patsubst tools/%.c,$(B)/fuzz/tools/%.o,$(CORE_SRCS))
FUZZ_LIB_OBJS := $(patsubst tools/%.c,$(B)/fuzz/tools/%.o,$(filter-out %/latsplit.c,$(CLI_SRCS)))
FUZZ_CFLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -I$(CURDIR) $(TOOL_INC) -I$(B)/ebpf
FUZZ_SHORT_SECS ?= 10
FUZZ_SECS ?= 600

.PHONY: fuzz-short fuzz-build doc install install-bin install-man install-dkms install-agent uninstall

$(B)/fuzz/tools/%.o: tools/%.c
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(filter %/backend_ebpf.o,$(FUZZ_LIB_OBJS)): $(BPF_SKELS)

$(B)/fuzz/libls-core.a: $(FUZZ_CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/fuzz/libls.a: $(FUZZ_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/fuzz/%_fuzz: tests/fuzz/%_fuzz.c $(B)/fuzz/libls.a $(B)/fuzz/libls-core.a
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(B)/fuzz/libls.a $(B)/fuzz/libls-core.a $(LDLIBS) -o $@

fuzz-build: $(FUZZ_BINS)

fuzz-short: fuzz-build
	@bash tests/fuzz/run.sh $(FUZZ_SHORT_SECS) $(FUZZ_BINS)

fuzz: fuzz-build
	@bash tests/fuzz/run.sh $(FUZZ_SECS) $(FUZZ_BINS)

# ---- documentation -------------------------------------------------------
# One man page (section 8) per Documentation/latsplit*.rst, built with
# rst2man (python3-docutils); any docutils warning is an error.
RST2MAN ?= rst2man
MAN_SRCS := $(wildcard Documentation/latsplit*.rst)
MAN_PAGES := $(patsubst Documentation/%.rst,$(B)/man/%.8,$(MAN_SRCS))

$(B)/man/%.8: Documentation/%.rst
	@mkdir -p $(@D)
	$(RST2MAN) --halt=warning --exit-status=warning $< $@.tmp && mv $@.tmp $@

doc: $(MAN_PAGES)

# ---- install -------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]: the CLI (the eBPF object is
# embedded in it as a skeleton, nothing else to install), man pages, and the
# module source for DKMS under /usr/src/latsplit-VERSION with a dkms.conf,
# so `dkms install latsplit/VERSION` builds it and rebuilds it on every new
# kernel (AUTOINSTALL).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DKMS_SRCDIR ?= /usr/src
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
DATADIR ?= $(PREFIX)/share/latsplit
MAIN_SRC := tools/cli/commands.h
VERSION ?= $(shell sed -n 's/^\#define LS_VERSION "\(.*\)"/\1/p' $(MAIN_SRC))
DKMS_DIR := $(DESTDIR)$(DKMS_SRCDIR)/latsplit-$(VERSION)

install: install-bin install-man install-dkms install-agent

install-bin: $(B)/latsplit
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(B)/latsplit $(DESTDIR)$(BINDIR)/latsplit

install-man: $(MAN_PAGES)
	install -d $(DESTDIR)$(MANDIR)/man8
	$(if $(MAN_PAGES),install -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man8/)

install-dkms:
	@test -n "$(VERSION)" || { echo "cannot read LS_VERSION from $(MAIN_SRC)" >&2; exit 1; }
	install -d $(DKMS_DIR)/kmod $(DKMS_DIR)/include/uapi
	install -m 0644 Kbuild $(DKMS_DIR)/Kbuild
	install -m 0644 $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild $(DKMS_DIR)/kmod/
	install -m 0644 include/uapi/latsplit.h $(DKMS_DIR)/include/uapi/
	sed 's/@VERSION@/$(VERSION)/' kmod/dkms.conf.in > $(DKMS_DIR)/dkms.conf
	chmod 0644 $(DKMS_DIR)/dkms.conf

# The agent's systemd unit (paths filled in), a sample peers file beside
# where the unit reads the real one, and the Prometheus alerting rules.
install-agent:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/latsplit $(DESTDIR)$(DATADIR)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		packaging/latsplit-agent.service.in > $(DESTDIR)$(SYSTEMDUNITDIR)/latsplit-agent.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/latsplit-agent.service
	install -m 0644 packaging/peers.sample $(DESTDIR)$(SYSCONFDIR)/latsplit/peers.sample
	install -m 0644 packaging/latsplit.rules.yml $(DESTDIR)$(DATADIR)/latsplit.rules.yml

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/latsplit
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/latsplit-agent.service
	rm -f $(DESTDIR)$(SYSCONFDIR)/latsplit/peers.sample $(DESTDIR)$(DATADIR)/latsplit.rules.yml
	-rmdir $(DESTDIR)$(SYSCONFDIR)/latsplit $(DESTDIR)$(DATADIR) 2>/dev/null
	rm -f $(patsubst $(B)/man/%,$(DESTDIR)$(MANDIR)/man8/%,$(MAN_PAGES))
	rm -rf $(DKMS_DIR)
