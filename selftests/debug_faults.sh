#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test (KTAP), for the debug kernel: fault injection into
# blitz_pool_create() and into the making of a spare. failslab is armed
# for sleeping allocations, quietly; blitz_faults.ko then fails the n-th
# fault point of the creating task and of kthreadd, n = 1, 2, ..., and
# checks every error. Then failslab fails the first allocation whose
# stack holds the spare manager, blitz_manage(), while blitz_faults.ko
# (spare=1) has a job wait for a spare; the manager must make it again
# (see the module's comment). Only the manager's allocations: one of
# another task would leave the retry untested. (An allocation in an
# interrupt taken while the manager runs matches too: its stack is
# walked into the manager's. The window is the manager's few us.)
# debug_leaks.sh, which runs next, scans for what the failures leaked.

FS=/sys/kernel/debug/failslab
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

fs_set() {
	echo "$2" > "$FS/$1"
}

# Unload blitz_faults.ko if its init passed, even when the check failed:
# loaded, it would hold blitz.ko, and debug_leaks.sh's cycles with it.
faults_unload() {
	! grep -q '^blitz_faults ' /proc/modules || rmmod blitz_faults
}

ktap_print_header
ktap_set_plan 5

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
faults_unload

# blitz_manage()'s text: from its symbol to the next one of blitz.ko.
range=$(grep '\[blitz\]$' /proc/kallsyms | awk '$2 ~ /^[tT]$/' | sort |
	awk 'start { print "0x" start, "0x" $1; exit }
	     $3 == "blitz_manage" { start = $1 }')
rc=1
seen=$(dmesg | wc -l)
if [ -n "$range" ]; then
	set -- $range
	fs_set require-start "$1" && fs_set require-end "$2" &&
		fs_set times 1 && fs_set probability 100 &&
		insmod /modules/blitz_faults.ko spare=1
	rc=$?
	left=$(cat "$FS/times")
	fs_set probability 0
	fs_set require-start 0
	fs_set require-end 0xffffffffffffffff
	echo "# blitz_manage() at $1-$2; failslab's faults left to inject: $left"
	[ "$left" = 0 ] || rc=1
	faults_unload
else
	echo "# no blitz_manage in /proc/kallsyms"
fi
dmesg | tail -n +$((seen + 1)) | grep 'blitz_faults: spare' | sed 's/^\[[^]]*\] /# /'
runs=$(dmesg | tail -n +$((seen + 1)) | grep -c 'blitz_faults: spare')
[ "$runs" = 1 ] || rc=1
ktap_status $rc "a spare the manager failed to make is made again: the job waiting for it ran"

fs_set ignore-gfp-wait Y
rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
