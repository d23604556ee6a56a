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

#include <linux/llist.h>
#include <linux/types.h>

/**
 * struct blitz_job - a unit of work, embedded in the caller's object
 * @node: private: linkage on a pool's injection list
 * @state: private: BLITZ_JOB_PENDING while queued and not yet started
 * @func: the function to run; it receives the job, and container_of()
 *	  leads back to the caller's object
 *
 * Initialise with BLITZ_JOB_INIT() or blitz_job_init(). Once @func has
 * started, the job belongs to its owner again: @func may resubmit or free it.
 */
struct blitz_job {
	struct llist_node node;
	unsigned long state;
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

#endif /* _LINUX_BLITZ_H */
