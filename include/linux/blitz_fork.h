/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz: the machinery of blitz_join()'s inline fast path. Private to
 * blitz: include <linux/blitz.h>, and use none of it. A join that nobody
 * needs costs a few plain loads and stores around the calls of a and b,
 * which the compiler sees; blitz_kmod/promote.c and join.c do the rest.
 */
#ifndef _LINUX_BLITZ_FORK_H
#define _LINUX_BLITZ_FORK_H

#ifndef _LINUX_BLITZ_H
#error "include <linux/blitz.h>, not this file"
#endif

#include <linux/percpu-defs.h>
#include <linux/preempt.h>
#include <linux/sched.h>

/* Latent join frames a worker keeps; deeper joins run a, then b, inline. */
#define BLITZ_LATENT_MAX	128

/* &blitz_forks.share: why the owner should look at its latent frames. */
#define BLITZ_SHARE_ASK		BIT(0)	/* promote the oldest latent frame */
#define BLITZ_SHARE_COLD	BIT(1)	/* share one interval from now */
#define BLITZ_SHARE_WAIT	BIT(2)	/* cooling down, share timer armed */
#define BLITZ_SHARE_FORK	(BLITZ_SHARE_ASK | BLITZ_SHARE_COLD)

/**
 * struct blitz_latch - private: what a worker waits on (blitz_kmod/latch.h)
 * @state: UNSET, SLEEPY, SLEEPING or SET
 */
struct blitz_latch {
	atomic_t state;
};

struct blitz_worker;

/**
 * struct blitz_join_frame - private: a join's b, on the joiner's stack
 * @fn: b, stored at the fork
 * @arg: its argument, stored at the fork
 * @job: queued on the deque when the frame is promoted
 * @latch: set by the thief that ran b
 * @owner: the joining worker's task
 * @thief: the worker running b, published with release
 * @thief_base: the thief's deque bottom when b started: frames pushed from
 *		there on, while b runs, descend from b
 *
 * A fork writes only @fn and @arg; the rest is written when the frame is
 * promoted, before the push that publishes it.
 */
struct blitz_join_frame {
	void (*fn)(void *arg);
	void *arg;
	struct blitz_job job;
	struct blitz_latch latch;
	struct task_struct *owner;
	struct blitz_worker *thief;
	long thief_base;
};

/**
 * struct blitz_forks - private: a worker's open join frames
 * @depth: join frames open on the worker, latent or promoted
 * @published: frames [0, @published) of the current segment are promoted,
 *	       [@published, @depth) latent
 * @task: the worker's kthread, which the frames belong to
 * @latent: the open join frames, oldest first
 * @share: share requests, BLITZ_SHARE_*: written by other workers and the
 *	   worker's share timer, read at every fork
 *
 * The first member of a worker. @depth, @published and @latent are the
 * worker's own, and, while it is switched out, its notifier's
 * (blitz_kmod/promote.c).
 */
struct blitz_forks {
	unsigned int depth;
	unsigned int published;
	struct task_struct *task;
	struct blitz_join_frame *latent[BLITZ_LATENT_MAX];
	unsigned long share ____cacheline_aligned_in_smp;
};

/*
 * For each CPU, the forks of the worker that last said it runs there, or
 * NULL: a hint, right when its @task is current.
 */
DECLARE_PER_CPU(struct blitz_forks *, blitz_hint);

/*
 * The current worker's forks, if the hint names it; NULL in an interrupt,
 * for any other task, and for a worker the hint no longer names (another
 * worker ran here since: the slow paths look it up and set the hint
 * again). A hint may name a worker that is exiting: its pool frees it
 * only after clearing the hints and a grace period, which preemption off
 * holds off while we look.
 */
static __always_inline struct blitz_forks *__blitz_hinted_forks(void)
{
	struct blitz_forks *forks;

	if (!in_task())
		return NULL;
	preempt_disable();
	forks = this_cpu_read(blitz_hint);
	/* A spare's slot may be taken by a new spare meanwhile (cm.c). */
	if (forks && READ_ONCE(forks->task) != current)
		forks = NULL;
	preempt_enable();
	return forks;
}

void __blitz_join_slow(void (*a)(void *arg), void *a_arg,
		       void (*b)(void *arg), void *b_arg);
void __blitz_fork_slow(struct blitz_forks *forks);
void __blitz_join_promoted(struct blitz_forks *forks,
			   struct blitz_join_frame *f, unsigned int i);

/*
 * Open frame @f at @i, the next free slot of the current worker's latent
 * stack. Its b is stored first: from the depth store on, our notifier may
 * promote the frame when we are switched out (blitz_kmod/promote.c).
 */
static __always_inline void __blitz_fork(struct blitz_forks *forks,
					 struct blitz_join_frame *f,
					 unsigned int i)
{
	forks->latent[i] = f;
	barrier();
	WRITE_ONCE(forks->depth, i + 1);
}

/*
 * Close the frame open at @i: whether it is still latent, and b is ours
 * to run inline. The depth store first: from then on a promotion while
 * we are switched out leaves the frame alone, and one before it shows in
 * published.
 */
static __always_inline bool __blitz_unfork(struct blitz_forks *forks,
					   unsigned int i)
{
	WRITE_ONCE(forks->depth, i);
	return i >= READ_ONCE(forks->published);
}

/*
 * Whether a fork should leave its fast path: a request, or a reschedule
 * that cond_resched() would take (on x86, one load of the preempt count,
 * where need_resched() takes two).
 */
static __always_inline bool __blitz_fork_asked(struct blitz_forks *forks)
{
	return (READ_ONCE(forks->share) & BLITZ_SHARE_FORK) ||
	       should_resched(0);
}

/*
 * blitz_join() in the current worker, whose @forks have a free slot:
 * inline, and from __blitz_join_slow() once it has found the worker.
 */
static __always_inline void __blitz_join(struct blitz_forks *forks,
					 void (*a)(void *arg), void *a_arg,
					 void (*b)(void *arg), void *b_arg)
{
	/*
	 * Not zeroed (CONFIG_INIT_STACK_ALL_ZERO would, at every join): the
	 * fork writes fn and arg, a promotion the rest.
	 */
	struct blitz_join_frame f __uninitialized;
	unsigned int i = forks->depth;

	/* might_sleep() without the voluntary preemption: see below. */
	__might_sleep(__FILE__, __LINE__);
	f.fn = b;
	f.arg = b_arg;
	__blitz_fork(forks, &f, i);
	/* The fork's preemption point, and where requests are heard. */
	if (unlikely(__blitz_fork_asked(forks)))
		__blitz_fork_slow(forks);
	a(a_arg);
	if (likely(__blitz_unfork(forks, i)))
		b(b_arg);
	else
		__blitz_join_promoted(forks, &f, i);
}

#endif /* _LINUX_BLITZ_FORK_H */
