/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack helpers for the blitz KUnit suites: run a function with little
 * of the thread stack left, and see how much is left.
 */
#ifndef _BLITZ_TEST_STACK_H
#define _BLITZ_TEST_STACK_H

#include <linux/sched/task_stack.h>

/* Stack left below the caller's frame. */
static __always_inline unsigned long blitz_test_stack_left(void)
{
	return (unsigned long)__builtin_frame_address(0) -
	       (unsigned long)task_stack_page(current);
}

/* Use stack until at most @left is left, then call @fn(@arg). */
void blitz_test_stack_descend(unsigned long left, void (*fn)(void *arg),
			      void *arg);

#endif /* _BLITZ_TEST_STACK_H */
