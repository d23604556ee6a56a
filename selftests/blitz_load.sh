#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (KTAP): blitz.ko loads and unloads, once and then
# BLITZ_LOAD_ROUNDS times in a row (default 100, as SPEC.md's reliability
# target; tools/check runs 100 on the debug kernel under kmemleak, in
# debug_leaks.sh, and 25 on the others). Runs under busybox sh inside the
# guest; the module is /modules/blitz.ko (override with BLITZ_KO).

KO=${BLITZ_KO:-/modules/blitz.ko}
ROUNDS=${BLITZ_LOAD_ROUNDS:-100}
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

ktap_print_header
ktap_set_plan 5

ktap_test_result "insmod $KO" insmod "$KO"
ktap_test_result "/sys/module/blitz exists after load" test -d /sys/module/blitz
ktap_test_result "rmmod blitz" rmmod blitz
ktap_test_result "/sys/module/blitz is gone after unload" \
	test ! -e /sys/module/blitz

i=0
bad=0
while [ "$i" -lt "$ROUNDS" ]; do
	if ! insmod "$KO" || ! test -d /sys/module/blitz ||
	   ! rmmod blitz || test -e /sys/module/blitz; then
		echo "# round $i failed"
		bad=1
		break
	fi
	i=$((i + 1))
done
ktap_status $bad "load/unload $ROUNDS times"

ktap_finished
