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

tap_end() {
	echo "# $((n - failed)) passed, $failed failed"
	[ $failed = 0 ]
}
