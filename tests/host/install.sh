#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make install` into a scratch DESTDIR: the CLI runs and reports the
# version the DKMS tree is named after; every man page is installed, valid
# groff and found by man(1) through MANPATH; dkms.conf's fields point at
# files that exist, and the DKMS tree builds latsplit.ko the way dkms would
# (its MAKE line, against an installed kernel's build tree); the agent's
# systemd unit points at the installed binary and the peers file, is
# hardened (capabilities bounded to the backends', ProtectSystem=strict...)
# without closing the device policy (verbs need /dev/infiniband)
# and passes `systemd-analyze verify`; the sample peers file parses as a
# peers list and the rules pass `promtool check rules`; nothing lands
# outside PREFIX, /usr/src and /etc/latsplit; `make uninstall` removes it
# all again.
. "$(dirname "$0")/../lib.sh"
command -v groff >/dev/null || skip_all "groff not installed"
command -v rst2man >/dev/null || skip_all "rst2man not installed (python3-docutils)"
plan_none
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
D=$T/root
P=/opt/latsplit-test

if out=$(make -s -C "$LS_TOP" install DESTDIR="$D" PREFIX="$P" 2>&1); then ok "make install DESTDIR PREFIX"
else not_ok "make install" "$out"; done_testing; fi

# The CLI.
bin=$D$P/bin/latsplit
ver_out=$("$bin" version 2>&1); rc=$?
ver=$(sed -n 's/^latsplit \([^ ]*\) (abi.*/\1/p' <<<"$ver_out")
[ "$rc" = 0 ] && [ -n "$ver" ] && ok "installed latsplit runs: $ver_out" || not_ok "installed latsplit version" "rc=$rc $ver_out"
[ "$(stat -c %a "$bin")" = 755 ] && ok "the binary is mode 755" || not_ok "binary mode" "$(stat -c %a "$bin")"

# Man pages.
nrst=$(ls "$LS_TOP"/Documentation/latsplit*.rst 2>/dev/null | wc -l)
mans=("$D$P"/share/man/man8/*.8)
[ "$nrst" -gt 0 ] && [ "${#mans[@]}" = "$nrst" ] && ok "$nrst man pages installed in man8" ||
	not_ok "man pages installed" "$nrst RST pages, ${#mans[@]} installed"
bad=
for m in "${mans[@]}"; do
	w=$(groff -man -z -ww "$m" 2>&1)
	[ -z "$w" ] || bad="$bad ${m##*/}: $w"
	n=$(basename "$m" .8)
	found=$(MANPATH="$D$P/share/man" man -w "$n" 2>/dev/null)
	[ "$found" = "$m" ] || bad="$bad ${m##*/}: man -w found '$found'"
	MANWIDTH=80 man -l "$m" 2>/dev/null | grep -q "^SYNOPSIS" || bad="$bad ${m##*/}: man -l shows no SYNOPSIS"
done
[ -z "$bad" ] && ok "every installed man page is clean groff and man finds it via MANPATH" || not_ok "man pages" "$bad"

# DKMS tree.
src=$D/usr/src/latsplit-$ver
conf=$src/dkms.conf
if [ ! -f "$conf" ]; then
	not_ok "dkms.conf in /usr/src/latsplit-$ver" "$(find "$D/usr/src" 2>&1)"
	done_testing
fi
# dkms.conf is shell that dkms sources with kernel_source_dir and dkms_tree
# set (and expands ${...} in MAKE at that moment): read it the same way.
krel=$(ls -1 /lib/modules 2>/dev/null | grep -E '^6\.1\.[0-9]+-[0-9]+-amd64$' | sort -V | tail -n 1)
dkms_tree=$T/dkms
kernel_source_dir=/lib/modules/${krel:-none}/build
if ! decl=$(kernel_source_dir=$kernel_source_dir dkms_tree=$dkms_tree bash -c 'set -e; . "$1"
	declare -p PACKAGE_NAME PACKAGE_VERSION BUILT_MODULE_NAME BUILT_MODULE_LOCATION DEST_MODULE_LOCATION MAKE CLEAN AUTOINSTALL' _ "$conf" 2>&1); then
	not_ok "dkms.conf parses as shell with every field" "$decl"
	done_testing
fi
eval "$decl"
errs=
[ "$PACKAGE_NAME" = latsplit ] || errs="$errs PACKAGE_NAME=$PACKAGE_NAME"
[ "$PACKAGE_VERSION" = "$ver" ] || errs="$errs PACKAGE_VERSION=$PACKAGE_VERSION (binary says $ver)"
[ "$AUTOINSTALL" = yes ] || errs="$errs AUTOINSTALL=$AUTOINSTALL"
loc=$src/${BUILT_MODULE_LOCATION[0]}
[ -f "$loc/Kbuild" ] || errs="$errs BUILT_MODULE_LOCATION[0]=${BUILT_MODULE_LOCATION[0]} has no Kbuild"
grep -q "obj-m.*${BUILT_MODULE_NAME[0]}\.o" "$loc/Kbuild" 2>/dev/null || errs="$errs Kbuild does not build ${BUILT_MODULE_NAME[0]}.o"
for o in $(sed -n 's/^latsplit-y *:\?= *//p' "$loc/Kbuild" 2>/dev/null); do
	[ -f "$loc/${o%.o}.c" ] || errs="$errs missing ${o%.o}.c"
done
grep -q 'obj-m.*kmod/' "$src/Kbuild" 2>/dev/null || errs="$errs top Kbuild does not descend into kmod/"
[ -f "$src/include/uapi/latsplit.h" ] || errs="$errs no include/uapi/latsplit.h"
[[ "${MAKE[0]}" == *"-C $kernel_source_dir "* ]] || errs="$errs MAKE[0] ignores kernel_source_dir: ${MAKE[0]}"
[[ "${MAKE[0]}" == *"M=$dkms_tree/latsplit/$ver/build"* ]] || errs="$errs MAKE[0] does not build in \$dkms_tree/NAME/VERSION/build"
[[ "$DEST_MODULE_LOCATION" == /* ]] || errs="$errs DEST_MODULE_LOCATION not absolute"
[ -z "$errs" ] && ok "dkms.conf fields point at files that exist ($PACKAGE_NAME $PACKAGE_VERSION, ${BUILT_MODULE_LOCATION[0]}${BUILT_MODULE_NAME[0]}.ko)" ||
	not_ok "dkms.conf" "$errs"

# Build as dkms does: the tree copied to $dkms_tree/NAME/VERSION/build, then MAKE[0].
if [ -z "$krel" ] || [ ! -d "$kernel_source_dir" ]; then
	skip "the DKMS tree builds latsplit.ko" "no 6.1 kernel build tree in /lib/modules (linux-headers-amd64)"
else
	bdir=$dkms_tree/$PACKAGE_NAME/$PACKAGE_VERSION/build
	mkdir -p "${bdir%/build}"
	cp -r "$src" "$bdir"
	if out=$(cd "$bdir" && eval "${MAKE[0]}" 2>&1); then
		ko=$bdir/${BUILT_MODULE_LOCATION[0]}${BUILT_MODULE_NAME[0]}.ko
		vm=$(modinfo -F vermagic "$ko" 2>&1)
		if [ -f "$ko" ] && [[ "$vm" == "$krel "* ]]; then
			ok "the DKMS tree builds ${BUILT_MODULE_NAME[0]}.ko for $krel with MAKE[0]"
		else
			not_ok "DKMS build produced the module" "ko=$ko vermagic=$vm"
		fi
	else
		not_ok "the DKMS tree builds with MAKE[0]" "${MAKE[0]}" "$(tail -n 20 <<<"$out")"
	fi
fi

# The agent's unit, sample peers file and rules.
unit=$D$P/lib/systemd/system/latsplit-agent.service
if [ -f "$unit" ]; then
	errs=
	grep -q "^ExecStart=$P/bin/latsplit agent --peers /etc/latsplit/peers --key /etc/latsplit/key " "$unit" ||
		errs="$errs ExecStart: $(grep ^ExecStart "$unit")"
	grep -q '^ExecReload=/bin/kill -HUP $MAINPID$' "$unit" || errs="$errs no ExecReload with SIGHUP"
	for want in "CapabilityBoundingSet=CAP_IPC_LOCK CAP_SYS_ADMIN CAP_BPF CAP_PERFMON" \
		    NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
		    ProtectKernelModules=yes LimitMEMLOCK=infinity; do
		grep -qx "$want" "$unit" || errs="$errs missing $want"
	done
	grep -q @ "$unit" && errs="$errs unfilled @...@ left"
	# verbs open /dev/infiniband/uverbs*: nothing may close the device policy
	# (ProtectClock= does before systemd v252)
	dev=$(grep -E '^(ProtectClock|PrivateDevices|DevicePolicy|DeviceAllow)=' "$unit")
	[ -n "$dev" ] && errs="$errs the device policy is closed, /dev/infiniband unreachable: $dev"
	[ -z "$errs" ] && ok "the unit runs the installed latsplit with the peers file and key, hardened" ||
		not_ok "latsplit-agent.service" "$errs"
	if command -v systemd-analyze >/dev/null; then
		# verify needs the binary where ExecStart says: point it into DESTDIR
		sed "s|$P/bin/latsplit|$D$P/bin/latsplit|" "$unit" > "$T/latsplit-agent.service"
		out=$(MANPATH=$D$P/share/man systemd-analyze verify "$T/latsplit-agent.service" 2>&1) &&
			ok "systemd-analyze verify accepts latsplit-agent.service" ||
			not_ok "systemd-analyze verify latsplit-agent.service" "$out"
	else
		skip "systemd-analyze verify latsplit-agent.service" "systemd-analyze not installed"
	fi
else
	not_ok "latsplit-agent.service installed in $P/lib/systemd/system" "$(find "$D" -name '*.service')"
fi
sample=$D/etc/latsplit/peers.sample
# the listen address is checked after the peers file is read: a sample
# that loads gets as far as the bad port
out=$("$bin" agent --peers "$sample" --self node01 --metrics 127.0.0.1:x --insecure 2>&1)
[ -f "$sample" ] && grep -q "port 'x' is not" <<<"$out" &&
	ok "the sample peers file is installed in /etc/latsplit and loads as a peers list" ||
	not_ok "peers.sample" "$out"
rules=$D$P/share/latsplit/latsplit.rules.yml
if command -v promtool >/dev/null; then
	out=$(promtool check rules "$rules" 2>&1) && ok "the installed rules pass promtool check rules" ||
		not_ok "promtool check rules $rules" "$out"
else
	skip "promtool check rules" "promtool not installed (prometheus)"
fi

# Nothing outside PREFIX, /usr/src and /etc/latsplit.
stray=$(cd "$D" && find . -type f | grep -vE "^\./(opt/latsplit-test/(bin|share/man/man8|lib/systemd/system|share/latsplit)|usr/src/latsplit-$ver|etc/latsplit)/")
[ -z "$stray" ] && ok "nothing installed outside PREFIX, /usr/src and /etc/latsplit" || not_ok "stray files" "$stray"

if out=$(make -s -C "$LS_TOP" uninstall DESTDIR="$D" PREFIX="$P" 2>&1) &&
   [ -z "$(find "$D" -type f)" ]; then
	ok "make uninstall removes every installed file"
else
	not_ok "make uninstall" "$out" "$(find "$D" -type f)"
fi
done_testing
