#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (KTAP) for a guest booted with "isolcpus=2,3
# nohz_full=2,3" at -smp 4 (tools/check's second selftests run): blitz
# leaves CPUs 2 and 3 alone. The client module's "isolated" test submits
# from every CPU, from a task and from hardirq, and forks from CPUs 2 and
# 3, and notes where every job ran; debugfs shows the default pool on
# CPUs 0 and 1 only. Then "attrs_hotplug": pool attributes, and a pool on
# CPU 1 alone while CPU 1 goes offline and online under load; and
# "sleep_hotplug": a job that waits for one submitted after it, while a
# CPU hotplug operation is held; and "sleep_away": the same in a pool on
# CPU 1 alone, with CPU 1 offline (its workers then allowed on CPUs 0-1
# only) and back. Not named blitz_*.sh, so that the other boots do not
# run it.

DBG=/sys/kernel/debug/blitz/default
CPUS=/sys/devices/system/cpu
# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

# hk_only WHEN: every row of the default pool's stats, spares' too, has
# its worker homed on CPU 0 or 1, two rows are workers', and every
# thread of the pool is allowed on its home CPU alone and last ran on
# CPU 0 or 1.
hk_only() {
	when=$1 bad=0
	awk '$1 ~ /^[0-9]+$/ { print "# " $1 " cpu " $2 " executed " $3 " spare " $NF }' \
		$DBG/stats
	rows=$(awk '$1 ~ /^[0-9]+$/ && $NF == 0' $DBG/stats | wc -l)
	away=$(awk '$1 ~ /^[0-9]+$/ && $2 != 0 && $2 != 1' $DBG/stats | wc -l)
	[ "$rows" = 2 ] && [ "$away" = 0 ] || bad=1
	for p in /proc/[0-9]*; do
		read -r comm < "$p/comm" 2>/dev/null || continue
		case $comm in blitz/default/*) ;; *) continue ;; esac
		home=$(awk -v i="${comm##*/}" '$1 == i { print $2 }' $DBG/stats)
		# Empty when gone meanwhile (a parked spare exits).
		allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' \
			"$p/status" 2>/dev/null)
		# shellcheck disable=SC2046 # split the fields on purpose
		set -- $(sed 's/.*) //' "$p/stat" 2>/dev/null)
		[ -n "$allowed" ] || continue
		case "$allowed/${37}" in
		"$home"/[01]) ;;
		*)	echo "# $comm (home $home) allowed on $allowed, last ran on ${37}"
			bad=1 ;;
		esac
	done
	ktap_status $bad "$when: default pool's workers at home on CPUs 0-1 (debugfs rows, affinity)"
}

ktap_print_header
ktap_set_plan 10

isolated=$(cat $CPUS/isolated) nohz=$(cat $CPUS/nohz_full 2>/dev/null)
echo "# online $(cat $CPUS/online), isolated $isolated, nohz_full $nohz"
[ "$isolated" = 2-3 ] && [ "$nohz" = 2-3 ] && [ "$(cat $CPUS/online)" = 0-3 ]
ktap_status $? "booted with CPUs 2-3 isolated and nohz_full, 0-3 online"

insmod /modules/blitz.ko
ktap_status $? "insmod blitz.ko"

attrs=$(cat $DBG/attrs)
echo "# default attrs: $attrs; $(cat $DBG/state)"
[ "$attrs" = "cpumask=0-1 nice=0 flags=none" ] && [ "$(state_field workers)" = 2 ]
ktap_status $? "default pool: attrs cpumask=0-1 nice=0 flags=none, 2 workers"

run_selftest tests=isolated
ktap_status $? "jobs from every CPU, task and hardirq, and loop, joins and groups from CPUs 2-3 ran on CPUs 0-1 only, each once"

hk_only "after the isolated test"

run_selftest tests=attrs_hotplug
ktap_status $? "attrs: -EINVAL sets, nice 7, CPU 0 alone, CPU 1 alone while it goes offline and online"

run_selftest tests=sleep_hotplug
ktap_status $? "a job waits for a job submitted after it, in a new pool of one worker, while CPU 1's offlining is held"

run_selftest tests=sleep_away
ktap_status $? "a job waits for a job submitted after it, in a pool of one worker on CPU 1 alone, with CPU 1 offline (its workers allowed on CPUs 0-1) and back (on CPU 1)"

hk_only "after CPU 1's hotplug"

rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
