// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own sort() KUnit cases, lib/test_sort.c, unchanged, run
 * against blitz_sort(): a test suite nobody here wrote. kunit/Kbuild adds
 * the tree's lib/ to the include path.
 */
#include <linux/blitz.h>

#define sort blitz_sort
#include "test_sort.c"
