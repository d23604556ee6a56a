/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fib(n) with blitz_join() at every node, and plain recursion to check it
 * against: the fork-join workload shared by the KUnit suites, the guest
 * selftests and the benchmarks.
 */
#ifndef _BLITZ_FIB_H
#define _BLITZ_FIB_H

#include <linux/blitz.h>

struct fib {
	unsigned int n;
	unsigned long result;
};

static inline unsigned long fib_plain(unsigned int n)
{
	return n < 2 ? n : fib_plain(n - 1) + fib_plain(n - 2);
}

/* For blitz_join() and blitz_call(): @arg is a struct fib. */
static inline void fib_join(void *arg)
{
	struct fib *f = arg;
	struct fib a = { f->n - 1 }, b = { f->n - 2 };

	if (f->n < 2) {
		f->result = f->n;
		return;
	}
	blitz_join(fib_join, &a, fib_join, &b);
	f->result = a.result + b.result;
}

#endif /* _BLITZ_FIB_H */
