// SPDX-License-Identifier: GPL-2.0
/*
 * Latent join frames: when a fork becomes visible to other workers.
 *
 * A fork (blitz_join(), inline in <linux/blitz.h>, or a parallel loop's
 * split or step) records its frame on its worker's private stack of open
 * frames, &blitz_forks.latent, with plain stores: no atomic, no barrier,
 * nothing another CPU reads. The frame is latent: if nobody wants work
 * before the join, b runs inline and the fork cost a few loads and stores.
 * The worker promotes its oldest latent frame, pushing it on its Chase-Lev
 * deque where thieves steal it, only when someone could use it:
 *
 *  - an idle worker that found nothing asks every busy worker
 *    (BLITZ_SHARE_ASK in &blitz_forks.share) when it starts looking
 *    and again before it grows sleepy;
 *  - a joiner waiting for a stolen b asks the thief running b, whose
 *    frames descend from b;
 *  - a thief that stole while others sleep asks its victim again;
 *  - a worker that starts running while others are inactive marks itself
 *    cold (BLITZ_SHARE_COLD): it shares one interval later, so that a
 *    short call wakes nobody;
 *  - the worker is switched out, blocked or preempted, with latent
 *    frames, when a request comes: its CPU promotes them all, from an
 *    interrupt, since the worker cannot run them meanwhile. So an a()
 *    that sleeps until its b has run, or takes a mutex, lets another
 *    worker run b.
 *
 * The owner reads &blitz_forks.share at every fork, one relaxed load,
 * and acts on a request in its own task context (__blitz_fork_slow()). It
 * promotes at most once per share_interval_us, the cooldown: a request
 * within it arms the share timer, a one-shot hrtimer that renews the
 * request at the end of the cooldown if the owner is still busy and a
 * frame is wanted (some worker inactive, or the b it runs stolen, its
 * joiner perhaps waiting), and the owner goes on. Idle workers have no
 * timer armed: an idle pool takes no timer interrupt.
 *
 * A request also has the owner's share timer fire at once, through a
 * timer on the owner's CPU (&blitz_worker.look), where the owner is
 * bound. If the share timer finds the owner switched out and pinned
 * there, or blocked anywhere (blitz_switched_out()), the owner cannot run
 * until it returns: it promotes the owner's frames for it. If it
 * promotes nothing, it looks again one interval later, and every
 * interval while the request is pending, the owner busy with frames open
 * and a frame wanted: an owner that blocks in a() before its next
 * fork is seen blocked within an interval. That is the only timer a
 * busy worker runs outside a cooldown, and only while somebody may wait
 * for its work. Work stays hidden while a worker runs a long stretch that
 * never forks and is never switched out, and while its CPU is going or
 * gone offline (the worker may run elsewhere; the timer looks again when
 * the CPU is back, and finds it blocked if it went to sleep elsewhere).
 *
 * Who touches what:
 *
 *   depth, published, latent[], serving, promoted_at
 *	the owner, in task context, and its CPU's share timer while the
 *	owner is switched out (blitz_switched_out()); the share timer also
 *	tests depth and serving, as hints, while the owner runs. The owner
 *	keeps preemption off where it must not be switched out: while it
 *	pushes on its deque, promotes, or hides the frames of an outer
 *	segment.
 *   share
 *	askers and the share timer: WRITE_ONCE(); the owner: xchg().
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
 *
 * Documentation/blitz/design.rst, "Latent frames", has the argument.
 */
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/sched/clock.h>

#include "blitz.h"

unsigned int blitz_share_interval_us = 100;
module_param_named(share_interval_us, blitz_share_interval_us, uint, 0644);
MODULE_PARM_DESC(share_interval_us,
		 "least time between two promotions by a worker, in us (default 100)");

/*
 * Have @v's CPU look at its request (blitz_look_fn()), unless a look is in
 * flight. Not on a CPU that is away or going, which preemption off holds
 * back until we are done: its hotplug callback looks when it is back.
 */
static void blitz_queue_look(struct blitz_worker *v)
{
	preempt_disable();
	if (cpu_online(v->cpu) && !test_bit(0, &v->look_queued) &&
	    !test_and_set_bit(0, &v->look_queued)) {
		v->look.expires = jiffies + 1;
		add_timer_on(&v->look, v->cpu);
	}
	preempt_enable();
}

/*
 * Ask @v to promote its oldest latent frame, unless it cools down (its
 * timer armed to renew the request) or starts cold. @asker is the current
 * worker. A request already pending is not made again, but looked at
 * again: its owner may have blocked since.
 */
void blitz_ask(struct blitz_worker *asker, struct blitz_worker *v)
{
	unsigned long share = READ_ONCE(v->forks.share);

	if (share & ~BLITZ_SHARE_ASK)
		return;
	if (share) {
		/* Pending, and a look of it on its way: nothing to add. */
		if (test_bit(0, &v->look_queued))
			return;
	} else {
		blitz_race_window(BLITZ_RACE_SHARE_ASK);
		/*
		 * A plain store: it may overwrite a WAIT the owner wrote
		 * meanwhile, and then the owner's next fork sees the request
		 * in its cooldown and writes WAIT again. The owner clears
		 * with xchg(), which a request either precedes, and is seen,
		 * or follows, and stays (litmus/share-request-clear.litmus).
		 */
		WRITE_ONCE(v->forks.share, BLITZ_SHARE_ASK);
		blitz_stat_inc(asker, BLITZ_STAT_SHARE_REQUESTS);
		/*
		 * One look in flight per worker, as add_timer_on() wants:
		 * one in flight sees our request, or its end is seen by our
		 * test of the bit, a plain read when the bit is set. Orders
		 * the request before the test; pairs with
		 * smp_mb__after_atomic() in blitz_look_fn()
		 * (litmus/share-look-inflight.litmus).
		 */
		smp_mb();
	}
	/*
	 * @v may be switched out with frames latent, or be about to: its
	 * CPU looks (blitz_look_fn()), a tick or two from now, by when a
	 * running owner has usually forked and answered. Not for an owner
	 * with no frame open: its next fork hears the request. Its first
	 * fork may be racing with us, unseen both ways; then a later ask
	 * sees the frame (an idle worker asks again before it sleeps), or
	 * the owner started cold, with its timer to renew the request.
	 */
	if (READ_ONCE(v->forks.depth))
		blitz_queue_look(v);
}

/* An idle worker found nothing to take: ask every busy worker. */
void blitz_ask_busy(struct blitz_worker *w)
{
	struct blitz_pool *pool = w->pool;
	struct blitz_worker *v;
	unsigned int i;

	for (i = 0; i < pool->nr_workers; i++) {
		v = pool->workers[i];
		if (v != w && READ_ONCE(v->busy))
			blitz_ask(w, v);
	}
}

/*
 * blitz_segment_open(), where latent frames must be hidden: not switched
 * out between our read of published and our write, where our CPU may
 * promote too.
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
 * or its CPU's while it is switched out. The push's release store of bottom
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
	f->origin = w->origin;
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

#ifdef CONFIG_SMP
/*
 * Whether @p, not current, is blocked, with its pi_lock held: off its
 * runqueue and off every CPU, and not being woken (a waker moves it to
 * TASK_WAKING or TASK_RUNNING under the lock we hold, before it may
 * enqueue it without). Read as try_to_wake_up() reads them. A task that
 * blocked with its dequeue delayed (EEVDF) is still on its runqueue: it
 * is seen once it is off.
 */
static bool blitz_blocked(struct task_struct *p)
{
	unsigned int state;

	/* Pairs with smp_store_mb() in set_current_state(), as for ttwu. */
	smp_mb__after_spinlock();
	state = READ_ONCE(p->__state);
	if (state == TASK_RUNNING || state == TASK_WAKING)
		return false;
	/* on_rq after the state; pairs as in try_to_wake_up(). */
	smp_rmb();
	if (READ_ONCE(p->on_rq))
		return false;
	/* on_cpu after on_rq, as in try_to_wake_up(). */
	smp_rmb();
	/*
	 * Pairs with the release in finish_task(): we see what @p wrote
	 * before it switched out.
	 */
	return !smp_load_acquire(&p->on_cpu);
}
#else
/* One CPU, the worker's: blitz_switched_out() has looked. */
static bool blitz_blocked(struct task_struct *p)
{
	return false;
}
#endif

/*
 * Whether @w is switched out, and its frames ours to promote. From an
 * interrupt that did not land on it, with its pi_lock held, which every
 * wake-up and migration takes. Either we are on its CPU, it may run there
 * only, and the CPU is not going offline (the scheduler then lets
 * ordinary kthreads run elsewhere): preempted or blocked, it cannot run
 * anywhere until we drop the lock and return, and what it last wrote is
 * visible to us (written here, or before a migration here, which took
 * the lock we hold). Or it is blocked, anywhere: so a worker that went to
 * sleep on another CPU while its own was offline is promoted for once its
 * CPU is back (blitz_rehome() has the CPU look). Either way it was not
 * switched out in the middle of anything it does with preemption off.
 */
static bool blitz_switched_out(struct blitz_worker *w)
{
	struct task_struct *p = w->task;

	lockdep_assert_held(&p->pi_lock);
	if (current == p)
		return false;
	if (raw_smp_processor_id() == w->cpu && p->nr_cpus_allowed == 1 &&
	    task_cpu(p) == w->cpu && !cpu_dying(w->cpu))
		return true;
	return blitz_blocked(p);
}

/*
 * Promote every latent frame of @w for it, if it is switched out, then
 * post them and kick. Returns whether it pushed any: that answers the
 * request. Sets *@out if @w was switched out. Hard interrupt, on the
 * worker's CPU.
 */
static bool blitz_promote_switched_out(struct blitz_worker *w, bool *out)
{
	struct task_struct *p = w->task, *kick = NULL;
	struct blitz_join_frame *f;
	bool pushed = false;

	/* Nobody else could take them. */
	if (w->pool->nr_workers == 1)
		return false;
	raw_spin_lock(&p->pi_lock);
	*out = blitz_switched_out(w);
	if (*out) {
		while (blitz_promote_one(w))
			pushed = true;
	}
	if (pushed) {
		WRITE_ONCE(w->forks.share, 0);
		/*
		 * The kick of blitz_kick_serving(), while the frame is
		 * alive: the worker sets its latch after its b, and cannot
		 * run until we unlock. The barrier orders the pushes before
		 * it, as the post's does there.
		 */
		smp_mb();
		f = READ_ONCE(w->serving);
		if (f && blitz_latch_kick(&f->latch))
			kick = f->owner;
	}
	raw_spin_unlock(&p->pi_lock);
	if (!pushed)
		return false;
	blitz_new_jobs(w->pool, w->index + 1);
	/* A worker of our pool, which outlives its jobs. */
	if (kick)
		wake_up_process(kick);
	return true;
}

/* The share timer looks again no sooner than this. */
#define BLITZ_SHARE_LOOK_MIN_NS	(10 * NSEC_PER_USEC)
/*
 * Nor later than 2^this intervals (12.8 ms at the default 100 us) while
 * the owner stays switched out with nothing to promote.
 */
#define BLITZ_SHARE_LOOK_BACKOFF	7

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
 * The share timer. At the end of a cooldown (WAIT), ask again if the
 * owner is still busy and a frame is wanted; else let askers ask. Then,
 * with a request pending on a busy owner: if the owner is switched out,
 * promote for it. If that promoted nothing (the owner runs, or its frames
 * are hidden in an outer segment, or the deque is full), look again one
 * interval later while frames are open and wanted, in case the owner
 * blocks before its next fork. An owner that stays switched out with
 * nothing to promote (a joiner or caller asleep, every frame of its
 * promoted) changes nothing until it runs: each such look doubles the
 * wait for the next, up to 2^BLITZ_SHARE_LOOK_BACKOFF intervals, so that
 * a long wait does not take ten thousand interrupts a second. Hard
 * interrupt, on the owner's CPU, or, moved there when that CPU went
 * offline, on another.
 */
static enum hrtimer_restart blitz_share_timer_fn(struct hrtimer *t)
{
	struct blitz_worker *w = container_of(t, struct blitz_worker,
					      share_timer);
	u64 c = blitz_counters_load(&w->pool->counters);
	unsigned long share = READ_ONCE(w->forks.share);
	bool busy = READ_ONCE(w->busy), out = false;
	u64 interval;

	blitz_stat_inc(w, BLITZ_STAT_SHARE_TIMER);
	if (share == BLITZ_SHARE_WAIT) {
		share = busy && blitz_share_wanted(w, c) ? BLITZ_SHARE_ASK : 0;
		WRITE_ONCE(w->forks.share, share);
	}
	if (share != BLITZ_SHARE_ASK || !busy)
		goto done;
	if (raw_smp_processor_id() != w->cpu) {
		/*
		 * Moved here while the worker's CPU was away. The CPU's
		 * hotplug callback may have looked already, at a WAIT, or
		 * while we ran: have the CPU look if it is back, or its
		 * callback see the request. Orders the request before
		 * cpu_online(); the hotplug path orders set_cpu_online()
		 * before blitz_rehome()'s look with its locks.
		 */
		smp_mb();
		blitz_queue_look(w);
		goto done;
	}
	if (current != w->task && blitz_promote_switched_out(w, &out))
		goto done;
	if (!READ_ONCE(w->forks.depth) || !blitz_share_wanted(w, c))
		goto done;
	if (!out)
		w->look_backoff = 0;
	else if (w->look_backoff < BLITZ_SHARE_LOOK_BACKOFF)
		w->look_backoff++;
	interval = (u64)READ_ONCE(blitz_share_interval_us) * NSEC_PER_USEC;
	interval = max_t(u64, interval, BLITZ_SHARE_LOOK_MIN_NS);
	hrtimer_forward_now(t, ns_to_ktime(interval << w->look_backoff));
	return HRTIMER_RESTART;
done:
	w->look_backoff = 0;
	return HRTIMER_NORESTART;
}

/**
 * blitz_share_look - have the share timer look at a pending request now
 * @w: a worker homed on the current CPU
 *
 * From @w's look, and from the hotplug callback that binds @w to its CPU
 * again: a request made while the CPU was away was not looked at there.
 * Context: on @w's CPU, not in hard interrupt.
 */
void blitz_share_look(struct blitz_worker *w)
{
	if (READ_ONCE(w->forks.share) == BLITZ_SHARE_ASK &&
	    !hrtimer_active(&w->share_timer))
		hrtimer_start(&w->share_timer, 0, HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * A request was made of the worker (blitz_ask()), and this runs on its
 * CPU: have the share timer look. Not here: on PREEMPT_RT this runs in a
 * softirq thread, which the worker can preempt.
 */
static void blitz_look_fn(struct timer_list *t)
{
	struct blitz_worker *w = from_timer(w, t, look);

	clear_bit(0, &w->look_queued);
	/* Pairs with smp_mb() in blitz_ask(). */
	smp_mb__after_atomic();
	blitz_share_look(w);
}

void blitz_share_init(struct blitz_worker *w)
{
	/* Promoted frames leave half the deque to submitted jobs. */
	BUILD_BUG_ON(BLITZ_DEQUE_SLOTS / 2 < BLITZ_LATENT_MAX);
	hrtimer_init(&w->share_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	w->share_timer.function = blitz_share_timer_fn;
	timer_setup(&w->look, blitz_look_fn, 0);
	/* Its first look may find a job: busy until it goes idle. */
	w->busy = true;
}

/* The worker has stopped: nothing may run on its behalf any more. */
void blitz_share_exit(struct blitz_worker *w)
{
	/*
	 * The look may arm the share timer, and the share timer queue the
	 * look: the look goes first, shut down so that the share timer
	 * cannot queue it again (add_timer_on() leaves it alone then).
	 */
	timer_shutdown_sync(&w->look);
	hrtimer_cancel(&w->share_timer);
}

/*
 * blitz_share_idle(), with a request or the timer to clear: a cooldown
 * (WAIT) or a request's look may have armed it.
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
		bool home;

		/*
		 * Only on our CPU: away from it (it is going, or coming
		 * back), our timer may be running there and forwarding
		 * itself, which a start from here would race with
		 * (hrtimer_forward() warns on an enqueued timer). No
		 * cooldown then.
		 */
		preempt_disable();
		home = raw_smp_processor_id() == w->cpu;
		if (home) {
			/* Askers see WAIT and leave it: the timer renews it. */
			WRITE_ONCE(w->forks.share, BLITZ_SHARE_WAIT);
			hrtimer_start(&w->share_timer,
				      ns_to_ktime(w->promoted_at + interval - now),
				      HRTIMER_MODE_REL_PINNED_HARD);
		}
		preempt_enable();
		if (home)
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
