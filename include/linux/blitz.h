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
 * @name: private: what lockdep calls the group
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
 * BLITZ_GROUP_INIT - static initialiser for a &struct blitz_group
 * @_name: the group variable's name
 * @_pool: the pool its jobs run in, or NULL for the default pool
 *
 * For a group in static storage; one on the stack takes blitz_group_init().
 */
#ifdef CONFIG_LOCKDEP
#define BLITZ_GROUP_INIT(_name, _pool) {			\
	.pool = (_pool),					\
	.pending = ATOMIC_LONG_INIT(0),				\
	.name = #_name,						\
	.lockdep_map = { .name = #_name },			\
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
void blitz_pool_destroy(struct blitz_pool *pool);
int blitz_call(struct blitz_pool *pool, void (*fn)(void *arg), void *arg);
void blitz_join(void (*a)(void *arg), void *a_arg,
		void (*b)(void *arg), void *b_arg);
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

#endif /* _LINUX_BLITZ_H */
