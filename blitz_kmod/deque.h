/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chase-Lev work-stealing deque of job pointers.
 *
 * Concurrency contract:
 *
 *            |  push  |  pop  | steal
 *   ---------+--------+-------+-------
 *   push     |   -    |   -   |   Y
 *   pop      |   -    |   -   |   Y
 *   steal    |   Y    |   Y   |   Y
 *
 * push() and pop() belong to the owner, one task, and must not run in an
 * interrupt that lands on the owner (the bottom index is updated in two
 * steps). steal() may run anywhere, concurrently with everything.
 *
 * The orderings are those of Le, Pop, Cohen and Zappa Nardelli, "Correct
 * and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013), mapped
 * to kernel primitives: full fence = smp_mb(), acquire/release =
 * smp_load_acquire()/smp_store_release(), relaxed = READ_ONCE()/WRITE_ONCE(),
 * CAS = try_cmpxchg() (fully ordered on success).
 *
 * The ring is fixed: BLITZ_DEQUE_SLOTS entries, never grown. A growable
 * array would have to allocate in push(), which runs under blitz_submit()
 * from any context, and would need a way to retire old arrays that thieves
 * may still read. Instead push() reports a full ring and the caller
 * overflows: a submitted job goes to the worker's own injection list, a
 * promotion leaves its frame latent. Fork-join needs one slot per nesting
 * level, so a full ring means thieves are far behind, and running inline
 * is then the right thing to do anyway.
 */
#ifndef _BLITZ_DEQUE_H
#define _BLITZ_DEQUE_H

#include <linux/atomic.h>
#include <linux/blitz.h>
#include <linux/bug.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/llist.h>

#include "latch.h"

#define BLITZ_DEQUE_SLOTS	256
#define BLITZ_DEQUE_MASK	(BLITZ_DEQUE_SLOTS - 1)

/* steal() lost a race with another thief or the owner: try again later. */
#define BLITZ_DEQUE_ABORT	ERR_PTR(-EAGAIN)

/*
 * A slot holds a job pointer, with BLITZ_DEQUE_FRAME set in bit 0 for a
 * join frame (jobs are word aligned). A waiting joiner steals only frames:
 * blitz_deque_steal_frame().
 */
#define BLITZ_DEQUE_FRAME	1UL

/**
 * struct blitz_deque - a Chase-Lev deque
 * @top: next index to steal; advanced by thieves and by the owner's last pop
 * @bottom: next index to push; written only by the owner, or, while it
 *	    is switched out, by its preempt notifier on its behalf
 * @slots: the ring; a slot is valid for top <= index < bottom
 *
 * @top and @bottom live on cache lines of their own: the owner writes
 * @bottom on every push and pop, thieves write @top on every steal.
 */
struct blitz_deque {
	long top ____cacheline_aligned_in_smp;
	long bottom ____cacheline_aligned_in_smp;
	unsigned long slots[BLITZ_DEQUE_SLOTS] ____cacheline_aligned_in_smp;
};

static inline void blitz_deque_init(struct blitz_deque *dq)
{
	dq->top = 0;
	dq->bottom = 0;
}

static inline struct blitz_job *blitz_deque_job(unsigned long slot)
{
	return (struct blitz_job *)(slot & ~BLITZ_DEQUE_FRAME);
}

static inline bool __blitz_deque_push(struct blitz_deque *dq,
				      unsigned long slot)
{
	long b = dq->bottom;
	/*
	 * Acquire pairs with the fully ordered try_cmpxchg() on top in
	 * blitz_deque_steal(): a thief that took slot t has read it before
	 * we reuse that slot for index t + BLITZ_DEQUE_SLOTS.
	 * (litmus/deque-slot-reuse.litmus)
	 */
	long t = smp_load_acquire(&dq->top);

	if (b - t >= BLITZ_DEQUE_SLOTS)
		return false;
	WRITE_ONCE(dq->slots[b & BLITZ_DEQUE_MASK], slot);
	/*
	 * Publish the slot before the index. Pairs with smp_load_acquire()
	 * of bottom in blitz_deque_steal(). (litmus/deque-push-steal.litmus)
	 */
	smp_store_release(&dq->bottom, b + 1);
	return true;
}

/**
 * blitz_deque_push - add a job at the owner's end
 * @dq: the deque
 * @job: the job
 *
 * Context: the owner only, in task context.
 * Return: true when queued, false when the ring is full.
 */
static inline bool blitz_deque_push(struct blitz_deque *dq,
				    struct blitz_job *job)
{
	return __blitz_deque_push(dq, (unsigned long)job);
}

/**
 * blitz_deque_push_frame - add a join frame's job at the owner's end
 * @dq: the deque
 * @job: the frame's job
 *
 * As blitz_deque_push(), and the job may also be taken by
 * blitz_deque_steal_frame().
 *
 * Context: the owner only, in task context.
 * Return: true when queued, false when the ring is full.
 */
static inline bool blitz_deque_push_frame(struct blitz_deque *dq,
					  struct blitz_job *job)
{
	return __blitz_deque_push(dq, (unsigned long)job | BLITZ_DEQUE_FRAME);
}

/**
 * blitz_deque_push_list - add a list of jobs at the owner's end at once
 * @dq: the deque
 * @list: the jobs, NULL-terminated, linked by &blitz_job.node
 * @n: how many
 *
 * The first job of @list goes nearest the bottom: the owner pops them in
 * the order of @list, thieves steal from its end. The caller knows there
 * is room for them all.
 *
 * Context: the owner only, in task context.
 */
static inline void blitz_deque_push_list(struct blitz_deque *dq,
					 struct llist_node *list,
					 unsigned int n)
{
	long b = dq->bottom, i = b + n, t;
	struct llist_node *pos;

	/*
	 * Acquire, as in __blitz_deque_push(): the thieves that took the
	 * slots we reuse have read them. (litmus/deque-slot-reuse.litmus)
	 */
	t = smp_load_acquire(&dq->top);
	WARN_ON_ONCE(i - t > BLITZ_DEQUE_SLOTS);
	for (pos = list; pos; pos = pos->next)
		WRITE_ONCE(dq->slots[--i & BLITZ_DEQUE_MASK],
			   (unsigned long)llist_entry(pos, struct blitz_job,
						      node));
	/*
	 * Every slot before the index, as in __blitz_deque_push(): until
	 * then no job of @list can be stolen, run and reused, so @list can
	 * be walked. (litmus/deque-push-list.litmus)
	 */
	smp_store_release(&dq->bottom, b + n);
}

/* The most recently pushed slot, or 0; see blitz_deque_pop(). */
static inline unsigned long __blitz_deque_pop(struct blitz_deque *dq)
{
	long b = dq->bottom - 1;
	unsigned long slot;
	long t;

	/*
	 * top only grows, so a stale top that already reaches bottom proves
	 * the deque empty: skip the fence on the idle path.
	 */
	if (READ_ONCE(dq->top) > b)
		return 0;

	/*
	 * Release, like every store to bottom: a thief that reads this value
	 * with its acquire load must also see the slots below it, and the
	 * LKMM has no release sequences to carry push()'s release over a
	 * plain store. (litmus/deque-pop-stale-release.litmus; the old
	 * WRITE_ONCE(): litmus/deque-pop-stale-writeonce.litmus, Sometimes)
	 */
	smp_store_release(&dq->bottom, b);
	/*
	 * Claim slot b before looking at top. Pairs with smp_mb() in
	 * blitz_deque_steal(): either the thief sees the lowered bottom or we
	 * see its raised top, so no job is taken twice.
	 * (litmus/deque-pop-steal.litmus)
	 */
	smp_mb();
	t = READ_ONCE(dq->top);
	if (t > b) {
		/* Restored with release, as above. */
		smp_store_release(&dq->bottom, b + 1);
		return 0;
	}
	slot = READ_ONCE(dq->slots[b & BLITZ_DEQUE_MASK]);
	if (t == b) {
		/*
		 * The last job: race the thieves for it on top.
		 * (litmus/deque-pop-steal-last.litmus)
		 */
		if (!try_cmpxchg(&dq->top, &t, t + 1))
			slot = 0;
		/* Restored with release, as above. */
		smp_store_release(&dq->bottom, b + 1);
	}
	return slot;
}

/**
 * blitz_deque_pop - take the most recently pushed job
 * @dq: the deque
 *
 * Context: the owner only, in task context.
 * Return: the job, or NULL when the deque is empty or a thief took the
 * last job first.
 */
static inline struct blitz_job *blitz_deque_pop(struct blitz_deque *dq)
{
	return blitz_deque_job(__blitz_deque_pop(dq));
}

/**
 * blitz_deque_pop_slot - take the most recently pushed job, and its kind
 * @dq: the deque
 * @frame: set to whether it was pushed with blitz_deque_push_frame()
 *
 * Context: the owner only, in task context.
 * Return: as blitz_deque_pop().
 */
static inline struct blitz_job *blitz_deque_pop_slot(struct blitz_deque *dq,
						     bool *frame)
{
	unsigned long slot = __blitz_deque_pop(dq);

	*frame = slot & BLITZ_DEQUE_FRAME;
	return blitz_deque_job(slot);
}

/*
 * Take the oldest job; with @until, only if it is a frame at index @base or
 * above and @until is not set yet.
 */
static inline struct blitz_job *__blitz_deque_steal(struct blitz_deque *dq,
						    struct blitz_latch *until,
						    long base)
{
	unsigned long slot;
	long t, b;

	/*
	 * Pairs with the fully ordered try_cmpxchg() of other thieves.
	 * (litmus/deque-pop-steal.litmus, P2 and P1)
	 */
	t = smp_load_acquire(&dq->top);
	/*
	 * Read top before bottom. Pairs with smp_mb() in blitz_deque_pop().
	 * (litmus/deque-pop-steal.litmus)
	 */
	smp_mb();
	/* Pairs with the release stores. (litmus/deque-push-steal.litmus) */
	b = smp_load_acquire(&dq->bottom);
	if (t >= b || (until && t < base))
		return NULL;
	/*
	 * The slot may be overwritten by a push once someone else advances
	 * top past t; then the cmpxchg below fails and the value is dropped.
	 */
	slot = READ_ONCE(dq->slots[t & BLITZ_DEQUE_MASK]);
	if (until) {
		if (!(slot & BLITZ_DEQUE_FRAME))
			return NULL;
		/*
		 * Read the slot before @until: a frame pushed after @until
		 * was set shows it set. Pairs with the full ordering of
		 * blitz_latch_set() before the owner's later pushes.
		 * (litmus/leapfrog-latch-check.litmus)
		 */
		smp_rmb();
		if (blitz_latch_probe(until))
			return NULL;
	}
	if (!try_cmpxchg(&dq->top, &t, t + 1))
		return BLITZ_DEQUE_ABORT;
	return blitz_deque_job(slot);
}

/**
 * blitz_deque_steal - take the oldest job
 * @dq: the deque
 *
 * Context: any.
 * Return: the job; NULL when the deque is empty; BLITZ_DEQUE_ABORT when
 * another thief or the owner won the race for it.
 */
static inline struct blitz_job *blitz_deque_steal(struct blitz_deque *dq)
{
	return __blitz_deque_steal(dq, NULL, 0);
}

/**
 * blitz_deque_steal_frame - take the oldest job if it is a recent frame
 * @dq: the deque
 * @base: the lowest index that may be taken
 * @until: a latch that the owner sets before it pushes what may not be
 *	   taken
 *
 * For a joiner that may run only what descends from its join: the oldest
 * job is taken only if it was pushed with blitz_deque_push_frame() at an
 * index of @base or above, before @until was set.
 *
 * Context: any.
 * Return: as blitz_deque_steal(); NULL also when the oldest job is not
 * such a frame.
 */
static inline struct blitz_job *blitz_deque_steal_frame(struct blitz_deque *dq,
							long base,
							struct blitz_latch *until)
{
	return __blitz_deque_steal(dq, until, base);
}

/**
 * blitz_deque_has_frame - whether the oldest job looks like a recent frame
 * @dq: the deque
 * @base: the lowest index of interest
 *
 * A look for a waiting joiner, without taking anything: whether
 * blitz_deque_steal_frame() with @base would likely find a frame.
 *
 * Context: any.
 * Return: true if the oldest job was a frame at @base or above.
 */
static inline bool blitz_deque_has_frame(struct blitz_deque *dq, long base)
{
	long t = READ_ONCE(dq->top);
	/* Pairs with the release stores, for the slot. */
	long b = smp_load_acquire(&dq->bottom);

	return t < b && t >= base &&
	       (READ_ONCE(dq->slots[t & BLITZ_DEQUE_MASK]) & BLITZ_DEQUE_FRAME);
}

/**
 * blitz_deque_bottom - the index the owner pushes at next
 * @dq: the deque
 *
 * Context: the owner only.
 * Return: the bottom index.
 */
static inline long blitz_deque_bottom(struct blitz_deque *dq)
{
	return dq->bottom;
}

/**
 * blitz_deque_empty - whether the deque looked empty
 * @dq: the deque
 *
 * A snapshot for wake-up heuristics; it may be stale by the time it returns.
 *
 * Context: any.
 * Return: true if no job was queued when looked at.
 */
static inline bool blitz_deque_empty(struct blitz_deque *dq)
{
	return READ_ONCE(dq->bottom) - READ_ONCE(dq->top) <= 0;
}

#endif /* _BLITZ_DEQUE_H */
