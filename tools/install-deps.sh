#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install every Debian package latsplit needs to build, test and run its lab.
# Idempotent: packages already present are not touched, and apt is only
# called when something is missing.
set -euo pipefail

PKGS=(
	# build
	build-essential make gcc clang llvm lld pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev libssl-dev
	libibverbs-dev librdmacm-dev ibverbs-providers ibverbs-utils rdmacm-utils rdma-core
	# kernels for the lab and headers for kbuild: 6.1, 6.12, 6.1-rt
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	linux-image-rt-amd64 linux-headers-rt-amd64
	linux-source-6.1 xz-utils kmod
	# the lab
	qemu-system-x86 busybox-static cpio iproute2 ethtool iputils-ping
	perftest procps util-linux nftables
	# tests, benchmarks, docs
	bpftrace bpfcc-tools python3 python3-docutils prometheus jq
	# the HTML report's tests: its validators and browser driver come from npm
	# (tests/web/package-lock.json, `make web-deps`), the browser and the Java
	# runtime of the Nu checker (vnu-jar) from Debian
	nodejs chromium fonts-dejavu-core openjdk-17-jre-headless
	# the agent's /metrics endpoint (linked by the CLI only)
	libmicrohttpd-dev
)

missing=()
for p in "${PKGS[@]}"; do
	case "$p" in \#*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

# npm: part of some nodejs builds, its own Debian package beside Debian's nodejs
if ! command -v npm >/dev/null 2>&1; then
	missing+=(npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or: apt-get install ${missing[*]})" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A kernel image install must not try to build an initramfs-less boot setup
# for this container; keep postinst hooks quiet and non-interactive.
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
