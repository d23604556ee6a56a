#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test (KTAP), for the debug kernel: fault injection into
# blitz_pool_create() and into the making of a spare. failslab is armed
# for sleeping allocations, quietly; blitz_faults.ko then fails the n-th
# fault point of the creating task and of kthreadd, n = 1, 2, ..., and
# checks every error, then fails a spare's thread and checks that the
# manager makes it again (see its comment).
# debug_leaks.sh, which runs next, scans for what the failures leaked.

FS=/sys/kernel/debug/failslab
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

fs_set() {
	echo "$2" > "$FS/$1"
}

ktap_print_header
ktap_set_plan 4

# fail-nth alone picks the failures: probability 0 injects nothing else.
fs_set ignore-gfp-wait N && fs_set verbose 0 && fs_set probability 0
ktap_status $? "failslab armed for GFP_KERNEL, quiet"

insmod /modules/blitz.ko
ktap_status $? "insmod blitz.ko"

seen=$(dmesg | wc -l)
insmod /modules/blitz_faults.ko
rc=$?
dmesg | tail -n +$((seen + 1)) | grep 'blitz_faults:' | sed 's/^\[[^]]*\] /# /'
# A failed init runs twice (kstm_failed() says why): fail on a second run.
runs=$(dmesg | tail -n +$((seen + 1)) | grep -c 'blitz_faults: task:')
[ "$runs" -le 1 ] || rc=1
ktap_status $rc "every injected fault gives its documented result"
[ $rc = 0 ] && rmmod blitz_faults

fs_set ignore-gfp-wait Y
rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
