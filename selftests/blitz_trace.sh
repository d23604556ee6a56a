#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (KTAP): what an observer sees. blitz's tracepoints,
# enabled through tracefs while the client module runs jobs, joins and
# calls: every event fires, with sane fields. Then tools/blitz-top, one
# interval, under load. Runs under busybox sh inside the guest.

T=/sys/kernel/tracing
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

ktap_print_header
ktap_set_plan 22

# Spares left parked exit within the run.
insmod /modules/blitz.ko spare_idle_ms=500
ktap_status $? "insmod blitz.ko spare_idle_ms=500"
ncpu=$(grep -c ^processor /proc/cpuinfo)

# The default pool's spares: its threads after its ncpu workers.
spares() {
	n=0
	for c in /proc/[0-9]*/comm; do
		read -r comm < "$c" 2>/dev/null || continue
		case $comm in
		blitz/default/*) [ "${comm##*/}" -ge "$ncpu" ] && n=$((n + 1)) ;;
		esac
	done
	echo $n
}

[ -d $T/events ] || mount -t tracefs nodev $T
[ -d $T/events/blitz ]
ktap_status $? "tracefs has events/blitz"

echo 0 > $T/tracing_on
# Per CPU, room for every event of the run below (about 190000 of about
# 100 bytes over 4 CPUs, most on the CPU that computes): an event lost
# would make the checks below meaningless, so that is checked too, and
# each CPU's count is shown.
echo 32768 > $T/buffer_size_kb
echo > $T/trace
# Every worker asleep first, so that the client's first submit wakes one.
wait_asleep 50
ktap_status $? "every worker asleep before the run"
echo 1 > $T/events/blitz/enable
echo 1 > $T/tracing_on
# Injected and local submits, joins with stolen halves, a join whose a
# sleeps until b ran elsewhere, groups, jobs that sleep while every
# worker does; then idle, so workers sleep.
seen=$(dmesg | wc -l)
insmod /modules/blitz_selftest.ko \
	tests=load,from_jobs,fib,join_stolen,group,sleep_blocked load_jobs=20000
rc=$?
# A failed first run is loaded again (lib.sh): its status alone says not.
kstm_failed blitz_selftest "$seen" && rc=1
ktap_status $rc "client module runs with every event on"
# Until every worker sleeps (blitz_sleep), 5 s at most, and every spare
# has gone back to its parked list and exited, 5 s more at most.
wait_asleep 50
n=0
while [ "$(spares)" != 0 ] && [ $n -lt 50 ]; do
	sleep 0.1
	n=$((n + 1))
done
echo 0 > $T/tracing_on
echo 0 > $T/events/blitz/enable
# Read while the client is loaded: its functions' names print then.
cat $T/trace > /tmp/trace
rmmod blitz_selftest
grep -c ': blitz_' /tmp/trace | sed 's/^/# events: /'
# "# entries-in-buffer/entries-written: 164767/164767   #P:4"
grep -m 1 '^# entries-in-buffer' /tmp/trace
for c in $T/per_cpu/cpu*; do
	echo "# ${c##*/}: $(grep -E '^(entries|overrun):' $c/stats | tr '\n' ' ')"
done
kept=$(grep -m 1 '^# entries-in-buffer' /tmp/trace | awk '{ print $3 }')
[ -n "$kept" ] && [ "${kept%/*}" = "${kept#*/}" ]
ktap_status $? "the trace buffer kept every event"

# Each event's lines in a file of its own, in one pass: under TCG a grep
# of the whole trace takes seconds.
mkdir -p /tmp/events
awk 'match($0, /: blitz_[a-z_]+: /) {
	print > ("/tmp/events/" substr($0, RSTART + 2, RLENGTH - 4))
}' /tmp/trace

# event NAME REGEX: NAME fired, and every line of it matches REGEX.
event() {
	f=/tmp/events/$1
	[ -f "$f" ] || : > "$f"
	lines=$(wc -l < "$f")
	bad=$(grep -Ecv "$2" "$f")
	echo "# $1: $lines, $bad malformed"
	grep -Ev "$2" "$f" | head -n 2 | sed 's/^/#   /'
	[ "$lines" -gt 0 ] && [ "$bad" = 0 ]
}

w='worker=[0-9]+'
event blitz_submit 'pool=default job=[0-9a-fx]+ func=[a-z_]+.* (local|injected)$'
ktap_status $? "blitz_submit: pool, job, func, local or injected"
grep -q ' local$' /tmp/events/blitz_submit &&
	grep -q ' injected$' /tmp/events/blitz_submit
ktap_status $? "blitz_submit: both local and injected submits"
event blitz_execute_start "pool=default $w job=[0-9a-fx]+ func=[a-z_]+"
ktap_status $? "blitz_execute_start: pool, worker, job, func"
event blitz_execute_end "pool=default $w job=[0-9a-fx]+ func=[a-z_]+"
ktap_status $? "blitz_execute_end: pool, worker, job, func"
event blitz_steal "pool=default thief=[0-9]+ victim=[0-9]+ job=[0-9a-fx]+$"
ktap_status $? "blitz_steal: pool, thief, victim, job"
event blitz_sleep "pool=default $w\$"
ktap_status $? "blitz_sleep: pool, worker"
event blitz_wake "pool=default $w\$"
ktap_status $? "blitz_wake: pool, worker"
event blitz_join_promote "pool=default $w b=[a-z_]+"
ktap_status $? "blitz_join_promote: pool, worker, b"
event blitz_join_stolen "pool=default $w b=[a-z_]+"
ktap_status $? "blitz_join_stolen: pool, worker, b"
event blitz_block "pool=default $w\$"
ktap_status $? "blitz_block: pool, worker"
event blitz_unblock "pool=default $w\$"
ktap_status $? "blitz_unblock: pool, worker"
event blitz_spare_start "pool=default $w cpu=[0-9]+\$"
ktap_status $? "blitz_spare_start: pool, worker, cpu"
event blitz_spare_stop "pool=default $w cpu=[0-9]+\$"
ktap_status $? "blitz_spare_stop: pool, worker, cpu"
event blitz_spare_exit "pool=default $w cpu=[0-9]+\$"
ktap_status $? "blitz_spare_exit: pool, worker, cpu"
# Worker indices within the pool: its workers, then its spares' slots.
slots=$(grep -c '^[0-9]' /sys/kernel/debug/blitz/default/stats)
big=$(grep -Eo "(worker|thief|victim)=[0-9]+" /tmp/trace | cut -d= -f2 |
	awk -v n="$slots" '$1 >= n' | wc -l)
[ "$big" = 0 ]
ktap_status $? "every worker index below $slots"

# blitz-top over one second of the torture's load, which runs 4 s: the
# default pool's workers, a total, its attrs and state, and jobs executed.
insmod /modules/blitz_torture.ko duration=4 &
client=$!
sleep 1
blitz-top -1 -i 1 default > /tmp/top
wait $client
rmmod blitz_torture
sed 's/^/# /' /tmp/top
rows=$(grep -c '^[0-9][0-9]* ' /tmp/top)
exec=$(awk '$1 == "total" { print $3 }' /tmp/top)
[ "$rows" = "$ncpu" ] && [ "${exec:-0}" -gt 0 ] &&
	grep -q '^  workers=[0-9]* sleeping=' /tmp/top &&
	grep -q "^  cpumask=0-$((ncpu - 1)) nice=0 flags=none$" /tmp/top
ktap_status $? "blitz-top -1: $rows workers, $exec jobs/s executed, attrs, state"

rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
