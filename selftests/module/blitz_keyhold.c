// SPDX-License-Identifier: GPL-2.0
/*
 * Test harness only: holds the preempt notifiers' static key on while it
 * is loaded. tools/guest-run loads it before the test starts, and never
 * unloads it. Turning the key on or off patches the scheduler's text,
 * which QEMU 7.2's multi-threaded TCG now and then mis-executes (an
 * emulator bug: Documentation/blitz/testing.rst); held on, loading and
 * unloading blitz patches nothing, and a boot that hits the bug here is
 * booted again, as one that hits it anywhere before the test. Not for
 * real kernels: it costs every context switch a look at an empty list.
 */
#include <linux/module.h>
#include <linux/preempt.h>

static int __init blitz_keyhold_init(void)
{
	preempt_notifier_inc();
	return 0;
}

static void __exit blitz_keyhold_exit(void)
{
	preempt_notifier_dec();
}

module_init(blitz_keyhold_init);
module_exit(blitz_keyhold_exit);

MODULE_DESCRIPTION("blitz test harness: the preempt notifiers' key held on");
MODULE_LICENSE("GPL");
