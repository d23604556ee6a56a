# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by the guest scripts (selftests/run copies it to /selftests/):
# kselftest's KTAP helpers, which selftests/run copies from the kernel
# tree, and what blitz's scripts need besides.

# shellcheck source=/dev/null
. /selftests/kselftest/ktap_helpers.sh

# ktap_status STATUS DESCRIPTION: one result, a pass when STATUS is 0.
ktap_status() {
	if [ "$1" = 0 ]; then
		ktap_test_pass "$2"
	else
		ktap_test_fail "$2"
	fi
}

# kstm_failed NAME SEEN: whether the kernel log after its first SEEN
# lines says that a kselftest_module.h module NAME failed a test. Its
# load's status is not enough: busybox's insmod loads a module whose
# finit_module() failed again, with init_module(), so a failing init runs
# twice and the status is the second run's.
kstm_failed() {
	dmesg | tail -n +$(($2 + 1)) | grep -q "$1: failed [0-9]* out of"
}

# run_selftest ARGS...: load the client module, blitz_selftest.ko, with
# ARGS; its TAP lines, from the kernel log, become KTAP comments. The
# status is non-zero if any test failed.
run_selftest() {
	seen=$(dmesg | wc -l)
	insmod /modules/blitz_selftest.ko "$@"
	rc=$?
	# Loaded even if its first run failed: unload it, so that the tests
	# after this one can load it again.
	[ $rc = 0 ] && rmmod blitz_selftest
	dmesg | tail -n +$((seen + 1)) | grep 'blitz_selftest:' |
		sed 's/^\[[^]]*\] /# /'
	kstm_failed blitz_selftest "$seen" && rc=1
	return $rc
}

# state_field NAME: a field of the default pool's debugfs state line.
state_field() {
	sed -n "s/.*$1=\([0-9]*\).*/\1/p" /sys/kernel/debug/blitz/default/state
}

# all_asleep: whether every worker of the default pool sleeps, none is
# blocked, and none is awake and idle (a spare dozing on duty counts as
# sleeping, and would stand in for one).
all_asleep() {
	sleeping=$(state_field sleeping)
	[ "$sleeping" = "$(state_field workers)" ] &&
		[ "$(state_field inactive)" = "$sleeping" ] &&
		[ "$(state_field blocked)" = 0 ]
}

# wait_asleep TENTHS: wait until all_asleep, for at most TENTHS tenths of
# a second; $waited is the tenths waited. Fails if not by then.
wait_asleep() {
	waited=0
	while ! all_asleep && [ $waited -lt "$1" ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	all_asleep
}

KML=/sys/kernel/debug/kmemleak

# The debug kernel's automatic kmemleak scan stays off: debug_leaks.sh
# and torture.sh scan when they are done, which covers everything before.
# A scan holds kmemleak_lock, which every allocation takes, and a vCPU,
# for seconds: spares wait to be made, idle workers to fall asleep
# (testing.rst, "Race windows and blitztorture").
if [ -e $KML ]; then
	echo scan=off > $KML
fi

# kmemleak_scan: scan twice, as kmemleak's documentation advises, so that
# a pointer in transit is not a leak, once every object is old enough to
# be reported (5 s).
kmemleak_scan() {
	sleep 6
	echo scan > $KML && echo scan > $KML
}

# kmemleak_report: print what the scans found, as KTAP comments; fails
# if they found any unreferenced object.
kmemleak_report() {
	leaks=$(grep -c '^unreferenced object' $KML)
	echo "# kmemleak: $leaks unreferenced objects"
	head -n 60 $KML | sed 's/^/# /'
	[ "$leaks" = 0 ]
}
