// SPDX-License-Identifier: GPL-2.0
/*
 * Latent join frames, promoted to the Chase-Lev deque only when someone
 * could use them (Spice's heartbeat): at a fork that finds a request of
 * an idle worker or a waiting joiner, at most once per share_interval_us,
 * or from the worker's sched_out notifier. Invariants, per segment:
 *   P1  frames [0, published) are promoted, [published, depth) latent;
 *   P2  promoted frames sit in the deque oldest first, jobs between;
 *   P3  so a join finds its promoted frame newest, or stolen.
 * Documentation/blitz/design.rst, "Latent frames".
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

/* Ask @v to promote its oldest latent frame, unless already asked. */
void blitz_ask(struct blitz_worker *asker, struct blitz_worker *v)
{
	if (READ_ONCE(v->forks.share))
		return;
	blitz_race_window(BLITZ_RACE_SHARE_ASK);
	/*
	 * Overwriting a WAIT is harmless: the next fork writes it again.
	 * Pairs with the owner's xchg() in
	 * blitz_share() (litmus/share-request-clear.litmus).
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

/* Not switched out between the read and the write: the notifier promotes. */
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
 * Push latent[published]: the owner, preemption off, or its notifier. The
 * push's release of bottom publishes the frame to the thief's acquire
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
 * Wake the joiner of the b we run, asleep on b's latch: it may leapfrog
 * the frames just pushed. The frame is alive until b returns. The
 * caller's full barrier after the pushes pairs with blitz_latch_get_sleepy()
 * before blitz_join_ready() (litmus/share-kick-joiner.litmus).
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
 * From its sched_out notifier (cm.c), under the runqueue lock: kicks the
 * joiner as blitz_post_frames() does, but leaves the wake-up
 * (&blitz_worker.kick) and the post to the notifier's irq_work.
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
	/* Pushes before the kick (litmus/share-kick-joiner.litmus). */
	smp_mb();
	f = READ_ONCE(w->serving);
	if (f && blitz_latch_kick(&f->latch))
		WRITE_ONCE(w->kick, f->owner);
	return true;
}

/*
 * Whether somebody could take a frame of @w's: an inactive worker, or the
 * sleeping joiner of the b @w runs (@serving is tested, never followed).
 */
static bool blitz_share_wanted(struct blitz_worker *w, u64 c)
{
	return blitz_inactive(c) || READ_ONCE(w->serving);
}

/* End a cooldown (WAIT): renew the request if still wanted. Hard irq. */
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

/* blitz_share_idle(), with a request or an armed timer to clear. */
void __blitz_share_idle(struct blitz_worker *w)
{
	hrtimer_cancel(&w->share_timer);
	WRITE_ONCE(w->forks.share, 0);
}

/**
 * blitz_post_frames - post join frames just pushed on our deque
 * @w: the current worker
 *
 * Wake a sleeper to steal them, and kick the joiner of the b we run.
 *
 * Context: the owner, in task context.
 */
void blitz_post_frames(struct blitz_worker *w)
{
	/*
	 * Its smp_mb() orders the pushes before the sleepers bitmap
	 * (litmus/share-promote-sleeper.litmus) and before the kick.
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
 * Act on a request at a fork or a loop's boundary, unless cooling down.
 * True when a promotion is due but nothing is latent: a loop splits.
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
 * Also the fork's voluntary preemption point.
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
