/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The core latch (Rayon's CoreLatch): the waiter moves it UNSET -> SLEEPY
 * -> SLEEPING; wake_up() or a kick() moves it back to UNSET; anyone may
 * set() it, for good. Strong cmpxchg, fully ordered when it succeeds. A
 * latch may be freed the instant it is set: read what you need first.
 * See Documentation/blitz/design.rst, "The core latch".
 */
#ifndef _BLITZ_LATCH_H
#define _BLITZ_LATCH_H

#include <linux/atomic.h>
#include <linux/blitz.h>

enum blitz_latch_state {
	BLITZ_LATCH_UNSET,
	BLITZ_LATCH_SLEEPY,
	BLITZ_LATCH_SLEEPING,
	BLITZ_LATCH_SET,
};

/* struct blitz_latch is in <linux/blitz.h>: join frames embed one. */

static inline void blitz_latch_init(struct blitz_latch *latch)
{
	atomic_set(&latch->state, BLITZ_LATCH_UNSET);
}

static inline bool blitz_latch_move(struct blitz_latch *latch,
				    int from, int to)
{
	return atomic_try_cmpxchg(&latch->state, &from, to);
}

/* The waiter announces it may sleep. False if the latch is already set. */
static inline bool blitz_latch_get_sleepy(struct blitz_latch *latch)
{
	return blitz_latch_move(latch, BLITZ_LATCH_UNSET, BLITZ_LATCH_SLEEPY);
}

/* The waiter commits to sleep. False if the latch was set meanwhile. */
static inline bool blitz_latch_fall_asleep(struct blitz_latch *latch)
{
	return blitz_latch_move(latch, BLITZ_LATCH_SLEEPY,
				BLITZ_LATCH_SLEEPING);
}

/*
 * Make the waiter look again: SLEEPY or SLEEPING -> UNSET; true if it was
 * SLEEPING, and the caller must wake it. Work queued for the waiter needs a
 * full barrier before: it pairs with get_sleepy()
 * (litmus/share-kick-joiner.litmus).
 */
static inline bool blitz_latch_kick(struct blitz_latch *latch)
{
	int s = atomic_read(&latch->state);

	do {
		if (s == BLITZ_LATCH_UNSET || s == BLITZ_LATCH_SET)
			return false;
	} while (!atomic_try_cmpxchg(&latch->state, &s, BLITZ_LATCH_UNSET));
	return s == BLITZ_LATCH_SLEEPING;
}

/* The waiter is awake again; leaves SET alone. */
static inline void blitz_latch_wake_up(struct blitz_latch *latch)
{
	blitz_latch_kick(latch);
}

/*
 * Fully ordered: a waiter that sees SET sees what the setter did. True if
 * the waiter was SLEEPING and the caller must wake it
 * (litmus/latch-set-fall-asleep.litmus).
 */
static inline bool blitz_latch_set(struct blitz_latch *latch)
{
	return atomic_xchg(&latch->state, BLITZ_LATCH_SET) ==
	       BLITZ_LATCH_SLEEPING;
}

/* Pairs with blitz_latch_set() (litmus/latch-probe-set.litmus). */
static inline bool blitz_latch_probe(struct blitz_latch *latch)
{
	return atomic_read_acquire(&latch->state) == BLITZ_LATCH_SET;
}

#endif /* _BLITZ_LATCH_H */
