#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (KTAP): blitz through its exported API, from a client
# module (blitz_selftest.ko), then what an administrator sees: debugfs
# format, idle workers asleep and using no CPU, CPU hotplug under load.
# Runs under busybox sh inside the guest.

DBG=/sys/kernel/debug/blitz/default
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

# Sum of utime + stime, in clock ticks, of every worker of the default pool.
worker_ticks() {
	t=0
	for p in /proc/[0-9]*; do
		read -r comm < "$p/comm" 2>/dev/null || continue
		case $comm in blitz/default/*) ;; *) continue ;; esac
		# A parked spare exits after spare_idle_ms: it may be gone
		# between the two reads.
		stat=$(cat "$p/stat" 2>/dev/null) || continue
		# shellcheck disable=SC2086 # split the fields on purpose
		set -- ${stat##*) }
		t=$((t + ${12} + ${13}))
	done
	echo $t
}

ktap_print_header
ktap_set_plan 11

insmod /modules/blitz.ko
ktap_status $? "insmod blitz.ko"
ncpu=$(grep -c ^processor /proc/cpuinfo)

run_selftest
ktap_status $? "client module: errors, busy/shutdown, load, jobs from jobs, irq, destroy under load, fib, stolen join, group, jobs that sleep, reduce, sort"
# From a pool asleep: the test says why.
wait_asleep 50 && run_selftest tests=parallel_for
ktap_status $? "client module: parallel_for runs on several CPUs"

# debugfs: header, one row per worker and per spare's slot (the sleeping
# jobs above made spares), total row; state line.
workers=$(state_field workers)
head -n 1 $DBG/stats |
	grep -q '^worker cpu executed stolen injected sleeps wakeups overflows promoted share_requests cancelled share_timer blocks spare$'
h=$?
rows=$(awk '$1 ~ /^[0-9]+$/ && $NF == 0' $DBG/stats | wc -l)
spares=$(awk '$1 ~ /^[0-9]+$/ && $NF == 1' $DBG/stats | wc -l)
total=$(awk '$1 == "total" { print $3 }' $DBG/stats)
sum=$(awk '$1 ~ /^[0-9]+$/ { s += $3 } END { print s }' $DBG/stats)
blocks=$(awk '$1 == "total" { print $(NF - 1) }' $DBG/stats)
grep -Eq '^workers=[0-9]+ sleeping=[0-9]+ inactive=[0-9]+ jec=[0-9]+ shutdown=0 blocked=[0-9]+ spares=[0-9]+ parked=[0-9]+$' $DBG/state
s=$?
cat $DBG/stats $DBG/state | sed 's/^/# /'
[ $h = 0 ] && [ $s = 0 ] && [ "$workers" = "$ncpu" ] && [ "$rows" = "$workers" ] &&
	[ "$total" = "$sum" ] && [ "$total" -gt 0 ] && [ "$spares" -gt 0 ] &&
	[ "$(state_field spares)" -le "$spares" ] && [ "$blocks" -gt 0 ]
ktap_status $? "debugfs stats and state format, total row sums the workers, spares and blocks counted"

# Idle: every worker asleep within 1 s of the last job.
wait_asleep 10
s=$?
echo "# asleep after ${waited}00 ms: $(cat $DBG/state)"
ktap_status $s "all workers asleep within 1 s"

# Quiet: each CPU of the pool counts its worker, asleep, as running.
cat $DBG/cpus | sed 's/^/# /'
lines=$(grep -Ec '^cpu=[0-9]+ running=[1-9][0-9]* dozing=[0-9]+ on_duty=[0-9]+ parked=[0-9]+ want=[01]$' $DBG/cpus)
[ "$lines" = "$workers" ] && [ "$(wc -l < $DBG/cpus)" = "$workers" ]
ktap_status $? "debugfs cpus: a line per CPU, its worker counted running"

t0=$(worker_ticks)
sleep 5
t1=$(worker_ticks)
echo "# worker CPU while idle for 5 s: $((t1 - t0)) ticks"
[ $((t1 - t0)) -le 1 ]
ktap_status $? "idle workers use no CPU"

# CPU hotplug under load: CPUs 1.. go offline and online while jobs run.
if [ -e /sys/devices/system/cpu/cpu1/online ]; then
	(
		for _ in 1 2 3; do
			for c in $(seq 1 $((ncpu - 1))); do
				echo 0 > "/sys/devices/system/cpu/cpu$c/online"
				echo 1 > "/sys/devices/system/cpu/cpu$c/online"
			done
		done
	) &
	hp=$!
	run_selftest tests=load,from_jobs load_jobs=300000
	r=$?
	wait $hp
	ktap_status $r "jobs all run once while CPUs go offline and online"

	# Each worker, spares too, is back on its own CPU (debugfs's).
	bad=0
	for p in /proc/[0-9]*; do
		read -r comm < "$p/comm" 2>/dev/null || continue
		case $comm in blitz/default/*) ;; *) continue ;; esac
		want=$(awk -v i="${comm##*/}" '$1 == i { print $2 }' $DBG/stats)
		# Empty when gone meanwhile: a parked spare exits after
		# spare_idle_ms. A live thread always has the line.
		got=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' \
			"$p/status" 2>/dev/null)
		[ -n "$got" ] || continue
		[ "$got" = "$want" ] || { echo "# $comm allowed on $got"; bad=1; }
	done
	ktap_status $bad "workers rebound to their CPUs after hotplug"
else
	ktap_test_fail "CPU hotplug: no cpu1 online control"
	ktap_test_fail "CPU hotplug: skipped"
fi

run_selftest tests=load load_jobs=100000
ktap_status $? "load after hotplug"

rmmod blitz
ktap_status $? "rmmod blitz drains and unloads"

ktap_finished
