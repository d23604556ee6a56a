// SPDX-License-Identifier: GPL-2.0
/*
 * Fork-join: blitz_join(), blitz_parallel_for() and blitz_call().
 *
 * A join frame lives on the joining worker's stack: it costs no
 * allocation. A fork records it as latent (share.c): b runs inline after a
 * unless, meanwhile, the frame was promoted onto the worker's deque
 * because someone wanted work. Then the worker pops: usually b is still
 * there and runs inline too. If a thief took b, the worker waits for b's
 * latch; the thief that finishes b sets it and wakes the worker.
 *
 * The join-wait rule: while it waits, a joiner runs only work that
 * descends from its join, never an unrelated job on top of its caller's
 * stack (the caller may hold a mutex that job wants):
 *
 *  - Jobs that a submitted may sit above b on the deque. They are fire and
 *    forget, not part of the join: the joiner moves them to its injection
 *    list on its way down to b, and they run later, like any submitted job.
 *  - While the thief runs b, every frame it promotes descends from b. The
 *    joiner steals those frames, and only those (leapfrogging, Wagner and
 *    Calder): frames pushed at or above the thief's bottom index of the
 *    moment b started, and only while b runs. It asks the thief for them.
 *  - Otherwise it sleeps on b's latch. It is busy, not idle, to the sleep
 *    protocol: it is not counted, so posters never rely on it. The thief
 *    kicks it when it promotes a frame while running b itself; while the
 *    thief runs a frame it stole in turn, it kicks that frame's joiner,
 *    and ours sleeps on, though it may take those frames too.
 *
 * Calls: blitz_call() from a worker of another pool, or from a plain task,
 * submits a call frame and waits on the frame's latch the same way. A
 * worker of pool A calling into pool B stays able to run what the call
 * sends back into A: a blitz_call(A, ...) made on behalf of that call (by
 * the called function, or anything it joins or calls in turn) is handed
 * to the waiting worker through its frame's mailbox, and it runs it; or,
 * while the worker runs something on top of its wait, through A's calls
 * (below). So calls across pools do not deadlock, even with one worker
 * per pool (but for a waiter short of stack: Documentation/blitz/api.rst).
 * Each worker knows which call it serves (&blitz_worker.origin); a call
 * frame names its waiting worker and the call that worker served in turn.
 * Calls that no chain links (jobs of A into B while jobs of B into A) go
 * on the called pool's calls, where its workers waiting in calls take
 * them too: their callers wait as well, and with every worker of both
 * pools waiting, nobody else could run them. That is the one exception
 * to the join-wait rule (Documentation/blitz/design.rst). While a
 * waiting worker runs a job on top of its wait (mail, or a call it took),
 * which may wait in turn, mail for it goes on its pool's calls.
 *
 * Outside a worker, a join or loop runs inside blitz_call() on the default
 * pool.
 *
 * Stack: a latent join costs the stack of a function call, and joins nest
 * as calls do. Every job a joiner or caller runs while it waits starts
 * with at least BLITZ_JOB_STACK left: a waiting worker with less than
 * BLITZ_RUN_STACK left steals nothing, and hands mailbox calls to its
 * pool. A loop splits only with BLITZ_SPLIT_STACK left.
 */
#include <linux/sched/task.h>

#include "blitz.h"

/* Stack a waiting worker needs left to run a job: the job's and ours. */
#define BLITZ_RUN_STACK		(BLITZ_JOB_STACK + 1024)
/* Looks at the thief's deque before a waiting joiner sleeps. */
#define BLITZ_JOIN_SPINS	64

/*
 * A blitz_call() in progress, on the caller's stack. @serves: for a call
 * back, the frame of the waiter it serves; @spills: how many calls back
 * for this frame went to the pool's calls (blitz_call_spill());
 * @spills_seen: that count when the waiter last found none of them there.
 */
struct blitz_call_frame {
	struct blitz_job job;
	void (*fn)(void *arg);
	void *arg;
	struct blitz_latch done;
	struct task_struct *task;
	struct blitz_worker *caller;
	struct blitz_call_frame *parent;
	struct llist_head mailbox;
	struct blitz_call_frame *outer;
	struct blitz_call_frame *serves;
	atomic_t spills;
	int spills_seen;
	bool takes_calls;
	bool running;
};

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
	struct blitz_call_frame *origin = w->origin;
	struct blitz_join_frame *serving = w->serving;
	/*
	 * The frame is gone once the latch is set: read the owner first. The
	 * owner is a worker of this pool, and the pool is not freed before
	 * this worker stops, so the task outlives the wake-up below.
	 */
	struct task_struct *owner = f->owner;

	/* What we promote from here on descends from b. */
	f->thief_base = blitz_deque_bottom(&w->deque);
	/*
	 * Serving before the joiner can see us and ask: a request of its
	 * that finds our cooldown on is renewed at its end only for a
	 * worker that serves (blitz_share_wanted()).
	 */
	WRITE_ONCE(w->serving, f);
	/*
	 * Publish where b's descendants start before ourselves. Pairs with
	 * smp_load_acquire() of the thief in blitz_join_wait().
	 * (litmus/join-thief-publish.litmus)
	 */
	smp_store_release(&f->thief, w);
	w->origin = f->origin;
	trace_blitz_join_stolen(w->pool->name, w->index, f->fn);
	f->fn(f->arg);
	WRITE_ONCE(w->serving, serving);
	w->origin = origin;
	blitz_race_window(BLITZ_RACE_JOIN_DONE);
	if (blitz_latch_set(&f->latch))
		wake_up_process(owner);
}

/*
 * Whether a waiting joiner that may leapfrog should not sleep: the thief
 * has a frame of b's for it. The thief's kick pairs with the fully
 * ordered blitz_latch_get_sleepy() before this look
 * (litmus/share-kick-joiner.litmus).
 */
static bool blitz_join_ready(void *arg)
{
	struct blitz_join_frame *f = arg;
	/* Pairs with smp_store_release() in blitz_join_stolen(). */
	struct blitz_worker *thief = smp_load_acquire(&f->thief);

	return thief && blitz_deque_has_frame(&thief->deque, f->thief_base);
}

/*
 * Steal from @thief a frame that descends from @f's b: one pushed at or
 * above the thief's bottom when b started (below are no frames, only
 * jobs submitted before), and pushed before b finished. Once b has
 * finished, the thief may push frames of its next work there, which its
 * own join may be waiting for while its a() sleeps: those are any idle
 * worker's to take, ours too once our join is over, never ours now (we
 * would run unrelated work on top of our caller's stack). The steal reads
 * b's latch after the slot and takes no frame once it is set.
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

/*
 * Wait for a stolen b, running only b's descendants meanwhile. Short of
 * stack, steal none, and do not stay awake for them either: sleep until
 * b is done.
 */
static void blitz_join_wait(struct blitz_worker *w, struct blitz_join_frame *f)
{
	bool leapfrog = !blitz_stack_below(BLITZ_RUN_STACK);
	struct blitz_worker *thief;
	struct blitz_job *job;
	unsigned int spins = 0;

	while (!blitz_latch_probe(&f->latch)) {
		/*
		 * Pairs with smp_store_release() in blitz_join_stolen().
		 * (litmus/join-thief-publish.litmus)
		 */
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
static void blitz_join_promoted(struct blitz_worker *w,
				struct blitz_join_frame *f, unsigned int i)
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

/* === Parallel loops === */

/*
 * Lazy binary splitting: a loop runs its range chunk by chunk, and only
 * when asked for work does it give away the upper half of what is left,
 * as a promoted frame (Tzannes, Caragea, Barua and Vishkin, PPoPP 2010,
 * with "asked" for "the local deque is empty"). A chunk boundary is a
 * fork point: no frame newer than the loop's is open there. While a chunk
 * runs, the upper half of what is left after it is a latent frame, which
 * a request promotes as it would a join's b: at a fork in the body, or
 * from the CPU while the body is blocked or preempted.
 *
 * A loop with an accumulator (blitz_parallel_reduce()) folds its chunks
 * into it in order; a half given away gets a fresh one, folded into the
 * lower half's once both are done: left to right, whatever ran where.
 */
struct blitz_loop_half {
	struct blitz_join_frame f;
	struct blitz_loop *loop;
	unsigned long lo, hi;
	u64 acc[BLITZ_REDUCE_MAX / sizeof(u64)];
};

/* A half given away, run by a thief or popped back: into a fresh acc. */
static void blitz_loop_half_run(void *arg)
{
	struct blitz_loop_half *h = arg;

	if (h->loop->init)
		h->loop->init(h->loop, h->acc);
	blitz_loop_run(blitz_current_worker(), h->loop, h->lo, h->hi, h->acc);
}

/*
 * Asked for work with nothing older latent: promote the upper half of
 * [@lo, @hi) (at least two indices) and run the lower into @acc.
 */
static noinline void blitz_loop_split(struct blitz_worker *w,
				      struct blitz_loop *loop,
				      unsigned long lo, unsigned long hi,
				      void *acc)
{
	struct blitz_loop_half h = {
		.f = { .fn = blitz_loop_half_run, .arg = &h },
		.loop = loop,
		.lo = lo + (hi - lo) / 2,
		.hi = hi,
	};
	unsigned int i = w->forks.depth;

	__blitz_fork(&w->forks, &h.f, i);
	/* Frames below i are promoted: h.f is latent[published]. */
	blitz_promote(w);
	blitz_loop_run(w, loop, lo, h.lo, acc);
	if (__blitz_unfork(&w->forks, i)) {
		/* The deque was full: it stayed latent. */
		blitz_loop_run(w, loop, h.lo, hi, acc);
		return;
	}
	blitz_join_promoted(w, &h.f, i);
	if (loop->init)
		loop->combine(loop, acc, h.acc);
}

/*
 * Run the body on [@lo, @next), with the upper half of what is left after
 * it, [@next, @hi), open as a latent frame: a body that blocks or is
 * preempted, or forks, can have it promoted, as a join's b, and another
 * worker runs it meanwhile. Without it, a body that waits for another
 * index of its loop (a lock, a call back into its pool's caller) waited
 * for itself. Returns whether the rest was given away, and is done.
 */
static noinline bool blitz_loop_step(struct blitz_worker *w,
				     struct blitz_loop *loop,
				     unsigned long lo, unsigned long next,
				     unsigned long hi, void *acc)
{
	/* Not zeroed: the rest is written when the frame is promoted. */
	struct blitz_loop_half h __uninitialized;
	unsigned int i = w->forks.depth;

	h.f.fn = blitz_loop_half_run;
	h.f.arg = &h;
	h.loop = loop;
	h.lo = next + (hi - next) / 2;
	h.hi = hi;
	__blitz_fork(&w->forks, &h.f, i);
	loop->body(loop, lo, next, acc);
	if (__blitz_unfork(&w->forks, i))
		return false;
	/*
	 * Promoted: open it again, promoted (published is above i, so our
	 * CPU leaves it alone), and run the lower half before the join, as
	 * a split does. Joined first, the lower half would run after the
	 * upper, and a body that waits for a lower index would wait for
	 * ever.
	 */
	if (next < h.lo) {
		__blitz_fork(&w->forks, &h.f, i);
		blitz_loop_run(w, loop, next, h.lo, acc);
		WRITE_ONCE(w->forks.depth, i);
	}
	blitz_join_promoted(w, &h.f, i);
	if (loop->init)
		loop->combine(loop, acc, h.acc);
	return true;
}

/**
 * blitz_loop_run - run a loop's range, splitting it when asked
 * @w: the current worker
 * @loop: the loop
 * @lo: first index
 * @hi: one past the last, above @lo
 * @acc: the accumulator the range folds into, if @loop has one
 *
 * A range longer than a chunk is run in ranges that start at one index
 * and double up to the chunk, and that are never more than half of what
 * is left, so they shrink again to one index at the end. A request is
 * heard at the next boundary: early in the run, about as long after the
 * start as it came; late, after at most half of what is left. When
 * every range was a whole chunk, the first request of a loop started on
 * a cold worker, one share interval in, waited for the first chunk to
 * end, and a worker that ran out of work near the end waited for the
 * other's last chunk: the halves ended up to a chunk apart. It costs a
 * run about twice log2(chunk) more calls of the body. A range of at most
 * a chunk is one call. Each range but the last runs with the upper half
 * of what is left open as a latent frame (blitz_loop_step()), if the
 * worker has the stack and a free slot for it.
 *
 * Context: a worker, in task context, with no latent frame newer than the
 * loop's.
 */
void blitz_loop_run(struct blitz_worker *w, struct blitz_loop *loop,
		    unsigned long lo, unsigned long hi, void *acc)
{
	unsigned long chunk = loop->chunk;
	unsigned long step = hi - lo > chunk ? 1 : chunk;
	/* The same at every boundary: same depth, same stack. */
	bool room = w->forks.depth < BLITZ_LATENT_MAX &&
		    !blitz_stack_below(BLITZ_SPLIT_STACK);

	while (hi - lo > step) {
		if (unlikely(__blitz_fork_asked(&w->forks)) &&
		    blitz_loop_slow(w) && room) {
			blitz_loop_split(w, loop, lo, hi, acc);
			return;
		}
		if (!room)
			loop->body(loop, lo, lo + step, acc);
		else if (blitz_loop_step(w, loop, lo, lo + step, hi, acc))
			return;
		lo += step;
		step = step < chunk / 2 ? 2 * step : chunk;
		step = min(step, max((hi - lo) / 2, 1UL));
	}
	loop->body(loop, lo, hi, acc);
}

struct blitz_loop_call {
	struct blitz_loop *loop;
	unsigned long start, end;
	void *acc;
};

/*
 * grain 0: chunks of about 1/32 of a worker's share. A boundary costs a
 * few loads and stores (a fork and an unfork); the shorter ranges at the
 * start and end of a run (blitz_loop_run()) keep the chunk from bounding
 * the imbalance.
 */
static void blitz_loop_in_pool(void *arg)
{
	struct blitz_loop_call *c = arg;
	struct blitz_worker *w = blitz_current_worker();

	if (!c->loop->chunk)
		c->loop->chunk = max((c->end - c->start) /
				     (32UL * w->pool->nr_workers), 1UL);
	blitz_loop_run(w, c->loop, c->start, c->end, c->acc);
}

/**
 * blitz_loop - run a loop over [@start, @end), in parallel
 * @loop: the loop; a chunk of 0 is chosen on the worker that starts it
 * @start: first index
 * @end: one past the last, above @start
 * @acc: the accumulator of the whole range, if @loop has one
 *
 * Inside a worker, in that worker's pool; outside, in the default pool,
 * while the caller sleeps.
 *
 * Context: process context or a blitz job; may sleep.
 * Return: 0, or -ESHUTDOWN when called from outside while the default
 * pool is being destroyed (nothing ran).
 */
int blitz_loop(struct blitz_loop *loop, unsigned long start,
	       unsigned long end, void *acc)
{
	struct blitz_loop_call c = { loop, start, end, acc };

	if (!blitz_current_worker())
		return blitz_call(NULL, blitz_loop_in_pool, &c);
	blitz_loop_in_pool(&c);
	return 0;
}

struct blitz_for {
	struct blitz_loop loop;
	void (*fn)(unsigned long lo, unsigned long hi, void *arg);
	void *arg;
};

static void blitz_for_body(struct blitz_loop *loop, unsigned long lo,
			   unsigned long hi, void *acc)
{
	struct blitz_for *f = container_of(loop, struct blitz_for, loop);

	f->fn(lo, hi, f->arg);
}

/**
 * blitz_parallel_for - call a function on ranges covering an interval
 * @start: first index
 * @end: one past the last index
 * @grain: the longest range @fn is given, or 0 to choose: about 1/32 of
 *	   the interval's share of each worker of the pool
 * @fn: called as fn(lo, hi, @arg) on non-empty, non-overlapping ranges
 *	that together cover [@start, @end) exactly once, in parallel
 * @arg: passed to @fn
 *
 * The caller runs [@start, @end) in ranges, in order, and, each time
 * another worker asks for work between two ranges, gives it the upper half
 * of what is left, which it may split in turn (lazy binary splitting).
 * While a range runs, the upper half of what is left is offered as a
 * join's b is: @fn may block, even until an index in that upper half has
 * run, as long as another worker of the pool is free. A range is at most
 * @grain long: the first is one index, each next one twice the last up to
 * @grain, and none is over half of what is left, so that a request is
 * heard soon at the start and at the end. An interval of at most @grain is
 * one call. A worker with less than a quarter of its stack left splits no
 * further. Inside a worker, the loop runs in that worker's pool; outside,
 * in the default pool while the caller sleeps.
 *
 * Context: process context or a blitz job; may sleep.
 * Return: 0; -EINVAL for @start > @end or a NULL @fn (then @fn is never
 * called); -ESHUTDOWN when called from outside while the default pool is
 * being destroyed. @start == @end returns 0 without calling @fn.
 */
int blitz_parallel_for(unsigned long start, unsigned long end,
		       unsigned long grain,
		       void (*fn)(unsigned long lo, unsigned long hi, void *arg),
		       void *arg)
{
	struct blitz_for f = {
		.loop = { .body = blitz_for_body, .chunk = grain },
		.fn = fn,
		.arg = arg,
	};

	might_sleep();
	if (start > end || !fn)
		return -EINVAL;
	if (start == end)
		return 0;
	return blitz_loop(&f.loop, start, end, NULL);
}
EXPORT_SYMBOL_NS_GPL(blitz_parallel_for, BLITZ_NS);

/* === Calls into a pool === */

/* The call's function, on a worker of the called pool. */
static void blitz_call_func(struct blitz_job *job)
{
	struct blitz_call_frame *f = container_of(job, struct blitz_call_frame,
						  job);
	struct blitz_worker *w = blitz_current_worker();
	struct blitz_call_frame *origin = w->origin;
	/*
	 * The caller may return and exit once the latch is set, and it need
	 * not be a worker whose pool we hold: keep its task until woken.
	 */
	struct task_struct *task = get_task_struct(f->task);

	w->origin = f;
	f->fn(f->arg);
	w->origin = origin;
	if (blitz_latch_set(&f->done))
		wake_up_process(task);
	put_task_struct(task);
}

/*
 * The call that a worker of @pool is waiting on and that @w serves, if
 * any: from @w's call up through the calls their callers served.
 */
static struct blitz_call_frame *blitz_call_waiter(struct blitz_worker *w,
						  struct blitz_pool *pool)
{
	struct blitz_call_frame *o;

	for (o = w ? w->origin : NULL; o; o = o->parent)
		if (o->caller && o->caller->pool == pool)
			return o;
	return NULL;
}

/*
 * Kick the frame @w waits on, its innermost, if it takes calls or
 * @for_calls is not set. Under its pool's call_lock, which keeps that
 * frame registered, and so alive. Fully ordered before the look at its
 * latch, by the caller's queueing: either the waiter, after its fully
 * ordered get_sleepy(), sees what was queued, or the kick sees it sleepy
 * (litmus/mailbox-kick.litmus, litmus/call-waiter-kick.litmus). A waiter
 * runs a job between its looks (the frame's running), and sleeps in what
 * that job waits for: a kick then finds its latch UNSET and does nothing,
 * and nothing is put in its mailbox meanwhile (blitz_call_deliver()).
 */
static void blitz_call_kick(struct blitz_worker *w, bool for_calls)
{
	struct blitz_call_frame *o = w->waiting;

	lockdep_assert_held(&w->pool->call_lock);
	if (o && (!for_calls || o->takes_calls) &&
	    blitz_latch_kick(&o->done))
		wake_up_process(o->task);
}

/*
 * Kick the workers of @pool waiting in calls that take calls, to look at
 * the pool's calls again: calls were queued, or the last idle worker
 * turned busy. After a full barrier (the caller's). Task context.
 */
void blitz_kick_callers(struct blitz_pool *pool)
{
	unsigned int i;

	raw_spin_lock(&pool->call_lock);
	for (i = 0; i < pool->nr_workers; i++)
		blitz_call_kick(pool->workers[i], true);
	raw_spin_unlock(&pool->call_lock);
}

/*
 * Calls are queued on @pool's calls: post them as an injected job is
 * posted, after a full barrier (the caller's), and kick the workers
 * waiting in calls that take them.
 */
static void blitz_post_calls(struct blitz_pool *pool)
{
	/* Each queueing posts: none rides along, as in blitz_inject(). */
	__blitz_new_jobs(pool, pool->cpu_worker[raw_smp_processor_id()]);
	blitz_race_window(BLITZ_RACE_CALL_QUEUE);
	blitz_kick_callers(pool);
}

/*
 * Queue call @job, made by a worker of another pool, or for a waiter that
 * cannot run it (blitz_call_spill()), on @pool's calls, where any worker
 * of @pool takes it: one looking for work, or one waiting in a call
 * itself, as a last resort, or at once if the call is its own call back.
 * The caller keeps @pool alive.
 */
void blitz_queue_call(struct blitz_pool *pool, struct blitz_job *job)
{
	/* Fully ordered: no barrier of our own before the post. */
	blitz_inject_add(&pool->calls, &job->node);
	blitz_inject_mark(&pool->calls_queued, 0);
	blitz_post_calls(pool);
}

/*
 * Queue call back @job, for the worker waiting on @o, on its pool's
 * calls: that worker is busy on top of its wait, or queues the rest of
 * its mailbox (blitz_call_run_mail()). Any worker of the pool takes it;
 * so does the waiter, once back in its loop on @o, and at once, not as a
 * last resort: the call is part of what it waits for
 * (blitz_call_run_own()). @o counts its calls back so queued, and its
 * waiter is kicked after the count. Once queued, the call may run and
 * return at once; @o stays valid: its function is still running (below
 * us, or we are its waiter).
 */
static void blitz_call_spill(struct blitz_call_frame *o,
			     struct blitz_job *job)
{
	struct blitz_worker *w = o->caller;

	blitz_queue_call(w->pool, job);
	blitz_race_window(BLITZ_RACE_CALL_SPILL);
	/*
	 * Counted after the fully ordered queueing: a waiter whose take
	 * missed the call read the count before that take's fully ordered
	 * llist_del_all(), so it did not count this one.
	 */
	atomic_inc(&o->spills);
	/*
	 * Orders the count before the kick's look at the latch; pairs with
	 * the waiter's fully ordered get_sleepy() before its look at the
	 * count: either it sees the count, or the kick sees it sleepy.
	 * (litmus/call-spill-own.litmus)
	 */
	smp_mb__after_atomic();
	/*
	 * A waiter in a frame above @o needs no kick: it leaves that frame,
	 * and marks itself back on @o, under call_lock after us, and then
	 * sees the count.
	 */
	raw_spin_lock(&w->pool->call_lock);
	if (w->waiting == o)
		blitz_call_kick(w, false);
	raw_spin_unlock(&w->pool->call_lock);
}

/*
 * Hand call @f to the worker waiting on @o, whose function we serve: in
 * @o's mailbox, if the worker is in its loop waiting on @o, the
 * innermost frame it waits on, and not running a job on top of it. Else
 * the worker is busy with a call it took, or with mail, which may wait
 * for @f in turn, through any number of joins and calls on other
 * workers: @f goes on its pool's calls, where any worker of the pool
 * takes it, and that worker too, once back in its loop on @o
 * (blitz_call_spill()). Decided under call_lock, against the worker's
 * own marks (blitz_call_mark()).
 */
static void blitz_call_deliver(struct blitz_call_frame *o,
			       struct blitz_call_frame *f)
{
	struct blitz_worker *w = o->caller;
	bool mail;

	f->serves = o;
	blitz_race_window(BLITZ_RACE_CALL_DELIVER);
	raw_spin_lock(&w->pool->call_lock);
	mail = w->waiting == o && !o->running;
	if (mail) {
		/* Fully ordered: see blitz_call_kick(). */
		llist_add(&f->job.node, &o->mailbox);
		blitz_call_kick(w, false);
	}
	raw_spin_unlock(&w->pool->call_lock);
	if (!mail)
		blitz_call_spill(o, &f->job);
}

/*
 * After a take from @pool's calls: if calls are left, post them again. If
 * our take moved the list to the backlog, a lockless look (a waiter's, a
 * sleeper's last one) saw the queue empty while we moved them. (Whether
 * it did is known only under the queue's lock; calls are few, and a post
 * that finds everyone busy is cheap.)
 */
static void blitz_repost_calls(struct blitz_pool *pool)
{
	if (blitz_inject_empty(&pool->calls))
		return;
	/*
	 * Orders the backlog we wrote before the post's reads of the bitmap,
	 * counters and latches: pairs with the sleeper's and the waiter's
	 * full barrier before their looks at the queue.
	 * (litmus/call-take-repost.litmus)
	 */
	smp_mb();
	blitz_post_calls(pool);
}

/* Take a call queued on @pool's calls, or NULL. Task context. */
struct blitz_job *blitz_take_call(struct blitz_pool *pool)
{
	struct llist_node *node;
	unsigned int n;

	node = blitz_inject_take(&pool->calls, 1, &n, &pool->calls_queued, 0);
	if (!node)
		return NULL;
	blitz_repost_calls(pool);
	return llist_entry(node, struct blitz_job, node);
}

/*
 * Whether the call queued at @node is a call back for frame @arg. A
 * pool's calls hold only call frames' jobs.
 */
static bool blitz_call_serves(struct llist_node *node, void *arg)
{
	return container_of(node, struct blitz_call_frame, job.node)->serves ==
	       arg;
}

/*
 * Take the oldest call back for @f queued on its pool's calls, or NULL.
 * Task context.
 */
static struct blitz_job *blitz_take_own_call(struct blitz_call_frame *f)
{
	struct blitz_pool *pool = f->caller->pool;
	struct llist_node *node;

	node = blitz_inject_take_if(&pool->calls, blitz_call_serves, f, 1);
	blitz_repost_calls(pool);
	return node ? llist_entry(node, struct blitz_job, node) : NULL;
}

/*
 * Whether a waiter in a call that takes calls should take one queued on
 * @pool's calls: only as a last resort, when no worker of @pool is idle.
 * A call taken so runs on top of the waiting job, and deadlocks if it
 * takes a lock that job holds; an idle worker runs it on a stack of its
 * own, and the post that queued it woke one if none was awake. The last
 * idle worker to turn busy kicks the waiters if calls are queued then
 * (blitz_wait_until()). Best effort: a worker busy at that moment may be
 * free a moment later, and a worker counted idle may wait for its CPU.
 */
static bool blitz_call_last_resort(struct blitz_call_frame *f)
{
	struct blitz_pool *pool = f->caller->pool;

	return f->takes_calls && !blitz_inject_empty(&pool->calls) &&
	       !blitz_inactive(blitz_counters_load(&pool->counters));
}

/*
 * Whether the waiter on @f has calls back for @f queued on its pool's
 * calls that it has not looked for yet (blitz_call_spill()).
 */
static bool blitz_call_spilled(struct blitz_call_frame *f)
{
	return f->takes_calls && atomic_read(&f->spills) != f->spills_seen;
}

/*
 * Whether the worker waiting on @f has something to run: calls in its
 * mailbox, its own calls back queued on its pool's calls, or other calls
 * queued there that it should take. Not the calls_queued bit, which lags
 * the queueing: a waiter must not sleep on a call whose kick came before
 * its sleepy latch. The queuer kicks after its queueing, whatever it
 * finds; the last idle worker to turn busy, after its fully ordered
 * decrement of the idle count, if it sees calls queued. Either the waiter,
 * after its fully ordered get_sleepy(), sees the call and no worker idle,
 * or one of those kicks sees it sleepy (litmus/call-last-idle.litmus), or
 * a worker it saw idle takes the call: an idle worker looks at the calls
 * before it sleeps (blitz_has_work()), and the post wakes one if none is
 * awake. Its own calls back: see blitz_call_spill().
 */
static bool blitz_call_ready(void *arg)
{
	struct blitz_call_frame *f = arg;

	return !llist_empty(&f->mailbox) || blitz_call_spilled(f) ||
	       blitz_call_last_resort(f);
}

/*
 * Mark @f's worker as running a job on top of its wait on @f (@running),
 * or back in its loop; for blitz_call_deliver(). With @unless_mail, only
 * while the mailbox is empty, and returns whether it marked: a call is
 * taken from the pool's calls only so, so that mail that came before is
 * run first, and mail that comes after goes to the pool's calls.
 */
static bool blitz_call_mark(struct blitz_worker *w, struct blitz_call_frame *f,
			    bool running, bool unless_mail)
{
	bool ok = true;

	raw_spin_lock(&w->pool->call_lock);
	if (unless_mail && !llist_empty(&f->mailbox))
		ok = false;
	else
		f->running = running;
	raw_spin_unlock(&w->pool->call_lock);
	return ok;
}

/*
 * Run the oldest call in @f's mailbox, and queue the others on our pool's
 * calls, where any worker of the pool takes them (we do too, back in our
 * loop). The call we run may wait for a later one (two branches of the
 * function we wait on called back at once, and the first waits for the
 * second): kept on a list of our own, that one would wait for us. Short
 * of stack, we queue them all, oldest first: any worker of our pool will
 * do.
 */
static void blitz_call_run_mail(struct blitz_worker *w,
				struct blitz_call_frame *f)
{
	bool run = !blitz_stack_below(BLITZ_RUN_STACK);
	struct blitz_job *job, *next, *first;
	struct llist_node *list, *rest;

	/* Marked first: the mailbox takes no more until we are back. */
	blitz_call_mark(w, f, true, false);
	list = llist_reverse_order(llist_del_all(&f->mailbox));
	first = llist_entry(list, struct blitz_job, node);
	rest = list->next;
	if (!run)
		blitz_call_spill(f, first);
	llist_for_each_entry_safe(job, next, rest, node)
		blitz_call_spill(f, job);
	if (run)
		blitz_execute(w, first);
	blitz_call_mark(w, f, false, false);
}

/* Take a call from our pool's calls and run it; whether we took one. */
static bool blitz_call_run_taken(struct blitz_worker *w,
				 struct blitz_call_frame *f)
{
	struct blitz_job *job;

	if (!blitz_call_mark(w, f, true, true))
		return false;
	job = blitz_take_call(w->pool);
	if (job) {
		blitz_stat_inc(w, BLITZ_STAT_INJECTED);
		blitz_execute(w, job);
	}
	blitz_call_mark(w, f, false, false);
	return job;
}

/*
 * Take a call back for @f from our pool's calls and run it, if calls back
 * were queued there since we last found none; whether to look again
 * before sleeping: we ran one (more may be queued), or mail came first.
 */
static bool blitz_call_run_own(struct blitz_worker *w,
			       struct blitz_call_frame *f)
{
	struct blitz_job *job;
	int spills;

	if (!blitz_call_spilled(f))
		return false;
	if (!blitz_call_mark(w, f, true, true))
		return true;
	/*
	 * Read before the take's fully ordered llist_del_all(): a call back
	 * queued after it is counted after this read (blitz_call_spill()).
	 * Caught up only when the take finds none: it takes one of them.
	 */
	spills = atomic_read(&f->spills);
	job = blitz_take_own_call(f);
	if (job) {
		blitz_stat_inc(w, BLITZ_STAT_INJECTED);
		blitz_execute(w, job);
	} else {
		f->spills_seen = spills;
	}
	blitz_call_mark(w, f, false, false);
	return job;
}

/* Enter or leave @f, the innermost frame @w waits on. */
static void blitz_call_register(struct blitz_worker *w,
				struct blitz_call_frame *f, bool enter)
{
	raw_spin_lock(&w->pool->call_lock);
	if (enter) {
		f->outer = w->waiting;
		w->waiting = f;
	} else {
		w->waiting = f->outer;
	}
	raw_spin_unlock(&w->pool->call_lock);
}

/*
 * Wait for @f's function to return, running what it sends back. A worker
 * with the stack for it also runs the calls that workers of other pools
 * make into its pool: those callers wait too, and calls that no chain
 * links, A's into B while B's into A, would otherwise wait for each other
 * once every worker of A and B waits in one.
 */
static void blitz_call_wait(struct blitz_worker *w, struct blitz_call_frame *f)
{
	if (!w) {
		while (!blitz_latch_probe(&f->done))
			blitz_latch_sleep(NULL, &f->done, NULL, NULL,
					  TASK_UNINTERRUPTIBLE);
		return;
	}
	while (!blitz_latch_probe(&f->done)) {
		if (!llist_empty(&f->mailbox)) {
			blitz_race_window(BLITZ_RACE_CALL_MAIL);
			blitz_call_run_mail(w, f);
		} else if (!blitz_call_run_own(w, f) &&
			   (!blitz_call_last_resort(f) ||
			    !blitz_call_run_taken(w, f))) {
			blitz_latch_sleep(w, &f->done, blitz_call_ready, f,
					  TASK_IDLE);
		}
	}
}

/**
 * blitz_call - run a function on a worker of a pool and wait for it
 * @pool: the pool, or NULL for the default pool
 * @fn: the function
 * @arg: its argument
 *
 * blitz_join() and blitz_parallel_for() called by @fn use @pool. Called
 * from a worker of @pool, @fn simply runs inline. Called from a worker of
 * another pool, the caller waits the way a joiner does: it runs no
 * submitted job, group job or join frame, but it does run the calls back
 * into its own pool that @fn (or what @fn joins or calls) makes, and,
 * with half the stack left and no worker of its pool idle, the calls
 * that other pools' workers make into its pool, so calls across pools
 * do not deadlock.
 *
 * Context: process context or a blitz job; sleeps until @fn returns.
 * Return: 0 once @fn has returned; -EINVAL for a NULL @fn; -ESHUTDOWN
 * when @pool is being destroyed (then @fn is not called).
 */
int blitz_call(struct blitz_pool *pool, void (*fn)(void *arg), void *arg)
{
	struct blitz_worker *w = blitz_current_worker();
	struct blitz_call_frame f = {
		.job = BLITZ_JOB_INIT(blitz_call_func),
		.fn = fn,
		.arg = arg,
		.task = current,
		.caller = w,
		.parent = w ? w->origin : NULL,
	};
	struct blitz_call_frame *o;
	int ret;

	might_sleep();
	if (!fn)
		return -EINVAL;
	if (!pool)
		pool = blitz_default_pool;
	if (w && w->pool == pool) {
		fn(arg);
		return 0;
	}
	blitz_latch_init(&f.done);
	init_llist_head(&f.mailbox);
	/*
	 * The innermost frame we wait on before @fn can call back: a call
	 * back comes to our mailbox, not to our pool's calls, where another
	 * waiter could take it.
	 */
	if (w) {
		f.takes_calls = !blitz_stack_below(BLITZ_RUN_STACK);
		blitz_call_register(w, &f, true);
	}
	o = blitz_call_waiter(w, pool);
	if (o) {
		blitz_call_deliver(o, &f);
		ret = 0;
	} else {
		ret = w ? blitz_submit_call(pool, &f.job) :
			  blitz_submit(pool, &f.job);
	}
	if (!ret)
		blitz_call_wait(w, &f);
	if (w)
		blitz_call_register(w, &f, false);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(blitz_call, BLITZ_NS);
