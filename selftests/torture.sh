#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest torture run (KTAP): blitz.ko with its race windows on and parked
# spares exiting after 50 ms (so that spares are reaped, and their slots
# taken by spares of other CPUs, throughout), then blitz_torture.ko for
# BLITZ_TORTURE_SECS seconds (default 60), with the promotion cooldown
# cycled meanwhile and, if the kernel has /sys/power/pm_test
# (CONFIG_PM_DEBUG), up to three system freezes; the torture's summary
# line must say PASS. With kmemleak (the debug kernel), its scans come
# after the torture, not during it, and must find no leak. Runs under
# busybox sh in the guest, after the selftests (selftests/run --tests).

SECS=${BLITZ_TORTURE_SECS:-60}
PM=/sys/power/pm_test
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

# freeze_cycles START: at a quarter, half and three quarters of the run,
# a suspend that stops after freezing tasks for pm_test_delay (pm_test
# "freezer"), each over well before the torture ends: its waits once the
# run is over are not freezable. On CPU 0, as in blitz_freeze.sh: there
# pm_test's mdelay() waits for as long as asked in the 6.1 guests too.
# That mdelay() holds CPU 0 without yielding under voluntary preemption,
# and a job whose post woke the worker homed there waits for it (api.rst,
# blitz_submit()): the delay is 1 s, well under max_latency_ms
# (testing.rst, "Race windows and blitztorture"). Prints "succeeded failed".
freeze_cycles() {
	ok=0 failed=0
	for k in 1 2 3; do
		at=$(($1 + SECS * k / 4))
		[ $((at + 15)) -le $(($1 + SECS)) ] || break
		while [ "$(date +%s)" -lt $at ]; do
			sleep 1
		done
		if taskset 1 sh -c 'echo freeze > /sys/power/state'; then
			ok=$((ok + 1))
		else
			failed=$((failed + 1))
		fi
	done
	echo "$ok $failed"
}

ktap_print_header
ktap_set_plan 6

insmod /modules/blitz.ko race_windows=1 spare_idle_ms=50
ktap_status $? "insmod blitz.ko race_windows=1 spare_idle_ms=50"
# The kernel's messages from here on, kept whole: in a long run the CPU
# hotplug messages wrap the log buffer that dmesg reads, and with it the
# first summary of a torture that ran twice (below).
kmsg=/tmp/torture.kmsg
cat /proc/kmsg > $kmsg &
logger=$!
echo "blitz-torture: begin" > /dev/kmsg
since() {
	sed -n '/blitz-torture: begin/,${s/^<[0-9]*>//;p}' $kmsg
}
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
# A quarter of the run, and 15 s to spare, for a freeze at least.
freeze=0
[ -e $PM ] && [ "$SECS" -ge 20 ] && freeze=1
if [ $freeze = 1 ]; then
	DELAY=/sys/module/suspend/parameters/pm_test_delay
	delay=$(cat $DELAY)
	echo 1 > $DELAY
	echo freezer > $PM
	freeze_cycles "$start" > /tmp/freezes &
	freezer=$!
fi
insmod /modules/blitz_torture.ko duration="$SECS"
rc=$?
kill $cycler
echo "# torture took $(($(date +%s) - start)) s"
# The reader has caught up once it has written the last message.
echo "blitz-torture: end" > /dev/kmsg
n=0
while ! grep -q 'blitz-torture: end' $kmsg && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill $logger
# The first: busybox insmod loads again, with init_module(), a module
# whose finit_module() failed, and a torture that failed runs twice.
summary=$(since | grep 'blitz_torture: summary:' | head -n 1)
if [ $freeze = 1 ]; then
	wait "$freezer"
	echo none > $PM
	echo "$delay" > "$DELAY"
	read -r froze failed < /tmp/freezes
	echo "# $froze freeze cycles, $failed failed"
	# A freeze that failed names who refused, with their stacks.
	since | sed -n '/refusing to freeze/,/Restarting kernel threads/p' |
		sed 's/^/# /'
	# The torture counts them too (PM_POST_SUSPEND).
	case $summary in
	*" freezes=$froze "*) ok=$failed ;;
	*) ok=1 ;;
	esac
	[ "$froze" -gt 0 ] && [ "$ok" = 0 ]
	ktap_status $? "freeze cycles during the torture succeed, and it saw them"
else
	ktap_test_skip "freeze cycles: no $PM, or a run under 20 s"
fi
since | grep 'blitz_torture: anomaly' | head -n 20 | sed 's/^/# /'
# The threads as the first job that waited in vain gave up, if one did.
since | sed -n '/blitz_torture: threads: begin/,/blitz_torture: threads: end/p' |
	sed 's/^/# /'
echo "# $summary"
ktap_status $rc "blitz_torture.ko duration=$SECS"
case $summary in
*' anomalies=0 '*PASS) pass=0 ;;
*) pass=1 ;;
esac
ktap_status $pass "summary: no anomaly"
if [ $pass != 0 ]; then
	# Every pool's counts and every task's stack, for the post-mortem;
	# a stuck torture stays loaded, and so do its pools and blitz.
	for d in /sys/kernel/debug/blitz/*/; do
		echo "# pool $(basename "$d"): $(cat "$d/state")"
		sed 's/^/#   /' "$d/cpus"
	done
	echo 1 > /proc/sys/kernel/sysrq
	dmesg -n 8
	echo t > /proc/sysrq-trigger
	ktap_test_fail "rmmod blitz"
	ktap_test_skip "kmemleak: the torture stays loaded"
	ktap_finished
fi
rmmod blitz_torture
rmmod blitz
ktap_status $? "rmmod blitz"

if [ -e $KML ]; then
	kmemleak_scan && kmemleak_report
	ktap_status $? "kmemleak: the torture leaked nothing"
else
	ktap_test_skip "kmemleak: not in this kernel"
fi

ktap_finished
