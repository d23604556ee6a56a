/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Race-window injection: random delays at the points where the executor's
 * correctness depends on what another task does meanwhile.
 *
 * Off by default, and then free: each window is a static branch, a NOP in
 * the instruction stream. blitz.race_windows=1 (module parameter, also
 * writable at run time in /sys/module/blitz/parameters/) turns them on for
 * the torture runs: at one pass in race_every (16) through each window
 * (race_mask selects which, all by default) a task that may sleep yields,
 * sleeps or spins for up to race_delay_us microseconds, a task in an RCU
 * read section that may be preempted spins as long (at most 50 ms), any
 * other context spins for up to a few microseconds. Either way a
 * concurrent task gets a chance to run through the window, as a
 * preemption at exactly that point would.
 */
#ifndef _BLITZ_RACE_H
#define _BLITZ_RACE_H

#include <linux/jump_label.h>

enum blitz_race {
	BLITZ_RACE_INJECT_WAKE,		/* job injected, not marked nor posted */
	BLITZ_RACE_SLEEP_BITMAP,	/* sleeper counted, not in the bitmap */
	BLITZ_RACE_SLEEP_LOOK,		/* sleeper in the bitmap, no last look */
	BLITZ_RACE_LATCH_EXIT,		/* waiter saw its latch, not yet active */
	BLITZ_RACE_JOIN_POP,		/* b pushed and a run, b not yet popped */
	BLITZ_RACE_JOIN_DONE,		/* stolen b ran, its latch not yet set */
	BLITZ_RACE_DESTROY_DRAIN,	/* pool killed, drain not yet waited on */
	BLITZ_RACE_IDLE_YIELD,		/* idle worker about to yield its CPU */
	BLITZ_RACE_LEAPFROG,		/* joiner saw its latch unset, not stolen */
	BLITZ_RACE_SHARE_ASK,		/* asker saw no request, not yet asked */
	BLITZ_RACE_SHARE_KICK,		/* frame promoted, joiner not kicked */
	BLITZ_RACE_CREDIT_UNDO,		/* stock found empty, not yet undone */
	BLITZ_RACE_SPARE_LEAVE,		/* spare not needed, not yet parked */
	BLITZ_RACE_SPARE_PARK,		/* spare parked, not yet waiting */
	BLITZ_RACE_SPARE_MADE,		/* spare made, not yet on duty */
	BLITZ_RACE_JOIN_WAKE,		/* b's latch set, its owner not woken */
	BLITZ_RACE_SPARE_REAP,		/* parked spare timed out, not reaped */
	BLITZ_NR_RACES,
};

DECLARE_STATIC_KEY_FALSE(blitz_race_key);
extern unsigned int blitz_race_delay_us;
extern unsigned long blitz_race_mask;
extern unsigned int blitz_race_every;

void __blitz_race_window(enum blitz_race where);

static __always_inline void blitz_race_window(enum blitz_race where)
{
	if (static_branch_unlikely(&blitz_race_key))
		__blitz_race_window(where);
}

void blitz_race_init(void);

#endif /* _BLITZ_RACE_H */
