/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sleep protocol's packed counter word.
 *
 *   bits  0-15  sleeping: workers blocked in the sleep protocol
 *   bits 16-31  inactive: workers not running a job (idle or asleep)
 *   bits 32-63  JEC, the jobs event counter
 *
 * One word, so that a job poster reads all three in one atomic load and a
 * sleeper registers itself with one cmpxchg that fails if anything moved.
 * The JEC is even while some worker is "sleepy" (has announced that it is
 * about to sleep) and no job has been posted since; a poster that finds it
 * even makes it odd, which tells every sleepy worker that it must look
 * again. It wraps at 2^32 (Rayon issue #797 was a JEC overflow).
 *
 * Every read-modify-write here is fully ordered (value-returning atomics
 * and successful cmpxchg), as the protocol in sleep.c requires; loads are
 * relaxed unless said otherwise.
 *
 * Sleeping is decremented by whoever claims the sleeper's bit in the
 * pool's sleepers bitmap: a waker, or the sleeper itself when it did not
 * sleep or was stopped. See sleep.c.
 */
#ifndef _BLITZ_COUNTERS_H
#define _BLITZ_COUNTERS_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/minmax.h>
#include <linux/types.h>

#define BLITZ_ONE_SLEEPING	BIT_ULL(0)
#define BLITZ_ONE_INACTIVE	BIT_ULL(16)
#define BLITZ_ONE_JEC		BIT_ULL(32)

/* More workers than this would overflow a 16-bit field. */
#define BLITZ_MAX_WORKERS	0xffff

struct blitz_counters {
	atomic64_t word;
};

static inline unsigned int blitz_sleeping(u64 c)
{
	return c & 0xffff;
}

static inline unsigned int blitz_inactive(u64 c)
{
	return (c >> 16) & 0xffff;
}

/* Workers looking for work, awake: inactive and not asleep. */
static inline unsigned int blitz_awake_idle(u64 c)
{
	return blitz_inactive(c) - min(blitz_inactive(c), blitz_sleeping(c));
}

static inline u32 blitz_jec(u64 c)
{
	return c >> 32;
}

/* The JEC is sleepy (even) when nothing was posted since a worker got sleepy. */
static inline bool blitz_jec_is_sleepy(u32 jec)
{
	return !(jec & 1);
}

static inline void blitz_counters_init(struct blitz_counters *ctr)
{
	atomic64_set(&ctr->word, 0);
}

static inline u64 blitz_counters_load(struct blitz_counters *ctr)
{
	return atomic64_read(&ctr->word);
}

/* A worker stops running jobs and starts looking for work. */
static inline void blitz_add_inactive(struct blitz_counters *ctr)
{
	atomic64_fetch_add(BLITZ_ONE_INACTIVE, &ctr->word);
}

/*
 * A looking worker stops looking, with work or not. Returns the word as
 * this call left it, for the wake cascade in sleep.c.
 */
static inline u64 blitz_sub_inactive(struct blitz_counters *ctr)
{
	return atomic64_sub_return(BLITZ_ONE_INACTIVE, &ctr->word);
}

/*
 * Register as sleeping, if the word still holds @old (the value whose JEC
 * the caller checked). Fully ordered on success.
 */
static inline bool blitz_try_add_sleeping(struct blitz_counters *ctr, u64 old)
{
	return atomic64_try_cmpxchg(&ctr->word, &old, old + BLITZ_ONE_SLEEPING);
}

/*
 * Called by whoever claimed the sleeper's bit. Fully ordered: a woken
 * sleeper then sees the job of a poster that counted on it
 * (litmus/woken-sleeper-finds.litmus).
 */
static inline void blitz_sub_sleeping(struct blitz_counters *ctr)
{
	atomic64_fetch_sub(BLITZ_ONE_SLEEPING, &ctr->word);
}

/*
 * Add one to the JEC if its parity is @sleepy (it wraps: the carry out of
 * bit 63 is dropped). Returns whether it did; *@c receives the word as this
 * call left it: the new value if it incremented, else the value it saw.
 * When nothing changes the read is relaxed: a caller that needs its job
 * visible before this read (an injection) issues the fence itself.
 */
static inline bool blitz_increment_jec_if(struct blitz_counters *ctr,
					  bool sleepy, u64 *c)
{
	u64 old = atomic64_read(&ctr->word);

	do {
		if (blitz_jec_is_sleepy(blitz_jec(old)) != sleepy) {
			*c = old;
			return false;
		}
	} while (!atomic64_try_cmpxchg(&ctr->word, &old, old + BLITZ_ONE_JEC));
	*c = old + BLITZ_ONE_JEC;
	return true;
}

/* A job was posted: tell the sleepy (JEC even -> odd). */
static inline u64 blitz_increment_jec_if_sleepy(struct blitz_counters *ctr)
{
	u64 c;

	blitz_increment_jec_if(ctr, true, &c);
	return c;
}

/* A worker announces it is getting sleepy (JEC odd -> even). */
static inline u64 blitz_increment_jec_if_active(struct blitz_counters *ctr)
{
	u64 c;

	blitz_increment_jec_if(ctr, false, &c);
	return c;
}

#endif /* _BLITZ_COUNTERS_H */
