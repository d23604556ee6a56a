/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz: what the executor's files share: the pool and worker types, and
 * each file's prototypes under its name. Which file does what:
 * Documentation/blitz/design.rst, "Layout".
 */
#ifndef _BLITZ_H
#define _BLITZ_H

#include <linux/bitmap.h>
#include <linux/blitz.h>
#include <linux/cache.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/percpu-refcount.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/swait.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "counters.h"
#include "deque.h"
#include "inject.h"
#include "latch.h"
#include "race.h"

#include <trace/events/blitz.h>

/* Per-worker counters, in the order debugfs prints them. */
enum blitz_stat {
	BLITZ_STAT_EXECUTED,	/* jobs run */
	BLITZ_STAT_STOLEN,	/* jobs taken from another worker's deque */
	BLITZ_STAT_INJECTED,	/* jobs taken from an injection list */
	BLITZ_STAT_SLEEPS,	/* times blocked: idle, or in a join or call */
	BLITZ_STAT_WAKEUPS,	/* times woken from such a block */
	BLITZ_STAT_OVERFLOWS,	/* local pushes that found the deque full */
	BLITZ_STAT_PROMOTED,	/* latent join frames pushed on the deque */
	BLITZ_STAT_SHARE_REQUESTS,	/* share requests made of others */
	BLITZ_STAT_CANCELLED,	/* jobs of a cancelled group, skipped */
	BLITZ_STAT_SHARE_TIMER,	/* times the share timer fired */
	BLITZ_STAT_BLOCKS,	/* times blocked in a job (cm.c) */
	BLITZ_NR_STATS,
};

extern const char *const blitz_stat_names[BLITZ_NR_STATS];

/* What a worker's blocks mean to concurrency management (cm.c). */
enum blitz_cm_state {
	BLITZ_CM_OFF,		/* a spare off duty, or a worker exiting */
	BLITZ_CM_RUNNING,	/* running jobs: a block leaves its CPU */
	BLITZ_CM_LOOKING,	/* counted idle: a preemption takes it out */
};

/**
 * struct blitz_worker - one worker kthread and what it owns
 * @forks: the open join frames, which blitz_join() reaches inline through
 *	   blitz_hint: first, so that a worker and its forks are one
 *	   pointer (blitz_current_worker())
 * @deque: jobs pushed by this worker; others steal from it
 * @pool: the pool the worker belongs to
 * @task: the kthread; NULL for a spare's slot whose thread exited
 * @index: position in &blitz_pool.workers
 * @cpu: the CPU the worker is bound to while that CPU is online; a
 *	 spare's slot may take another CPU between spares (cm.c)
 * @rng: xorshift64* state for picking steal victims
 * @stop: set when the pool stops; the worker's main loop waits on it
 * @groups: how many jobs of groups are on the worker's stack (group.c)
 * @spare: a spare worker, started when the workers of @cpu all block
 * @cm: what a block or preemption of the worker means (cm.c); the
 *	worker's own, read by its notifier, which may run in the middle of
 *	its store (a preemption at interrupt exit): marked
 * @blocked: the notifier counted the worker blocked in a job
 * @idle_out: the notifier took the worker, preempted, out of the idle
 *	      count
 * @on_duty: a spare is to run jobs for @cpu, not wait parked; written
 *	     under @cpu's &blitz_cm_cpu.lock
 * @reap: a spare waited unneeded too long: the manager stops it
 * @spare_node: on @cpu's list of spares on duty, or of those parked
 * @inject: jobs submitted from outside the pool on CPUs mapped to this
 *	    worker, and jobs the worker moved off its deque or had no room
 *	    for there (blitz_requeue()); any worker may take them (inject.h)
 * @idle_wait: where the worker sleeps in the sleep protocol (a simple wait
 *	       queue: raw lock, wakers may run in hard interrupt context,
 *	       also on PREEMPT_RT)
 * @woken: a waker claimed the worker in &blitz_pool.sleepers and
 *	   subtracted it from the sleeping count; reset by the worker
 * @stats: counters written only by this worker
 * @refs: pool references of the jobs the worker ran, not dropped yet
 * @since_resched: jobs run with no reschedule due, counted for
 *		   blitz_between_jobs() (worker.c)
 * @serving: the stolen frame whose b this worker runs, or NULL
 * @promoted_at: local_clock() of the last promotion asked for
 * @busy: running jobs, not looking for work; a hint for askers
 * @share_timer: ends a cooldown (promote.c)
 * @notifier: sees the worker switched out and in (cm.c)
 * @deferred: what the notifier left to @irq_work, BLITZ_DEFER_* bits
 * @kick: a joiner whose latch the notifier kicked, for @irq_work to wake
 * @irq_work: wakes what the notifier could not, under the runqueue lock
 * @rcu: frees the worker after a grace period (pool.c)
 *
 * @forks (but its share), @serving and @promoted_at are the owner's, or,
 * while it is switched out, its notifier's (promote.c); the share timer
 * reads @serving as a hint at any time.
 */
struct blitz_worker {
	struct blitz_forks forks;
	/* Within kfree_rcu()'s reach of the start: before the deque. */
	struct rcu_head rcu;
	struct blitz_deque deque;
	struct blitz_pool *pool;
	struct task_struct *task;
	unsigned int index;
	int cpu;
	u64 rng;
	struct blitz_latch stop;
	unsigned int groups;
	bool spare;
	enum blitz_cm_state cm;
	bool blocked;
	bool idle_out;
	bool on_duty;
	bool reap;
	struct list_head spare_node;
	struct blitz_inject inject ____cacheline_aligned_in_smp;
	struct swait_queue_head idle_wait ____cacheline_aligned_in_smp;
	bool woken;
	u64 stats[BLITZ_NR_STATS] ____cacheline_aligned_in_smp;
	unsigned long refs;
	unsigned int since_resched;
	struct blitz_join_frame *serving ____cacheline_aligned_in_smp;
	u64 promoted_at;
	bool busy ____cacheline_aligned_in_smp;
	struct hrtimer share_timer;
#ifdef CONFIG_PREEMPT_NOTIFIERS
	struct preempt_notifier notifier;
#endif
	atomic_long_t deferred;
	struct task_struct *kick;
	struct irq_work irq_work;
};

/**
 * struct blitz_cm_cpu - concurrency management of a pool on one CPU
 * @nr_running: workers homed here that are on duty and not blocked in a
 *		job: running, looking for work, or asleep in the sleep
 *		protocol (unlike cmwq's, which leaves idle workers out: a
 *		poster wakes ours)
 * @lock: guards the lists, @want and the spares'
 *	  &blitz_worker.on_duty; taken in hard interrupt
 * @on_duty: spares for this CPU on duty
 * @parked: spares for this CPU, waiting to be put on duty
 * @nr_dozing: spares on duty asleep in the sleep protocol, which a
 *	       worker of this CPU running again wakes (blitz_spare_nudge())
 * @want: no spare is parked here: the manager makes one
 */
struct blitz_cm_cpu {
	atomic_t nr_running;
	raw_spinlock_t lock;
	struct list_head on_duty;
	struct list_head parked;
	atomic_t nr_dozing;
	bool want;
};

/**
 * struct blitz_pool - a set of workers sharing jobs
 * @counters: the sleep protocol's counter word
 * @sleepers: bitmap of the workers asleep in the sleep protocol, by index,
 *	      for wakers to find and claim (sleep.c)
 * @queued: bitmap of the workers whose injection queue may hold jobs, by
 *	    index: where takers look (worker.c, inject.h)
 * @live: one reference per accepted job not yet finished, and those of
 *	  @credits; killed once destroy has taken @credits back
 * @drained: completed when @live drops to zero after the kill
 * @shutdown: blitz_pool_destroy() has begun: outside submissions are
 *	      refused, and none takes a credit
 * @credits: per CPU, references on @live taken ahead for submissions
 *	     (pool.c, blitz_take_credit())
 * @name: unique; the debugfs directory
 * @cpumask: the CPUs the workers are homed on, and run on while their
 *	     own is offline (pool.c, CPU hotplug)
 * @online: the CPUs of @cpumask that the hotplug callbacks count online;
 *	    under @manage_lock (pool.c, blitz_worker_bind())
 * @nice: the workers' nice value
 * @flags: BLITZ_POOL_* flags
 * @node: on the list of all pools
 * @debugfs: the pool's debugfs directory
 * @cpu_worker: for each CPU, the worker whose injection list it uses
 * @cm: per CPU, its running workers and parked spares (cm.c)
 * @manage: makes and stops spares (cm.c)
 * @manage_retry: queues @manage again after it failed to make a spare
 * @manage_lock: serialises @manage with destroy, and with the hotplug
 *		 callbacks' moves of the workers
 * @stopping: destroy stops the workers: @manage does nothing more
 * @nr_spares: spare threads alive; @manage's
 * @max_spares: the most spares the pool may have
 * @nr_workers: the workers made with the pool, [0, @nr_workers) of
 *		@workers; spares follow
 * @nr_slots: @workers in use, spares' slots included; grows only, by
 *	      @manage, with release
 * @capacity: size of @workers and of the bitmaps: @nr_workers +
 *	      @max_spares
 * @workers: the workers
 */
struct blitz_pool {
	struct blitz_counters counters ____cacheline_aligned_in_smp;
	unsigned long *sleepers;
	unsigned long *queued;
	struct percpu_ref live ____cacheline_aligned_in_smp;
	struct completion drained;
	bool shutdown;
	long __percpu *credits;
	const char *name;
	cpumask_var_t cpumask;
	cpumask_var_t online;
	int nice;
	unsigned int flags;
	struct list_head node;
	struct dentry *debugfs;
	unsigned int *cpu_worker;
	struct blitz_cm_cpu __percpu *cm;
	struct work_struct manage;
	struct delayed_work manage_retry;
	struct mutex manage_lock;	/* @manage, destroy, hotplug callbacks */
	bool stopping;
	unsigned int nr_spares;
	unsigned int max_spares;
	unsigned int nr_workers ____cacheline_aligned_in_smp;
	unsigned int nr_slots;
	unsigned int capacity;
	struct blitz_worker *workers[] __counted_by(capacity);
};

extern struct blitz_pool *blitz_default_pool;

/*
 * Every job starts with at least this much stack left, but the group jobs
 * that a group waiter runs on its own stack, as calls (group.c).
 */
#define BLITZ_JOB_STACK		(THREAD_SIZE / 2)

/*
 * blitz's own recursions, a loop's splits and a sort's partitions, split
 * no further with less than this left, and run the rest alone: their
 * depth depends on the input and on how often the worker is asked, not
 * on the caller, and it must not take the stack of the caller's body or
 * compare function.
 */
#define BLITZ_SPLIT_STACK	(THREAD_SIZE / 4)

/* Whether the current task has less than @reserve of its stack left. */
static inline bool blitz_stack_below(unsigned long reserve)
{
	/* The stack grows down on every architecture blitz builds for. */
	unsigned long sp = (unsigned long)__builtin_frame_address(0);

	return sp - (unsigned long)task_stack_page(current) < reserve;
}

/*
 * Injected jobs a worker takes at a time: it runs one and pushes the rest
 * for thieves. As crossbeam's injector does; at most the deque's size.
 */
#define BLITZ_INJECT_BATCH	32

/* Jobs in a row a worker runs, at most, without calling cond_resched(). */
#define BLITZ_RESCHED_EVERY	16

/* The longest pool name: [A-Za-z0-9._-], not "." or "..". */
#define BLITZ_POOL_NAME_MAX	63

/* sleep.c */
struct blitz_idle {
	unsigned int rounds;
	u32 jec;
};

void blitz_idle_start(struct blitz_worker *w, struct blitz_idle *idle);
u64 blitz_idle_work_found(struct blitz_worker *w);
void blitz_idle_no_work_found(struct blitz_worker *w, struct blitz_idle *idle,
			      struct blitz_latch *latch);
void blitz_wake_for_job(struct blitz_pool *pool, unsigned int near);
void blitz_wake_stale(struct blitz_pool *pool, unsigned int near);
bool blitz_wake_worker(struct blitz_worker *w);
void blitz_latch_sleep(struct blitz_worker *w, struct blitz_latch *latch,
		       bool (*ready)(void *arg), void *arg, unsigned int state);
bool blitz_has_work(struct blitz_pool *pool);
void blitz_idle_handoff(struct blitz_pool *pool, u64 c, unsigned int near);

/* worker.c */
struct blitz_worker *blitz_hint_lookup(void);
void blitz_hint_clear(struct blitz_worker *w);
void blitz_execute(struct blitz_worker *w, struct blitz_job *job);
int blitz_worker_fn(void *arg);

/*
 * Whether the task we run as, or interrupted, has @flag, one that only
 * that task itself changes, if ever (PF_KTHREAD never; PF_IDLE around
 * idle injection, play_idle_precise()). Any context.
 */
static inline bool blitz_current_has(unsigned int flag)
{
	/*
	 * From an interrupt, the task may be in the middle of a plain
	 * read-modify-write of its other flags (copy_process() clears
	 * PF_NPROC_EXCEEDED of current, exit_signals() sets PF_EXITING):
	 * either value of the word has the @flag that the task has now.
	 */
	return data_race(current->flags & flag);
}

/* Whether we interrupted, or are, the idle task of this CPU. Any context. */
static inline bool blitz_on_idle_task(void)
{
	return blitz_current_has(PF_IDLE);
}

/*
 * The worker the per-CPU hint names as the caller, or NULL: in task
 * context, a worker that ran a job since any other worker ran on its CPU
 * (blitz_execute() sets the hint), or looked itself up since. A user
 * task is no worker, and does not look: design.rst, "Which worker is
 * running", has what a tight loop of blitz_submit() measured with and
 * without the look.
 */
static inline struct blitz_worker *blitz_hinted_worker(void)
{
	struct blitz_forks *forks;

	if (!blitz_current_has(PF_KTHREAD))
		return NULL;
	forks = __blitz_hinted_forks();
	/* The forks come first in a worker: NULL stays NULL. */
	BUILD_BUG_ON(offsetof(struct blitz_worker, forks));
	return container_of(forks, struct blitz_worker, forks);
}

/*
 * The worker running the caller, if the caller is one, in task context:
 * an interrupt that lands on a worker is not the worker. The hint names
 * it, unless another worker ran on this CPU since, or it moved: then a
 * kthread asks itself (worker.c); a user task is no worker.
 */
static inline struct blitz_worker *blitz_current_worker(void)
{
	struct blitz_worker *w = blitz_hinted_worker();

	if (likely(w) || !in_task() || !blitz_current_has(PF_KTHREAD))
		return w;
	return blitz_hint_lookup();
}

static inline void blitz_stat_add(struct blitz_worker *w, enum blitz_stat s,
				  unsigned int n)
{
	/*
	 * The owner writes, its notifier, and its share timer, which alone
	 * writes its own counter. debugfs reads with READ_ONCE().
	 */
	WRITE_ONCE(w->stats[s], w->stats[s] + n);
}

/*
 * The workers to look at: [0, nr_slots) of the pool's, spares included.
 * Acquire: pairs with the manager's release (blitz_spare_create()), so
 * every slot below is set up.
 */
static inline unsigned int blitz_nr_slots(struct blitz_pool *pool)
{
	/* Pairs with smp_store_release() in blitz_spare_create(). */
	return smp_load_acquire(&pool->nr_slots);
}

static inline void blitz_stat_inc(struct blitz_worker *w, enum blitz_stat s)
{
	blitz_stat_add(w, s, 1);
}

/*
 * The first bit set in [@from, @to) of @map, a bitmap that others change
 * with atomic bit operations, or @to. A lockless snapshot, word by word.
 */
static inline unsigned int blitz_next_bit(const unsigned long *map,
					  unsigned int from, unsigned int to)
{
	unsigned int k = BIT_WORD(from);
	unsigned long word;

	if (from >= to)
		return to;
	word = READ_ONCE(map[k]) & BITMAP_FIRST_WORD_MASK(from);
	while (!word) {
		if (++k >= BITS_TO_LONGS(to))
			return to;
		word = READ_ONCE(map[k]);
	}
	return min(k * BITS_PER_LONG + __ffs(word), to);
}

/* pool.c */
void blitz_requeue(struct blitz_worker *w, struct blitz_job *job);

/* promote.c */
extern unsigned int blitz_share_interval_us;
void blitz_share_init(struct blitz_worker *w);
void blitz_share_exit(struct blitz_worker *w);
void __blitz_share_idle(struct blitz_worker *w);
void blitz_ask(struct blitz_worker *asker, struct blitz_worker *v);
void blitz_ask_busy(struct blitz_worker *w);
bool blitz_loop_slow(struct blitz_worker *w);
void blitz_promote(struct blitz_worker *w);
bool blitz_promote_switched_out(struct blitz_worker *w);
void blitz_post_frames(struct blitz_worker *w);
unsigned int __blitz_segment_open(struct blitz_worker *w);

/* join.c */
void blitz_join_stolen(struct blitz_job *job);
void blitz_join_promoted(struct blitz_worker *w, struct blitz_join_frame *f,
			 unsigned int i);

/**
 * struct blitz_loop - a parallel loop, with or without an accumulator
 * @body: runs [lo, hi), folding it into acc if the loop has one
 * @init: sets up an accumulator, or NULL for a loop without
 * @combine: folds the accumulator of the range to the right into acc
 * @chunk: the longest range @body is given; 0 to choose
 */
struct blitz_loop {
	void (*body)(struct blitz_loop *loop, unsigned long lo,
		     unsigned long hi, void *acc);
	void (*init)(struct blitz_loop *loop, void *acc);
	void (*combine)(struct blitz_loop *loop, void *acc, const void *right);
	unsigned long chunk;
};

/* loop.c */
void blitz_loop_run(struct blitz_worker *w, struct blitz_loop *loop,
		    unsigned long lo, unsigned long hi, void *acc);
int blitz_loop(struct blitz_loop *loop, unsigned long start,
	       unsigned long end, void *acc);

/* group.c */
void blitz_group_job_start(struct blitz_worker *w, struct blitz_group *group);
void blitz_group_job_end(struct blitz_worker *w, struct blitz_group *group);
void blitz_group_done(struct blitz_group *group);

/* pool.c */
int blitz_submit_group(struct blitz_pool *pool, struct blitz_job *job,
		       struct blitz_group *group);
struct blitz_worker *blitz_worker_alloc(struct blitz_pool *pool,
					unsigned int i, int cpu);
int blitz_worker_create(struct blitz_worker *w);
void blitz_worker_bind(struct blitz_worker *w);
int blitz_hotplug_init(void);
void blitz_hotplug_exit(void);

/* cm.c */
extern unsigned int blitz_max_spares;
extern unsigned int blitz_spare_idle_ms;
void blitz_cm_init(void);
void blitz_cm_exit(void);
int blitz_cm_pool_init(struct blitz_pool *pool);
void blitz_cm_pool_stop(struct blitz_pool *pool);
void blitz_cm_pool_exit(struct blitz_pool *pool);
void blitz_cm_worker_init(struct blitz_worker *w);
void blitz_cm_start(struct blitz_worker *w);
void blitz_cm_stop(struct blitz_worker *w);
bool blitz_spare_wait(struct blitz_worker *w);
bool blitz_spare_leave(struct blitz_worker *w);
void blitz_spare_stopping(struct blitz_worker *w);
void blitz_spare_doze(struct blitz_worker *w, bool doze);

/* Whether spare @w is not needed: another worker runs on its CPU. */
static inline bool blitz_spare_surplus(struct blitz_worker *w)
{
	return atomic_read(&per_cpu_ptr(w->pool->cm, w->cpu)->nr_running) > 1;
}

/*
 * The worker starts or stops being counted idle: with preemption off, so
 * that its notifier never sees the count and the state disagree.
 */
static inline void blitz_cm_looking(struct blitz_worker *w, bool looking)
{
	lockdep_assert_preemption_disabled();
	WRITE_ONCE(w->cm, looking ? BLITZ_CM_LOOKING : BLITZ_CM_RUNNING);
}

/* debugfs.c */
void blitz_debugfs_init(void);
void blitz_debugfs_exit(void);
int blitz_debugfs_add_pool(struct blitz_pool *pool);
void blitz_debugfs_remove_pool(struct blitz_pool *pool);

#endif /* _BLITZ_H */
