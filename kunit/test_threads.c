// SPDX-License-Identifier: GPL-2.0
/*
 * Thread helpers for the blitz KUnit suites.
 */
#include <linux/blitz.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>

#include "test_threads.h"

const int blitz_test_thread_counts[4] = { 1, 2, 3, BLITZ_TEST_MAX_THREADS - 1 };

void blitz_test_thread_count_desc(const int *nr, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "threads=%d", *nr);
}

int blitz_test_threads_run(struct blitz_test_threads *t, int nr,
			   int (*fn)(void *), void **arg)
{
	struct task_struct *task;
	int i;

	if (WARN_ON(nr > BLITZ_TEST_MAX_THREADS))
		return -EINVAL;
	t->nr = 0;
	atomic_set(&t->waiting, nr + 1);
	for (i = 0; i < nr; i++) {
		task = kthread_create(fn, arg[i], "blitz_test/%d", i);
		if (IS_ERR(task))
			break;
		/* Keep the task around until join, even after fn returns. */
		get_task_struct(task);
		t->task[t->nr++] = task;
	}
	if (t->nr < nr) {
		/* Threads not started never run fn: release the line. */
		atomic_sub(nr - t->nr, &t->waiting);
	}
	for (i = 0; i < t->nr; i++)
		wake_up_process(t->task[i]);
	return t->nr == nr ? 0 : -ENOMEM;
}

int blitz_test_threads_join(struct blitz_test_threads *t)
{
	int i, ret, first = 0;

	for (i = 0; i < t->nr; i++) {
		ret = kthread_stop(t->task[i]);
		put_task_struct(t->task[i]);
		if (ret && !first)
			first = ret;
	}
	t->nr = 0;
	return first;
}

void blitz_test_start_line(struct blitz_test_threads *t)
{
	atomic_dec(&t->waiting);
	while (atomic_read(&t->waiting) > 0)
		blitz_test_relax();
}

MODULE_DESCRIPTION("KUnit tests for blitz");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
