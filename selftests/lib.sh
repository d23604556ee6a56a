# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by the guest scripts (selftests/run copies it to /selftests/):
# TAP results. "ok STATUS DESCRIPTION" prints one result line, ok when
# STATUS is 0, and counts it; tap_end prints the counts and returns
# non-zero if any result failed.

n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# state_field NAME: a field of the default pool's debugfs state line.
state_field() {
	sed -n "s/.*$1=\([0-9]*\).*/\1/p" /sys/kernel/debug/blitz/default/state
}

# wait_asleep TENTHS: wait until every worker of the default pool sleeps,
# for at most TENTHS tenths of a second; $waited is the tenths waited.
# Fails if they are not all asleep by then.
wait_asleep() {
	waited=0
	while [ "$(state_field sleeping)" != "$(state_field workers)" ] &&
	      [ $waited -lt "$1" ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	[ "$(state_field sleeping)" = "$(state_field workers)" ]
}

tap_end() {
	echo "# $((n - failed)) passed, $failed failed"
	[ $failed = 0 ]
}
