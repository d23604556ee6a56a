/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz: what the executor's files share.
 *
 *   deque.h     Chase-Lev deque, one per worker
 *   inject.h    the injection queue, one per worker
 *   counters.h  the packed sleep counter word, one per pool
 *   latch.h     the core latch a worker waits on
 *   sleep.c     the sleep protocol: idle rounds, sleeping, waking
 *   worker.c    the worker kthread: finding and running jobs
 *   pool.c      pools, blitz_submit(), CPU hotplug
 *   join.c      blitz_join(), blitz_parallel_for(), blitz_call()
 *   debugfs.c   the stats and state files
 *   race.c      race-window injection, for the torture runs
 *   main.c      module init and exit, the default pool
 */
#ifndef _BLITZ_H
#define _BLITZ_H

#include <linux/blitz.h>
#include <linux/cache.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/percpu-refcount.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/swait.h>
#include <linux/types.h>

#include "counters.h"
#include "deque.h"
#include "inject.h"
#include "latch.h"
#include "race.h"

/* Per-worker counters, in the order debugfs prints them. */
enum blitz_stat {
	BLITZ_STAT_EXECUTED,	/* jobs run */
	BLITZ_STAT_STOLEN,	/* jobs taken from another worker's deque */
	BLITZ_STAT_INJECTED,	/* jobs taken from an injection list */
	BLITZ_STAT_SLEEPS,	/* times blocked: idle, or in a join or call */
	BLITZ_STAT_WAKEUPS,	/* times woken from such a block */
	BLITZ_STAT_OVERFLOWS,	/* local submits that found the deque full */
	BLITZ_NR_STATS,
};

extern const char *const blitz_stat_names[BLITZ_NR_STATS];

/**
 * struct blitz_worker - one worker kthread and what it owns
 * @deque: jobs pushed by this worker; others steal from it
 * @pool: the pool the worker belongs to
 * @task: the kthread
 * @index: position in &blitz_pool.workers
 * @cpu: the CPU the worker is bound to while that CPU is online
 * @rng: xorshift64* state for picking steal victims
 * @stop: set when the pool stops; the worker's main loop waits on it
 * @origin: the blitz_call() whose function the worker is running, directly
 *	    or through joins, or NULL; see join.c
 * @inject: jobs submitted from outside the pool on CPUs mapped to this
 *	    worker; any worker may take them (inject.h)
 * @idle_wait: where the worker sleeps in the sleep protocol (a simple wait
 *	       queue: raw lock, wakers may run in hard interrupt context,
 *	       also on PREEMPT_RT)
 * @woken: a waker claimed the worker in &blitz_pool.sleepers and
 *	   subtracted it from the sleeping count; reset by the worker
 * @stats: counters written only by this worker
 * @refs: pool references of the jobs the worker ran, not dropped yet
 */
struct blitz_worker {
	struct blitz_deque deque;
	struct blitz_pool *pool;
	struct task_struct *task;
	unsigned int index;
	int cpu;
	u64 rng;
	struct blitz_latch stop;
	struct blitz_call_frame *origin;
	struct blitz_inject inject ____cacheline_aligned_in_smp;
	struct swait_queue_head idle_wait ____cacheline_aligned_in_smp;
	bool woken;
	u64 stats[BLITZ_NR_STATS] ____cacheline_aligned_in_smp;
	unsigned long refs;
};

/**
 * struct blitz_pool - a set of workers sharing jobs
 * @counters: the sleep protocol's counter word
 * @sleepers: bitmap of the workers asleep in the sleep protocol, by index,
 *	      for wakers to find and claim (sleep.c)
 * @live: one reference per accepted job not yet finished; killed when the
 *	  pool is being destroyed, so that outside submissions fail
 * @drained: completed when @live drops to zero after the kill
 * @shutdown: blitz_pool_destroy() has begun
 * @name: unique; the debugfs directory
 * @node: on the list of all pools
 * @debugfs: the pool's debugfs directory
 * @cpu_worker: for each CPU, the worker whose injection list it uses
 * @nr_workers: size of @workers
 * @workers: the workers
 */
struct blitz_pool {
	struct blitz_counters counters ____cacheline_aligned_in_smp;
	unsigned long *sleepers;
	struct percpu_ref live ____cacheline_aligned_in_smp;
	struct completion drained;
	bool shutdown;
	const char *name;
	struct list_head node;
	struct dentry *debugfs;
	unsigned int *cpu_worker;
	unsigned int nr_workers;
	struct blitz_worker *workers[] __counted_by(nr_workers);
};

extern struct blitz_pool *blitz_default_pool;

/* Every job starts with at least this much stack left. */
#define BLITZ_JOB_STACK		(THREAD_SIZE / 2)

/*
 * Injected jobs a worker takes at a time: it runs one and pushes the rest
 * for thieves. As crossbeam's injector does; at most the deque's size.
 */
#define BLITZ_INJECT_BATCH	32

/* The longest pool name: [A-Za-z0-9._-], not "." or "..". */
#define BLITZ_POOL_NAME_MAX	63

/* sleep.c */
struct blitz_idle {
	unsigned int rounds;
	u32 jec;
};

void blitz_idle_start(struct blitz_pool *pool, struct blitz_idle *idle);
void blitz_idle_work_found(struct blitz_worker *w);
void blitz_idle_no_work_found(struct blitz_worker *w, struct blitz_idle *idle,
			      struct blitz_latch *latch);
void __blitz_new_jobs(struct blitz_pool *pool, unsigned int nr,
		      unsigned int near);
void blitz_new_jobs(struct blitz_pool *pool, unsigned int nr,
		    unsigned int near);
bool blitz_wake_worker(struct blitz_worker *w);
void blitz_latch_sleep(struct blitz_worker *w, struct blitz_latch *latch,
		       bool (*ready)(void *arg), void *arg, unsigned int state);

/* worker.c */
struct blitz_worker *blitz_current_worker(void);
bool blitz_has_work(struct blitz_pool *pool);
void blitz_execute(struct blitz_worker *w, struct blitz_job *job);
int blitz_worker_fn(void *arg);

static inline void blitz_stat_add(struct blitz_worker *w, enum blitz_stat s,
				  unsigned int n)
{
	/* Only the owner writes; debugfs reads with READ_ONCE(). */
	WRITE_ONCE(w->stats[s], w->stats[s] + n);
}

static inline void blitz_stat_inc(struct blitz_worker *w, enum blitz_stat s)
{
	blitz_stat_add(w, s, 1);
}

/* pool.c */
void blitz_inject(struct blitz_pool *pool, struct blitz_job *job);
int blitz_hotplug_init(void);
void blitz_hotplug_exit(void);

/* debugfs.c */
void blitz_debugfs_init(void);
void blitz_debugfs_exit(void);
int blitz_debugfs_add_pool(struct blitz_pool *pool);
void blitz_debugfs_remove_pool(struct blitz_pool *pool);

#endif /* _BLITZ_H */
