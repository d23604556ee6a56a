// SPDX-License-Identifier: GPL-2.0
/*
 * Stack helpers for the blitz KUnit suites.
 */
#include <linux/compiler.h>
#include <linux/string.h>

#include "test_stack.h"

void blitz_test_stack_descend(unsigned long left, void (*fn)(void *arg),
			      void *arg)
{
	/* Small steps: the call ends up at most a frame below @left. */
	char pad[64];

	memset(pad, 0, sizeof(pad));
	barrier_data(pad);
	if (blitz_test_stack_left() > left)
		blitz_test_stack_descend(left, fn, arg);
	else
		fn(arg);
	/* Used after the call: the recursion is not a tail call. */
	barrier_data(pad);
}
