// SPDX-License-Identifier: GPL-2.0
/*
 * The join's slow path, when its frame was promoted (promote.c): pop it
 * back, or, if a thief took b, wait for b's latch, running only frames
 * that descend from b, stolen from the thief (leapfrogging), and
 * otherwise sleeping while a spare worker takes the CPU (cm.c).
 * Documentation/blitz/design.rst, "The join-wait rule".
 */
#include "blitz.h"

/* Stack a waiting worker needs left to run a job: the job's and ours. */
#define BLITZ_RUN_STACK		(BLITZ_JOB_STACK + 1024)
/* Looks at the thief's deque before a waiting joiner sleeps. */
#define BLITZ_JOIN_SPINS	64

/**
 * blitz_join_stolen - b, run by a thief
 * @job: the promoted frame's job
 *
 * The thief is a worker of the pool, whatever took the frame.
 */
void blitz_join_stolen(struct blitz_job *job)
{
	struct blitz_join_frame *f = container_of(job, struct blitz_join_frame,
						  job);
	struct blitz_worker *w = blitz_current_worker();
	struct blitz_join_frame *serving = w->serving;
	/* The frame dies with the latch set. */
	struct task_struct *owner = f->owner;

	/* What we promote from here on descends from b. */
	f->thief_base = blitz_deque_bottom(&w->deque);
	/* Before the joiner can ask: blitz_share_wanted() renews for it. */
	WRITE_ONCE(w->serving, f);
	/*
	 * thief_base before the thief. Pairs with smp_load_acquire() in
	 * blitz_join_wait() (litmus/join-thief-publish.litmus).
	 */
	smp_store_release(&f->thief, w);
	trace_blitz_join_stolen(w->pool->name, w->index, f->fn);
	f->fn(f->arg);
	WRITE_ONCE(w->serving, serving);
	blitz_race_window(BLITZ_RACE_JOIN_DONE);
	/*
	 * Once the latch is set the owner may return, and a spare may then
	 * be reaped and exit: its task is freed a grace period after that,
	 * which the read-side section holds off until the wake-up is done.
	 */
	rcu_read_lock();
	if (blitz_latch_set(&f->latch)) {
		blitz_race_window(BLITZ_RACE_JOIN_WAKE);
		wake_up_process(owner);
	}
	rcu_read_unlock();
}

/*
 * Whether the thief has a frame of b's to leapfrog. Its kick pairs with
 * blitz_latch_get_sleepy() before this (litmus/share-kick-joiner.litmus).
 */
static bool blitz_join_ready(void *arg)
{
	struct blitz_join_frame *f = arg;
	/* Pairs with smp_store_release() in blitz_join_stolen(). */
	struct blitz_worker *thief = smp_load_acquire(&f->thief);

	return thief && blitz_deque_has_frame(&thief->deque, f->thief_base);
}

/*
 * Steal from @thief a frame that descends from @f's b: pushed at or above
 * thief_base, before b finished. After, its frames are unrelated work,
 * not ours to run on our caller's stack: the steal reads b's latch after
 * the slot and takes nothing once it is set.
 */
static struct blitz_job *blitz_leapfrog(struct blitz_worker *w,
					struct blitz_join_frame *f,
					struct blitz_worker *thief)
{
	struct blitz_job *job;

	blitz_race_window(BLITZ_RACE_LEAPFROG);
	do {
		job = blitz_deque_steal_frame(&thief->deque, f->thief_base,
					      &f->latch);
	} while (job == BLITZ_DEQUE_ABORT);
	if (!job)
		return NULL;
	blitz_stat_inc(w, BLITZ_STAT_STOLEN);
	trace_blitz_steal(w->pool->name, w->index, thief->index, job);
	return job;
}

/* Wait for a stolen b, running only b's descendants, stack permitting. */
static void blitz_join_wait(struct blitz_worker *w, struct blitz_join_frame *f)
{
	bool leapfrog = !blitz_stack_below(BLITZ_RUN_STACK);
	struct blitz_worker *thief;
	struct blitz_job *job;
	unsigned int spins = 0;

	while (!blitz_latch_probe(&f->latch)) {
		/* Pairs with blitz_join_stolen(): litmus/join-thief-publish. */
		thief = smp_load_acquire(&f->thief);
		job = NULL;
		if (thief && leapfrog)
			job = blitz_leapfrog(w, f, thief);
		if (job) {
			blitz_execute(w, job);
			spins = 0;
			continue;
		}
		/* b's latent frames are the thief's: ask for one. */
		if (thief)
			blitz_ask(w, thief);
		if (spins < BLITZ_JOIN_SPINS) {
			spins++;
			cpu_relax();
			cond_resched();
		} else {
			blitz_latch_sleep(w, &f->latch,
					  leapfrog ? blitz_join_ready : NULL,
					  f, TASK_IDLE);
			spins = 0;
		}
	}
}

/*
 * The join's frame @f, open at @i, was promoted: pop it back, moving the
 * jobs a submitted above it to the injection list, or wait for its thief.
 */
void blitz_join_promoted(struct blitz_worker *w, struct blitz_join_frame *f,
			 unsigned int i)
{
	struct blitz_job *job;

	/* Frames i and up are joined: none is latent (P1). */
	WRITE_ONCE(w->forks.published, i);
	blitz_race_window(BLITZ_RACE_JOIN_POP);
	/* Above our frame, only what a submitted (P3). */
	while ((job = blitz_deque_pop(&w->deque))) {
		if (job == &f->job) {
			f->fn(f->arg);
			return;
		}
		blitz_requeue(w, job);
	}
	blitz_join_wait(w, f);
}

/**
 * __blitz_join_promoted - blitz_join(), when its frame was promoted
 * @forks: the current worker's
 * @f: the join's frame
 * @i: where @f was open on the worker's latent stack
 *
 * Context: the worker, in task context, at the join.
 */
void __blitz_join_promoted(struct blitz_forks *forks,
			   struct blitz_join_frame *f, unsigned int i)
{
	blitz_join_promoted(container_of(forks, struct blitz_worker, forks),
			    f, i);
}
EXPORT_SYMBOL_NS_GPL(__blitz_join_promoted, BLITZ_NS);

struct blitz_join_args {
	void (*a)(void *arg);
	void *a_arg;
	void (*b)(void *arg);
	void *b_arg;
};

static void blitz_join_in_pool(void *arg)
{
	struct blitz_join_args *j = arg;

	blitz_join(j->a, j->a_arg, j->b, j->b_arg);
}

/**
 * __blitz_join_slow - blitz_join(), outside a worker or too deep
 * @a: the first function
 * @a_arg: its argument
 * @b: the second function
 * @b_arg: its argument
 *
 * Outside a worker, the join runs in the default pool while the caller
 * sleeps. A worker the per-CPU hint missed joins as inline, once it has
 * set the hint again. A worker with every latent slot taken runs @a, then
 * @b: its older frames give other workers enough to take.
 *
 * Context: process context or a blitz job; may sleep.
 */
void __blitz_join_slow(void (*a)(void *arg), void *a_arg,
		       void (*b)(void *arg), void *b_arg)
{
	struct blitz_join_args j = { a, a_arg, b, b_arg };
	struct blitz_worker *w = blitz_current_worker();

	might_sleep();
	if (!w) {
		WARN_ON_ONCE(blitz_call(NULL, blitz_join_in_pool, &j));
	} else if (w->forks.depth < BLITZ_LATENT_MAX) {
		__blitz_join(&w->forks, a, a_arg, b, b_arg);
	} else {
		a(a_arg);
		b(b_arg);
	}
}
EXPORT_SYMBOL_NS_GPL(__blitz_join_slow, BLITZ_NS);
