#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (KTAP): freezable pools (BLITZ_POOL_FREEZABLE) through
# the system freezer. Selects the pm_test level "freezer", at which a
# suspend freezes every freezable task, waits pm_test_delay (set to 2 s
# here; the kernel's default is 5) and thaws them, then
# loads blitz_freeze.ko, whose load runs three such cycles (pools under
# load, busy, idle with a parked spare; see the module) and prints a TAP
# line per check. Skipped without /sys/power/pm_test (CONFIG_PM_DEBUG).
# Runs under busybox sh inside the guest.

PM=/sys/power/pm_test
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

ktap_print_header
ktap_set_plan 4

if [ ! -e $PM ]; then
	for t in "insmod blitz.ko" "blitz_freeze.ko" "no task refused to freeze" \
		 "rmmod blitz"; do
		ktap_test_skip "$t: no $PM"
	done
	ktap_finished
fi

# The test's idle pool keeps a parked spare through its freeze.
insmod /modules/blitz.ko spare_idle_ms=60000
ktap_status $? "insmod blitz.ko spare_idle_ms=60000"

DELAY=/sys/module/suspend/parameters/pm_test_delay
delay=$(cat $DELAY)
echo 2 > $DELAY
echo freezer > $PM
seen=$(dmesg | wc -l)
# On CPU 0: pm_test waits with mdelay(), which on 6.1 guests under TCG
# lasts as long as asked there but a thousandth of it on the other CPUs,
# whose delay loop calibration failed.
start=$(date +%s)
taskset 1 insmod /modules/blitz_freeze.ko
rc=$?
# Loaded even if its first run failed (lib.sh): unload it first.
[ $rc = 0 ] && rmmod blitz_freeze
kstm_failed blitz_freeze "$seen" && rc=1
echo "# three freeze cycles in $(($(date +%s) - start)) s"
dmesg | tail -n +$((seen + 1)) |
	grep -e 'blitz_freeze:' -e 'PM: suspend debug' -e 'Freezing' |
	sed 's/^\[[^]]*\] /# /'
ktap_status $rc "blitz_freeze.ko: no job of a freezable pool starts while frozen (under load, busy, idle with a spare), all run after the thaw, the default pool runs on, destroy waits for the thaw"

# A freezer that gave up says so, and names who refused, with stacks.
dmesg | tail -n +$((seen + 1)) |
	sed -n '/refusing to freeze/,/Restarting kernel threads/p' |
	sed 's/^/# /'
! dmesg | tail -n +$((seen + 1)) | grep -q -e 'refusing to freeze' \
	-e 'Freezing .* failed'
ktap_status $? "no task refused to freeze"
echo none > $PM
echo "$delay" > $DELAY

rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
