#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest torture run (KTAP): blitz.ko with its race windows on and parked
# spares exiting after 50 ms (so that spares are reaped, and their slots
# taken by spares of other CPUs, throughout), then blitz_torture.ko for
# BLITZ_TORTURE_SECS seconds (default 60), with the promotion cooldown
# cycled meanwhile; the torture's summary line must say PASS. Runs under
# busybox sh in the guest, after the selftests (selftests/run --tests).

SECS=${BLITZ_TORTURE_SECS:-60}
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

ktap_print_header
ktap_set_plan 4

insmod /modules/blitz.ko race_windows=1 spare_idle_ms=50
ktap_status $? "insmod blitz.ko race_windows=1 spare_idle_ms=50"
seen=$(dmesg | wc -l)
# The promotion cooldown changes every second: no cooldown promotes at
# every request, the others go through the share timer.
param=/sys/module/blitz/parameters/share_interval_us
(while :; do
	for us in 0 10 100; do
		echo $us > $param
		sleep 1
	done
done) &
cycler=$!
start=$(date +%s)
insmod /modules/blitz_torture.ko duration="$SECS"
rc=$?
kill $cycler
echo "# torture took $(($(date +%s) - start)) s"
summary=$(dmesg | tail -n +$((seen + 1)) | grep 'blitz_torture: summary:')
dmesg | tail -n +$((seen + 1)) | grep 'blitz_torture: anomaly' | head -n 20 |
	sed 's/^/# /'
echo "# $summary"
ktap_status $rc "blitz_torture.ko duration=$SECS"
case $summary in
*' anomalies=0 '*PASS) pass=0 ;;
*) pass=1 ;;
esac
ktap_status $pass "summary: no anomaly"
if [ $pass != 0 ]; then
	# Every task's stack into the kernel log, for the post-mortem; a
	# stuck torture stays loaded, and so does blitz.
	echo 1 > /proc/sys/kernel/sysrq
	dmesg -n 8
	echo t > /proc/sysrq-trigger
	ktap_test_fail "rmmod blitz"
	ktap_finished
fi
rmmod blitz_torture
rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
