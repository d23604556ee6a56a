// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite that runs blitztorture (torture/) with the race windows on:
 * in UML with KASAN, and on x86_64 with KCSAN and lockdep at -smp 4, where
 * CPU hotplug is part of the mix.
 */
#include <kunit/test.h>
#include <linux/bits.h>

#include "../blitz_kmod/blitz.h"
#include "../torture/blitz_torture.h"

#define TORTURE_SUMMARY	512

static void torture_test_run(struct kunit *test)
{
	struct blitz_torture_params p = {
		.duration = IS_ENABLED(CONFIG_UML) ? 15 : 40,
		.ops = GENMASK(BT_NR_OPS - 1, 0),
	};
	char *summary = kunit_kzalloc(test, TORTURE_SUMMARY, GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, summary);
	static_branch_enable(&blitz_race_key);
	ret = blitz_torture_run(&p, summary, TORTURE_SUMMARY);
	static_branch_disable(&blitz_race_key);
	kunit_info(test, "%s", summary);
	KUNIT_EXPECT_EQ(test, ret, 0);
}

static struct kunit_case torture_test_cases[] = {
	KUNIT_CASE_SLOW(torture_test_run),
	{}
};

static struct kunit_suite torture_test_suite = {
	.name = "blitz_torture",
	.test_cases = torture_test_cases,
};

kunit_test_suite(torture_test_suite);
