#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test (KTAP), for the debug kernel: 100 cycles of loading blitz.ko,
# running client tests (pools created with bad and good arguments; every
# 10th cycle also fork-join, then parallel_for once the pool is asleep)
# and unloading both, then a kmemleak scan that must find nothing. The
# scan also covers what ran before in this guest (blitz_*.sh,
# debug_faults.sh).

CYCLES=100
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

ktap_print_header
ktap_set_plan 3

# client TESTS: run_selftest tests=TESTS, its lines shown if it failed.
client() {
	out=$(run_selftest tests="$1") && return
	echo "$out"
	return 1
}

# loop_asleep CYCLE: every 10th cycle, parallel_for from a pool asleep
# (the test says why).
loop_asleep() {
	[ $(($1 % 10)) != 0 ] && return
	wait_asleep 50 && client parallel_for
}

i=0
bad=0
start=$(date +%s)
while [ $i -lt $CYCLES ]; do
	tests=errors
	[ $((i % 10)) = 0 ] && tests=errors,fib
	if ! insmod /modules/blitz.ko || ! client $tests ||
	   ! loop_asleep $i || ! rmmod blitz; then
		echo "# cycle $i failed"
		bad=1
		break
	fi
	i=$((i + 1))
done
echo "# $i cycles in $(($(date +%s) - start)) s"
ktap_status $bad "$CYCLES cycles of load, client tests, unload"

kmemleak_scan
ktap_status $? "kmemleak scan"
kmemleak_report
ktap_status $? "kmemleak: nothing leaked"

ktap_finished
