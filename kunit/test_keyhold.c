// SPDX-License-Identifier: GPL-2.0
/*
 * Test harness only: the preempt notifiers' static key, turned on before
 * the other CPUs start and held. blitz, built in, turns it on in its
 * init, after them: a text patch of the scheduler, which QEMU 7.2's
 * multi-threaded TCG now and then mis-executes (an emulator bug:
 * Documentation/blitz/testing.rst). Before SMP, nothing runs the code
 * being patched; then blitz's own turn of the key patches nothing.
 */
#include <linux/init.h>
#include <linux/preempt.h>

static int __init blitz_test_keyhold(void)
{
	preempt_notifier_inc();
	return 0;
}
early_initcall(blitz_test_keyhold);
