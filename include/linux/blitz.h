/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz: a work-stealing executor for kernel code.
 *
 * The public contract. Other modules build against these names; their
 * meaning is fixed. The exported functions are documented where they are
 * defined, in blitz_kmod/; Documentation/blitz/api.rst collects it all.
 */
#ifndef _LINUX_BLITZ_H
#define _LINUX_BLITZ_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/llist.h>
#include <linux/lockdep_types.h>
#include <linux/types.h>
#include <linux/version.h>

/*
 * blitz exports its functions in a symbol namespace: a client module
 * writes MODULE_IMPORT_NS(BLITZ_NS). The namespace is named BLITZ; since
 * Linux 6.13 the macros take it as a string literal, before as a bare
 * identifier.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define BLITZ_NS	"BLITZ"
#else
#define BLITZ_NS	BLITZ
#endif

struct blitz_group;
struct cpumask;

/**
 * struct blitz_pool_attrs - what blitz_pool_create_attrs() makes a pool of
 * @nr_workers: the number of workers; 0 for one per online CPU of @cpumask
 * @nice: the workers' nice value, -20..19
 * @cpumask: the CPUs the workers run on; NULL for the housekeeping CPUs,
 *	     those the workqueue runs unbound work on (not isolcpus= or
 *	     nohz_full= CPUs)
 * @flags: BLITZ_POOL_* flags
 */
struct blitz_pool_attrs {
	unsigned int nr_workers;
	int nice;
	const struct cpumask *cpumask;
	unsigned int flags;
};

/* The workers freeze with the system freezer (suspend, hibernation). */
#define BLITZ_POOL_FREEZABLE	BIT(0)

/**
 * struct blitz_job - a unit of work, embedded in the caller's object
 * @node: private: linkage on a pool's injection list
 * @state: private: BLITZ_JOB_PENDING while queued and not yet started
 * @group: private: the group the job was submitted to, or NULL
 * @func: the function to run; it receives the job, and container_of()
 *	  leads back to the caller's object
 *
 * Initialise with BLITZ_JOB_INIT() or blitz_job_init(). Once @func has
 * started, the job belongs to its owner again: @func may resubmit or free it.
 */
struct blitz_job {
	struct llist_node node;
	unsigned long state;
	struct blitz_group *group;
	void (*func)(struct blitz_job *job);
};

/* Bit in &blitz_job.state; private to blitz. */
#define BLITZ_JOB_PENDING	0

/**
 * BLITZ_JOB_INIT - static initialiser for a &struct blitz_job
 * @fn: the function the job runs
 */
#define BLITZ_JOB_INIT(fn)	{ .func = (fn) }

/**
 * blitz_job_init - initialise a &struct blitz_job at run time
 * @job: the job
 * @func: the function the job runs
 *
 * Context: any. Must not be called on a job that is queued.
 */
static inline void blitz_job_init(struct blitz_job *job,
				  void (*func)(struct blitz_job *job))
{
	*job = (struct blitz_job)BLITZ_JOB_INIT(func);
}

struct blitz_pool;

/**
 * struct blitz_group - jobs to wait for, or to call off, together
 * @pool: private: where the group's jobs run
 * @pending: private: jobs submitted and not yet run or skipped
 * @flags: private: BLITZ_GROUP_CANCELLED once blitz_group_cancel() ran
 * @name: private: the group's name; lockdep's name for the class of a
 *	  blitz_group_init() call site (BLITZ_GROUP_INIT()'s groups share one)
 * @lockdep_map: private: lets lockdep see a wait that cannot end
 *
 * Owned by the caller, usually on its stack. Initialise with
 * BLITZ_GROUP_INIT() or blitz_group_init(); nothing needs tearing down.
 */
struct blitz_group {
	struct blitz_pool *pool;
	atomic_long_t pending;
	unsigned long flags;
	const char *name;
	struct lockdep_map lockdep_map;
};

/* Bit in &blitz_group.flags; private to blitz. */
#define BLITZ_GROUP_CANCELLED	0

/**
 * struct blitz_group_class - the lock class of BLITZ_GROUP_INIT()'s groups
 * @key: the class's lockdep key
 * @name: the class's name: lockdep wants one name for a key, the same
 *	  pointer wherever the key is used
 *
 * Private to blitz, which defines the one instance.
 */
struct blitz_group_class {
	struct lock_class_key key;
	char name[sizeof("BLITZ_GROUP_INIT")];
};

extern struct blitz_group_class blitz_group_static_class;

/**
 * BLITZ_GROUP_INIT - static initialiser for a &struct blitz_group
 * @_name: the group variable's name
 * @_pool: the pool its jobs run in, or NULL for the default pool
 *
 * For a group in static storage or on the stack. Groups so initialised
 * share one lock class; blitz_group_init() gives each call site its own.
 */
#ifdef CONFIG_LOCKDEP
#define BLITZ_GROUP_INIT(_name, _pool) {			\
	.pool = (_pool),					\
	.pending = ATOMIC_LONG_INIT(0),				\
	.name = #_name,						\
	.lockdep_map =						\
		STATIC_LOCKDEP_MAP_INIT(blitz_group_static_class.name,	\
					&blitz_group_static_class.key), \
}
#else
#define BLITZ_GROUP_INIT(_name, _pool) {			\
	.pool = (_pool),					\
	.pending = ATOMIC_LONG_INIT(0),				\
	.name = #_name,						\
}
#endif

void __blitz_group_init(struct blitz_group *group, struct blitz_pool *pool,
			const char *name, struct lock_class_key *key);

/**
 * blitz_group_init - initialise a &struct blitz_group at run time
 * @group: the group
 * @pool: the pool its jobs run in, or NULL for the default pool
 *
 * Each call site is a lock class of its own to lockdep, as INIT_WORK()'s
 * are. Context: any. Not on a group whose jobs are pending.
 */
#ifdef CONFIG_LOCKDEP
#define blitz_group_init(group, pool)					\
do {									\
	static struct lock_class_key __key;				\
									\
	__blitz_group_init((group), (pool), #group, &__key);		\
} while (0)
#else
#define blitz_group_init(group, pool)					\
	__blitz_group_init((group), (pool), #group, NULL)
#endif

/* The largest accumulator blitz_parallel_reduce() takes, in bytes. */
#define BLITZ_REDUCE_MAX	128

int blitz_submit(struct blitz_pool *pool, struct blitz_job *job);
struct blitz_pool *blitz_pool_create(const char *name, unsigned int nr_workers);
struct blitz_pool *blitz_pool_create_attrs(const char *name,
					   const struct blitz_pool_attrs *attrs);
void blitz_pool_destroy(struct blitz_pool *pool);
int blitz_call(struct blitz_pool *pool, void (*fn)(void *arg), void *arg);
int blitz_parallel_for(unsigned long start, unsigned long end,
		       unsigned long grain,
		       void (*fn)(unsigned long lo, unsigned long hi, void *arg),
		       void *arg);
int blitz_group_submit(struct blitz_group *group, struct blitz_job *job);
int blitz_group_wait(struct blitz_group *group);
void blitz_group_cancel(struct blitz_group *group);
int blitz_parallel_reduce(unsigned long start, unsigned long end,
			  unsigned long grain, void *result, size_t size,
			  void (*init)(void *acc, void *arg),
			  void (*fn)(unsigned long lo, unsigned long hi,
				     void *acc, void *arg),
			  void (*combine)(void *acc, const void *right, void *arg),
			  void *arg);
void blitz_sort(void *base, size_t num, size_t size,
		cmp_func_t cmp, swap_func_t swap);

/* The inline join's machinery, private to blitz. */
#include <linux/blitz_fork.h>

/**
 * blitz_join - run two functions, possibly in parallel
 * @a: the first function, run by the caller
 * @a_arg: its argument
 * @b: the second function, offered to other workers
 * @b_arg: its argument
 *
 * Returns when both @a and @b have returned. Inside a worker, @a runs
 * inline, and @b runs inline after it unless another worker took it
 * meanwhile. @b is offered to other workers lazily, when one of them
 * wants work: at a later fork of the caller (a join or parallel loop in
 * @a), or when the caller is switched out in @a, blocked or preempted.
 * So a join that nobody needs costs a few plain loads and stores around
 * the two calls, and @a may wait for @b to run, by sleeping: a blocked
 * worker's CPU gets a spare worker, which takes @b if nobody else does.
 * An @a that spins without forking keeps @b to itself. While a stolen @b runs
 * elsewhere, the caller runs only work that descends from @b (joins @b
 * makes), or sleeps: never an unrelated job, so the caller may hold a
 * lock that other jobs take. Jobs that @a submits are not run by the
 * join: they run later, like any submitted job. Outside a worker, the
 * whole join runs in the default pool and the caller sleeps until it is
 * done. Joins nest like function calls, on the caller's stack.
 *
 * Inline: in a worker, the fork records @b's frame on the worker's
 * private stack of latent frames with plain stores, and the join finds
 * it still latent with one load, unless a share request or a reschedule
 * is pending at the fork.
 *
 * Context: process context or a blitz job; may sleep.
 */
static __always_inline void blitz_join(void (*a)(void *arg), void *a_arg,
				       void (*b)(void *arg), void *b_arg)
{
	struct blitz_forks *forks = __blitz_hinted_forks();

	if (unlikely(!forks || forks->depth >= BLITZ_LATENT_MAX))
		__blitz_join_slow(a, a_arg, b, b_arg);
	else
		__blitz_join(forks, a, a_arg, b, b_arg);
}

#endif /* _LINUX_BLITZ_H */
