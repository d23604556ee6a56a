/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitztorture: what the torture module and its KUnit driver share.
 */
#ifndef _BLITZ_TORTURE_H
#define _BLITZ_TORTURE_H

#include <linux/types.h>

/* Operation classes, a bit each in blitz_torture_params.ops. */
enum blitz_torture_op {
	BT_SUBMIT,	/* submits from kthreads; jobs that sleep or lock */
	BT_JOIN,	/* join trees, from outside and inside a pool */
	BT_FOR,		/* parallel_for, every index exactly once */
	BT_CALL,	/* calls across one-worker pools */
	BT_MUTEX,	/* joins and loops under a mutex jobs also take */
	BT_DEEP,	/* deep joins that submit; the job stack reserve */
	BT_GROUP,	/* group waits in a join whose b may be promoted */
	BT_WAIT,	/* jobs that wait for later jobs, or for a's group */
	BT_IRQ,		/* submits from hardirq and softirq */
	BT_CHURN,	/* pools created and destroyed under submitters */
	BT_HOTPLUG,	/* CPUs taken offline and online */
	BT_NR_OPS,
};

struct blitz_torture_params {
	unsigned int duration;		/* seconds */
	unsigned int nthreads;		/* 0: two per online CPU */
	unsigned long ops;		/* BIT(enum blitz_torture_op) mask */
	unsigned int max_latency_ms;	/* a job waiting longer is an anomaly */
};

int blitz_torture_run(const struct blitz_torture_params *p, char *summary,
		      size_t len);

#endif /* _BLITZ_TORTURE_H */
