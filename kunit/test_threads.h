/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the blitz KUnit suites: a group of kthreads released
 * together from a start line, and the thread counts the concurrent cases
 * are parametrised over.
 */
#ifndef _BLITZ_TEST_THREADS_H
#define _BLITZ_TEST_THREADS_H

#include <kunit/test.h>
#include <linux/atomic.h>

#define BLITZ_TEST_MAX_THREADS	8

struct blitz_test_threads {
	struct task_struct *task[BLITZ_TEST_MAX_THREADS];
	int nr;
	atomic_t waiting;
};

/*
 * Start @nr kthreads running @fn(@arg[i]). Each of them, and the caller
 * too, must call blitz_test_start_line() before racing. Returns 0 or a
 * negative errno.
 */
int blitz_test_threads_run(struct blitz_test_threads *t, int nr,
			   int (*fn)(void *), void **arg);

/* Wait for every thread to return; returns the first non-zero result. */
int blitz_test_threads_join(struct blitz_test_threads *t);

/* Returns once all of @t's threads and their starter have arrived. */
void blitz_test_start_line(struct blitz_test_threads *t);

/* Parameters: a thread count, described as "threads=N". */
extern const int blitz_test_thread_counts[4];
void blitz_test_thread_count_desc(const int *nr, char *desc);

/* Lets a spinning test thread make progress on one CPU (UML). */
static inline void blitz_test_relax(void)
{
	cpu_relax();
	cond_resched();
}

#endif /* _BLITZ_TEST_THREADS_H */
