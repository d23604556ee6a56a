#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (KTAP): a suspend that takes CPUs offline while a pool's
# manager stops a reaped spare (blitz_suspend.ko; see the module). Selects
# the pm_test level "processors", at which a suspend to RAM freezes every
# freezable task, takes the secondary CPUs offline, waits pm_test_delay
# (1 s here) and undoes it all. Skipped without /sys/power/pm_test
# (CONFIG_PM_DEBUG) or without S3 ("deep" in /sys/power/mem_sleep).
# Runs under busybox sh inside the guest.

PM=/sys/power/pm_test
DELAY=/sys/module/suspend/parameters/pm_test_delay
WQ=/sys/devices/virtual/workqueue/cpumask
CONS=/sys/module/printk/parameters/console_suspend
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

ktap_print_header
ktap_set_plan 3

if [ ! -e $PM ] || ! grep -q deep /sys/power/mem_sleep 2>/dev/null; then
	for t in "insmod blitz.ko" "blitz_suspend.ko" "rmmod blitz"; do
		ktap_test_skip "$t: no $PM, or no S3"
	done
	ktap_finished
fi

# A spare is reaped 1 s after it parks.
insmod /modules/blitz.ko spare_idle_ms=1000
ktap_status $? "insmod blitz.ko spare_idle_ms=1000"

# The module runs on CPU 0 and holds the pool's manager, a work item of
# an unbound workqueue, spinning: unbound work items keep off CPU 0.
ncpu=$(grep -c ^processor /proc/cpuinfo)
wq=$(cat $WQ)
printf '%x\n' $(((1 << ncpu) - 2)) > $WQ
delay=$(cat $DELAY)
echo 1 > $DELAY
echo processors > $PM
# The console stays on through the suspend, and shows its steps: one
# that hangs says where.
cons=$(cat $CONS)
echo N > $CONS
read -r level _ < /proc/sys/kernel/printk
dmesg -n 7
seen=$(dmesg | wc -l)
taskset 1 insmod /modules/blitz_suspend.ko
rc=$?
# Loaded even if its first run failed (lib.sh): unload it first.
[ $rc = 0 ] && rmmod blitz_suspend
kstm_failed blitz_suspend "$seen" && rc=1
dmesg | tail -n +$((seen + 1)) |
	grep -e 'blitz_suspend:' -e 'PM: suspend' -e 'Disabling non-boot' \
	     -e 'Enabling non-boot' | sed 's/^\[[^]]*\] /# /'
ktap_status $rc "blitz_suspend.ko: a suspend takes CPUs offline while the manager stops a reaped spare, held there until the freezer is done; the spare is not frozen, and exits"
echo none > $PM
echo "$delay" > $DELAY
echo "$wq" > $WQ
echo "$cons" > $CONS
dmesg -n "$level"

rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
