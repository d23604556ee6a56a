// SPDX-License-Identifier: GPL-2.0
/*
 * Latent join frames: a fork records its frame on its worker's private
 * stack with plain stores, and the worker promotes the oldest one onto
 * its Chase-Lev deque only when someone could use it: asked by an idle
 * worker or a waiting joiner (at most once per share_interval_us, the
 * cooldown), or when it is switched out, by its preempt notifier.
 * Documentation/blitz/design.rst, "Latent frames", has the protocol.
 *
 * Who touches what:
 *
 *   depth, published, latent[], serving, promoted_at
 *	the owner, in task context, and its notifier when it is switched
 *	out; the share timer tests serving, as a hint, while the owner
 *	runs. The owner keeps preemption off where it must not be switched
 *	out: while it pushes on its deque, promotes, or hides the frames of
 *	an outer segment.
 *   share
 *	askers, the share timer and the notifier: WRITE_ONCE(); the owner:
 *	xchg().
 *   busy
 *	written by the owner, read by askers and the share timer.
 *
 * Invariants, per segment (a job that a worker runs on top of its stack
 * sees only its own frames: blitz_execute()):
 *
 *   P1  frames [0, published) are promoted, [published, depth) latent:
 *       promotion takes latent[published], the oldest latent frame, and
 *       a join on a promoted frame i lowers published to i;
 *   P2  a worker's promoted frames sit in its deque oldest first, with
 *       submitted jobs anywhere between them;
 *   P3  so a join on a promoted frame finds it the newest frame in the
 *       deque, below only jobs that a() submitted, or finds it stolen.
 */
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/sched/clock.h>

#include "blitz.h"
#include "promote.h"
#include "sleep.h"

unsigned int blitz_share_interval_us = 100;
module_param_named(share_interval_us, blitz_share_interval_us, uint, 0644);
MODULE_PARM_DESC(share_interval_us,
		 "least time between two promotions by a worker, in us (default 100)");

/*
 * Ask @v to promote its oldest latent frame, unless a request is pending,
 * it cools down (its timer armed to renew the request) or starts cold.
 * @asker is the current worker.
 */
void blitz_ask(struct blitz_worker *asker, struct blitz_worker *v)
{
	if (READ_ONCE(v->forks.share))
		return;
	blitz_race_window(BLITZ_RACE_SHARE_ASK);
	/*
	 * A plain store: it may overwrite a WAIT the owner wrote meanwhile,
	 * and then the owner's next fork sees the request in its cooldown
	 * and writes WAIT again. The owner clears with xchg(), which a
	 * request either precedes, and is seen, or follows, and stays
	 * (litmus/share-request-clear.litmus).
	 */
	WRITE_ONCE(v->forks.share, BLITZ_SHARE_ASK);
	blitz_stat_inc(asker, BLITZ_STAT_SHARE_REQUESTS);
}

/* An idle worker found nothing to take: ask every busy worker. */
void blitz_ask_busy(struct blitz_worker *w)
{
	struct blitz_pool *pool = w->pool;
	unsigned int i, n = blitz_nr_slots(pool);
	struct blitz_worker *v;

	for (i = 0; i < n; i++) {
		v = pool->workers[i];
		if (v != w && READ_ONCE(v->busy))
			blitz_ask(w, v);
	}
}

/*
 * blitz_segment_open(), where latent frames must be hidden: not switched
 * out between our read of published and our write, where our notifier
 * promotes too.
 */
unsigned int __blitz_segment_open(struct blitz_worker *w)
{
	unsigned int published;

	preempt_disable();
	published = w->forks.published;
	WRITE_ONCE(w->forks.published, w->forks.depth);
	preempt_enable();
	return published;
}

/*
 * Push latent[published] on the deque. Its owner's, with preemption off,
 * or its notifier's. The push's release store of bottom
 * publishes what the fork and this wrote to the frame: a thief reads the
 * frame only after its acquire of bottom and its winning cmpxchg on top
 * (litmus/share-promote-publish.litmus).
 */
static bool blitz_promote_one(struct blitz_worker *w)
{
	struct blitz_join_frame *f;

	if (w->forks.published >= w->forks.depth)
		return false;
	f = w->forks.latent[w->forks.published];
	f->job = (struct blitz_job)BLITZ_JOB_INIT(blitz_join_stolen);
	blitz_latch_init(&f->latch);
	f->owner = w->task;
	f->thief = NULL;
	if (!blitz_deque_push_frame(&w->deque, &f->job)) {
		/* Thieves are far behind: it stays latent, the prefix intact. */
		blitz_stat_inc(w, BLITZ_STAT_OVERFLOWS);
		return false;
	}
	WRITE_ONCE(w->forks.published, w->forks.published + 1);
	blitz_stat_inc(w, BLITZ_STAT_PROMOTED);
	trace_blitz_join_promote(w->pool->name, w->index, f->fn);
	return true;
}

/*
 * Frames were pushed (promoted, or pushed back by a group waiter): the
 * joiner waiting for the b we run may leapfrog them, and it may be asleep
 * on b's latch. The frame is alive: its latch is set only after b
 * returns, by the worker, which is the caller, or is switched out until
 * the caller returns. The caller ordered its pushes before this with a
 * full barrier; it pairs with the fully ordered
 * blitz_latch_get_sleepy() before the joiner looks at our deque
 * (blitz_join_ready()): either the joiner sees the frame, or this sees
 * it sleepy (litmus/share-kick-joiner.litmus).
 */
static void blitz_kick_serving(struct blitz_worker *w)
{
	struct blitz_join_frame *s = READ_ONCE(w->serving);
	struct task_struct *owner;

	if (!s)
		return;
	owner = s->owner;
	if (blitz_latch_kick(&s->latch))
		wake_up_process(owner);
}

/**
 * blitz_promote_switched_out - promote every latent frame of a worker
 * @w: the worker, being switched out
 *
 * From its sched_out notifier (cm.c), with the runqueue lock held: @w
 * cannot run its frames until it is back, so another worker may. Kicks
 * the joiner of the b that @w runs, if it sleeps, as blitz_post_frames()
 * does, but leaves its wake-up in &blitz_worker.kick, and the post, to
 * the notifier's irq_work. The frame kicked is alive: its latch is set
 * after b returns, by @w.
 *
 * Return: whether it pushed any.
 */
bool blitz_promote_switched_out(struct blitz_worker *w)
{
	struct blitz_join_frame *f;
	bool pushed = false;

	while (blitz_promote_one(w))
		pushed = true;
	if (!pushed)
		return false;
	/* Answered: askers may ask again. */
	WRITE_ONCE(w->forks.share, 0);
	/*
	 * Orders the pushes before the kick's look at the latch, as the
	 * post's barrier does in blitz_post_frames()
	 * (litmus/share-kick-joiner.litmus).
	 */
	smp_mb();
	f = READ_ONCE(w->serving);
	if (f && blitz_latch_kick(&f->latch))
		WRITE_ONCE(w->kick, f->owner);
	return true;
}

/*
 * Whether somebody could take a frame of @w's: a worker is inactive, or
 * @w runs a stolen b, whose joiner may be waiting for it. A waiting
 * joiner is not inactive, and its requests stop when it sleeps: one made
 * in our cooldown, which askers leave alone, is renewed for it here.
 * @serving is only tested, never followed: the frame may be gone.
 */
static bool blitz_share_wanted(struct blitz_worker *w, u64 c)
{
	return blitz_inactive(c) || READ_ONCE(w->serving);
}

/*
 * The share timer ends a cooldown (WAIT): ask again if the owner is still
 * busy and a frame is wanted; else let askers ask. Hard interrupt, on the
 * owner's CPU, or, moved there when that CPU went offline, on another.
 */
static enum hrtimer_restart blitz_share_timer_fn(struct hrtimer *t)
{
	struct blitz_worker *w = container_of(t, struct blitz_worker,
					      share_timer);
	u64 c = blitz_counters_load(&w->pool->counters);

	blitz_stat_inc(w, BLITZ_STAT_SHARE_TIMER);
	if (READ_ONCE(w->forks.share) == BLITZ_SHARE_WAIT)
		WRITE_ONCE(w->forks.share,
			   READ_ONCE(w->busy) && blitz_share_wanted(w, c) ?
			   BLITZ_SHARE_ASK : 0);
	return HRTIMER_NORESTART;
}

void blitz_share_init(struct blitz_worker *w)
{
	/* Promoted frames leave half the deque to submitted jobs. */
	BUILD_BUG_ON(BLITZ_DEQUE_SLOTS / 2 < BLITZ_LATENT_MAX);
	hrtimer_init(&w->share_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	w->share_timer.function = blitz_share_timer_fn;
	/* Its first look may find a job: busy until it goes idle. */
	w->busy = true;
}

/* The worker has stopped: nothing may run on its behalf any more. */
void blitz_share_exit(struct blitz_worker *w)
{
	hrtimer_cancel(&w->share_timer);
}

/*
 * blitz_share_idle(), with a request or the timer to clear: a cooldown
 * (WAIT) may have armed it.
 */
void __blitz_share_idle(struct blitz_worker *w)
{
	hrtimer_cancel(&w->share_timer);
	WRITE_ONCE(w->forks.share, 0);
}

/**
 * blitz_post_frames - post join frames just pushed on our deque
 * @w: the current worker
 *
 * A sleeper may be needed to steal them, and the joiner waiting for the
 * b we run may leapfrog them: wake the one, kick the other.
 *
 * Context: the owner, in task context.
 */
void blitz_post_frames(struct blitz_worker *w)
{
	/*
	 * The post's smp_mb() orders the pushes before the sleepers bitmap,
	 * as for any push (litmus/share-promote-sleeper.litmus), and before
	 * the kick.
	 */
	blitz_new_jobs(w->pool, w->index + 1);
	blitz_race_window(BLITZ_RACE_SHARE_KICK);
	blitz_kick_serving(w);
}

/**
 * blitz_promote - promote the oldest latent frame and post it
 * @w: the current worker
 *
 * Context: the owner, in task context, at a fork or a loop's split.
 */
void blitz_promote(struct blitz_worker *w)
{
	bool pushed;

	/* Switched out, we could see our CPU push and move published too. */
	preempt_disable();
	pushed = blitz_promote_one(w);
	preempt_enable();
	if (!pushed)
		return;
	w->promoted_at = local_clock();
	blitz_post_frames(w);
}

/*
 * Act on a request at a fork or a loop's chunk boundary: promote, unless
 * the cooldown is on. Returns true when a promotion is due but nothing
 * is latent; only a loop can use that, by splitting. Owner, task context.
 */
static bool blitz_share(struct blitz_worker *w, bool loop)
{
	u64 interval = (u64)READ_ONCE(blitz_share_interval_us) * NSEC_PER_USEC;
	/* Fully ordered: a request is seen or stays for the next fork. */
	unsigned long req = xchg(&w->forks.share, 0);
	u64 now = local_clock();

	if (req & BLITZ_SHARE_COLD)
		w->promoted_at = now;
	else if (!(req & BLITZ_SHARE_ASK))
		return false;
	if (now - w->promoted_at < interval) {
		/* Askers see WAIT and leave it: the timer renews it. */
		WRITE_ONCE(w->forks.share, BLITZ_SHARE_WAIT);
		hrtimer_start(&w->share_timer,
			      ns_to_ktime(w->promoted_at + interval - now),
			      HRTIMER_MODE_REL_PINNED_HARD);
		return false;
	}
	if (READ_ONCE(w->forks.published) == w->forks.depth)
		return loop;
	blitz_promote(w);
	return false;
}

/**
 * __blitz_fork_slow - a fork found a request, or the CPU wanted
 * @forks: the current worker's
 *
 * The fork's voluntary preemption point too: a tree of latent joins calls
 * nothing else that could reschedule.
 *
 * Context: the owner, in task context, at a fork of blitz_join().
 */
void __blitz_fork_slow(struct blitz_forks *forks)
{
	cond_resched();
	if (READ_ONCE(forks->share) & BLITZ_SHARE_FORK)
		blitz_share(container_of(forks, struct blitz_worker, forks),
			    false);
}
EXPORT_SYMBOL_NS_GPL(__blitz_fork_slow, BLITZ_NS);

/**
 * blitz_loop_slow - a parallel loop's chunk boundary found a request
 * @w: the current worker
 *
 * Context: the owner, in task context, with no latent frame newer than
 * the loop's.
 * Return: true when the loop should give half of what is left away.
 */
bool blitz_loop_slow(struct blitz_worker *w)
{
	cond_resched();
	return (READ_ONCE(w->forks.share) & BLITZ_SHARE_FORK) &&
	       blitz_share(w, true);
}
