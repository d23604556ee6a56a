#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, only when missing, every Debian package that building, testing and
# the demo need, and unpack the guest kernels, their headers and the kernel
# source tree into $BLITZ_WORK (default /tmp/blitz-work), outside the checkout.
#
# Nothing is installed into the host's /boot or loaded by the host kernel:
# Debian's header packages depend on their kernel image, so images, headers
# and kbuild are unpacked with dpkg -x into $BLITZ_WORK/root instead of being
# installed. Two series: the 6.12 version and the 6.1 LTS version are each
# the newest for which the generic and PREEMPT_RT images and headers all
# exist; nothing is pinned.
#
# Writes $BLITZ_WORK/env, a shell fragment the other tools source:
#   KVER, KDIR, KDIR_RT, LINUX_SRC, GUEST_generic, GUEST_rt (6.12), and
#   KVER61, KDIR61, KDIR61_RT, GUEST61_generic, GUEST61_rt (6.1)
set -euo pipefail

WORK=${BLITZ_WORK:-/tmp/blitz-work}
ROOT=$WORK/root
mkdir -p "$WORK" "$ROOT"
export DEBIAN_FRONTEND=noninteractive

log() { echo "deps: $*" >&2; }

host_pkgs=(build-essential gcc-12 bc bison flex libelf-dev libssl-dev pahole
	   kmod cpio xz-utils python3 qemu-system-x86 busybox-static sparse
	   linux-source-6.12 gnuplot-nox dkms time)

updated=0
apt_update() {
	[ $updated = 1 ] && return
	log "apt-get update"
	apt-get update -qq >&2
	updated=1
}

names() {
	apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}'
}

# Newest ABI of series $1 (a regular expression: 6\.12\.[0-9]+\+deb12, or
# 6\.1\.0-[0-9]+) with generic and rt images and headers all available.
pick_kver() {
	local v
	for v in $(names "^linux-image-$1-amd64-unsigned\$" |
		   sed -E 's/^linux-image-(.*)-amd64-unsigned$/\1/' | sort -rV); do
		if apt-cache show "linux-image-$v-rt-amd64-unsigned" \
				  "linux-headers-$v-amd64" \
				  "linux-headers-$v-rt-amd64" >/dev/null 2>&1; then
			echo "$v"
			return
		fi
	done
}

# A fresh machine may have empty or stale package lists.
KVER=$(pick_kver '6\.12\.[0-9]+\+deb12')
KVER61=$(pick_kver '6\.1\.0-[0-9]+')
if [ -z "$KVER" ] || [ -z "$KVER61" ]; then
	apt_update
	KVER=$(pick_kver '6\.12\.[0-9]+\+deb12')
	KVER61=$(pick_kver '6\.1\.0-[0-9]+')
fi
[ -n "$KVER" ] || { log "no 6.12 kernel with images and headers"; exit 1; }
[ -n "$KVER61" ] || { log "no 6.1 kernel with images and headers"; exit 1; }
log "kernels $KVER and $KVER61"

want=()
for p in "${host_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || want+=("$p")
done
if [ ${#want[@]} -gt 0 ]; then
	apt_update
	log "installing ${want[*]}"
	apt-get install -y -qq --no-install-recommends "${want[@]}" >&2
fi

# unpack PKG...: dpkg -x each package into $ROOT once.
unpack() {
	local p dl=$WORK/dl
	for p in "$@"; do
		[ -e "$ROOT/.done-$p" ] && continue
		log "unpacking $p"
		rm -rf "$dl"
		mkdir -p "$dl"
		chmod 777 "$dl"	# apt-get download runs as _apt
		if ! (cd "$dl" && apt-get download -qq "$p" >&2); then
			apt_update
			(cd "$dl" && apt-get download -qq "$p" >&2)
		fi
		dpkg -x "$dl"/*.deb "$ROOT"
		rm -rf "$dl"
		touch "$ROOT/.done-$p"
	done
}

# kbuild is per series: linux-kbuild-6.12.N+deb12, but linux-kbuild-6.1.
for v in "$KVER" "$KVER61"; do
	kbuild=linux-kbuild-$v
	[ "$v" = "$KVER61" ] && kbuild=linux-kbuild-6.1
	unpack "$kbuild" \
	       "linux-headers-$v-common" "linux-headers-$v-common-rt" \
	       "linux-headers-$v-amd64" "linux-headers-$v-rt-amd64" \
	       "linux-image-$v-amd64-unsigned" "linux-image-$v-rt-amd64-unsigned"
	# The flavour headers include their common Makefile by absolute path.
	for f in amd64 rt-amd64; do
		sed -i "s#^include /usr/src/#include $ROOT/usr/src/#" \
			"$ROOT/usr/src/linux-headers-$v-$f/Makefile"
	done
done

# A private kernel tree for KUnit; kunit/run links our sources into it.
src=$WORK/linux-source-6.12
if [ ! -e "$src/.done" ]; then
	log "unpacking linux-source-6.12"
	rm -rf "$src"
	tar -C "$WORK" -xf /usr/src/linux-source-6.12.tar.xz
	touch "$src/.done"
fi

cat > "$WORK/env" <<ENV
KVER=$KVER
KDIR=$ROOT/usr/src/linux-headers-$KVER-amd64
KDIR_RT=$ROOT/usr/src/linux-headers-$KVER-rt-amd64
LINUX_SRC=$src
GUEST_generic=$ROOT/boot/vmlinuz-$KVER-amd64
GUEST_rt=$ROOT/boot/vmlinuz-$KVER-rt-amd64
GUEST_MODULES_generic=$ROOT/lib/modules/$KVER-amd64
GUEST_MODULES_rt=$ROOT/lib/modules/$KVER-rt-amd64
KVER61=$KVER61
KDIR61=$ROOT/usr/src/linux-headers-$KVER61-amd64
KDIR61_RT=$ROOT/usr/src/linux-headers-$KVER61-rt-amd64
GUEST61_generic=$ROOT/boot/vmlinuz-$KVER61-amd64
GUEST61_rt=$ROOT/boot/vmlinuz-$KVER61-rt-amd64
GUEST61_MODULES_generic=$ROOT/lib/modules/$KVER61-amd64
GUEST61_MODULES_rt=$ROOT/lib/modules/$KVER61-rt-amd64
ENV
log "ready: $WORK/env"
