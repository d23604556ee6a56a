#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest selftest (KTAP): the owner of a join, a spare, returns and exits
# while the thief that ran its b has yet to wake it
# (selftests/module/blitz_join_exit.ko; see the module). blitz.ko opens
# one race window, between a stolen b's latch and the wake-up of its
# owner, on every pass (a sleep of up to 1 s where the thief may sleep, a
# spin of up to 50 ms in its read-side section); a parked spare is reaped
# after 1 ms. Runs under busybox sh inside the guest.

# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

# Bit 15: BLITZ_RACE_JOIN_WAKE in blitz_kmod/race.h's enum blitz_race.
ARGS="spare_idle_ms=1 race_windows=1 race_mask=$((1 << 15)) race_every=1"
ARGS="$ARGS race_delay_us=1000000"

ktap_print_header
ktap_set_plan 3

# shellcheck disable=SC2086 # one word a parameter
insmod /modules/blitz.ko $ARGS
ktap_status $? "insmod blitz.ko $ARGS"

seen=$(dmesg | wc -l)
insmod /modules/blitz_join_exit.ko
rc=$?
# Loaded even if its first run failed (lib.sh): unload it first.
[ $rc = 0 ] && rmmod blitz_join_exit
kstm_failed blitz_join_exit "$seen" && rc=1
dmesg | tail -n +$((seen + 1)) | grep 'blitz_join_exit:' |
	sed 's/^\[[^]]*\] /# /'
ktap_status $rc "blitz_join_exit.ko: a spare asleep in a join whose b was stolen, woken as the thief sets the latch, returns, parks and is reaped; the thief's wake-up never finds a freed task"

rmmod blitz
ktap_status $? "rmmod blitz"

ktap_finished
