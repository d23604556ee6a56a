/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The core latch: what a worker waits on, and how it falls asleep on it.
 *
 *   UNSET --get_sleepy--> SLEEPY --fall_asleep--> SLEEPING
 *     ^                     |                        |
 *     +------wake_up/kick---+-----wake_up/kick-------+
 *   any state --set--> SET (final)
 *
 * Only the waiting worker moves the latch along the top row; it, or a task
 * that queued work for it (kick), moves it back; any task may set() it.
 * set() reports whether the waiter was SLEEPING: then the setter must wake
 * it, because the waiter has committed to sleep and will not look at the
 * latch again until woken. A waiter that is merely
 * SLEEPY fails its next cmpxchg and stays awake. All transitions are strong
 * cmpxchg (the kernel has no weak one) and fully ordered when they succeed.
 *
 * A latch may be freed the instant it is set (a joiner returns and its
 * stack frame is gone): read anything needed from around it before set().
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
 * Make the waiter look again without setting the latch: SLEEPY or SLEEPING
 * -> UNSET. A SLEEPY waiter then fails to fall asleep; for a SLEEPING one
 * it returns true, and the caller must wake it. Fully ordered when it
 * moves the latch; a caller that queued work for the waiter before it
 * makes that store fully ordered too (llist_add() is), so that either the
 * waiter, after getting sleepy, sees the work, or this sees it sleepy.
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
 * Set the latch. Fully ordered: everything the setter did before is visible
 * to a waiter that sees SET. Returns true if the waiter was SLEEPING and
 * must now be woken by the caller: the waiter cannot have fallen asleep
 * unseen (litmus/latch-set-fall-asleep.litmus).
 */
static inline bool blitz_latch_set(struct blitz_latch *latch)
{
	return atomic_xchg(&latch->state, BLITZ_LATCH_SET) ==
	       BLITZ_LATCH_SLEEPING;
}

/*
 * Acquire: pairs with the full ordering of blitz_latch_set().
 * (litmus/latch-probe-set.litmus)
 */
static inline bool blitz_latch_probe(struct blitz_latch *latch)
{
	return atomic_read_acquire(&latch->state) == BLITZ_LATCH_SET;
}

#endif /* _BLITZ_LATCH_H */
