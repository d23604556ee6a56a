#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (TAP): blitz.ko loads and unloads, once and then 100 times
# in a row (SPEC.md, reliability). Runs under busybox sh inside the guest;
# the module is /modules/blitz.ko (override with BLITZ_KO).

KO=${BLITZ_KO:-/modules/blitz.ko}
ROUNDS=100
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

echo "TAP version 13"
echo "1..5"

insmod "$KO"
ok $? "insmod $KO"
test -d /sys/module/blitz
ok $? "/sys/module/blitz exists after load"
rmmod blitz
ok $? "rmmod blitz"
test ! -e /sys/module/blitz
ok $? "/sys/module/blitz is gone after unload"

i=0
bad=0
while [ $i -lt $ROUNDS ]; do
	if ! insmod "$KO" || ! test -d /sys/module/blitz ||
	   ! rmmod blitz || test -e /sys/module/blitz; then
		echo "# round $i failed"
		bad=1
		break
	fi
	i=$((i + 1))
done
ok $bad "load/unload $ROUNDS times"

tap_end
