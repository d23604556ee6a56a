/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitztorture: what the torture module and its callers (the KUnit suite)
 * share. See torture/blitz_torture.c and Documentation/blitz/testing.rst.
 */
#ifndef _BLITZ_TORTURE_H
#define _BLITZ_TORTURE_H

#include <linux/bits.h>
#include <linux/types.h>

/**
 * enum blitz_torture_op - operation classes, a bit each in
 *			   &blitz_torture_params.ops
 * @BT_SUBMIT: blitz_submit() from torture kthreads, and from jobs
 *	(jobs that submit a child job), to the default and torture pools;
 *	resubmits of queued jobs (-EBUSY)
 * @BT_IRQ: blitz_submit() from a hardirq hrtimer and a softirq timer
 * @BT_JOIN: blitz_join() trees of random depth, from kthreads (the default
 *	pool), inside blitz_call() and inside jobs; parallel loops in leaves
 * @BT_FOR: blitz_parallel_for() of random length and grain (0 included),
 *	from kthreads, inside blitz_call() and inside jobs; joins in ranges
 * @BT_CALL: call chains A, B, A, ... through blitz_call() across two pools
 *	(two pools of one worker, or two multi-worker pools), from kthreads
 *	and from jobs of A
 * @BT_CHURN: pools created, hammered with blitz_submit() from kthreads and
 *	a hardirq hrtimer, and destroyed under them
 * @BT_SLEEP: jobs that sleep briefly (usleep_range(), msleep(1))
 * @BT_MUTEX: jobs that take a mutex, and jobs and blitz_call() functions
 *	that join or loop while holding it
 * @BT_DEEP: chains of nested joins down to a quarter of the stack,
 *	submitting a job every 16 levels
 * @BT_HOTPLUG: CPUs other than CPU 0 taken offline and online
 * @BT_NR_OPS: the number of classes
 */
enum blitz_torture_op {
	BT_SUBMIT,
	BT_IRQ,
	BT_JOIN,
	BT_FOR,
	BT_CALL,
	BT_CHURN,
	BT_SLEEP,
	BT_MUTEX,
	BT_DEEP,
	BT_HOTPLUG,
	BT_NR_OPS,
};

/* Every class. */
#define BLITZ_TORTURE_ALL_OPS	GENMASK(BT_NR_OPS - 1, 0)

/* Room for the summary line. */
#define BLITZ_TORTURE_SUMMARY_LEN	512

/**
 * struct blitz_torture_params - what blitz_torture_run() runs
 * @duration: seconds of random operations
 * @nthreads: torture kthreads; 0 for two per online CPU
 * @ops: operation classes, BIT() of &enum blitz_torture_op each
 * @max_latency_ms: a job that starts later than this after its submit is an
 *	anomaly; 0 for 10000
 * @grace: seconds after @duration for every operation and job to finish;
 *	what has not by then is stuck (a deadlock or a lost wake-up); 0 for 60
 */
struct blitz_torture_params {
	unsigned int duration;
	unsigned int nthreads;
	unsigned long ops;
	unsigned int max_latency_ms;
	unsigned int grace;
};

int blitz_torture_run(const struct blitz_torture_params *p, char *summary,
		      size_t len);

#endif /* _BLITZ_TORTURE_H */
