// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for latent join frames and their promotion (promote.c): which
 * frame a request promotes, what happens to it then, who asks, and that an
 * idle pool arms no timer.
 *
 * Most cases run in a pool of one worker, where nobody but the test asks:
 * a case makes its request by writing BLITZ_SHARE_ASK in the worker's
 * share word, as a thief does, and the next fork acts on it.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>

#include "../blitz_kmod/blitz.h"
#include "../selftests/fib.h"
#include "test_threads.h"

#define SHARE_DEPTH	3

static u64 share_stat(struct blitz_worker *w, enum blitz_stat s)
{
	return READ_ONCE(w->stats[s]);
}

/* Request a promotion of @w, as blitz_ask() does, without counting it. */
static void share_ask(struct blitz_worker *w)
{
	WRITE_ONCE(w->forks.share, BLITZ_SHARE_ASK);
}

/* Ask the current worker, as a thief would, and fork so that it acts. */
static void share_ask_self(void)
{
	share_ask(blitz_current_worker());
	blitz_join(fib_join, &(struct fib){ 2 }, fib_join, &(struct fib){ 1 });
}

/* === Which frame, and what becomes of it === */

struct nest {
	struct kunit *test;
	struct blitz_worker *w;
	/* per level: b ran, and on which worker */
	int b_ran[SHARE_DEPTH];
	struct blitz_worker *b_worker[SHARE_DEPTH];
	/* what the deepest a saw */
	unsigned int published, depth;
	bool oldest_first;
	/* switched out among the asks: its notifier promoted every frame */
	bool switched;
	unsigned int asks;
};

struct nest_level {
	struct nest *n;
	int level;
};

static void nest_b(void *arg)
{
	struct nest_level *l = arg;

	l->n->b_ran[l->level]++;
	l->n->b_worker[l->level] = blitz_current_worker();
}

/*
 * Level i joins (level i + 1, b_i). The deepest a makes n->asks requests,
 * forking after each, and records the promoted prefix.
 */
static void nest_a(void *arg)
{
	struct nest_level *l = arg, deeper = { l->n, l->level + 1 };
	struct nest *n = l->n;
	struct blitz_worker *w = blitz_current_worker();
	unsigned long csw;
	unsigned int i;

	if (l->level + 1 < SHARE_DEPTH) {
		blitz_join(nest_a, &deeper, nest_b, &deeper);
		return;
	}
	n->w = w;
	csw = current->nvcsw + current->nivcsw;
	for (i = 0; i < n->asks; i++)
		share_ask_self();
	n->published = w->forks.published;
	n->depth = w->forks.depth;
	n->switched = current->nvcsw + current->nivcsw != csw;
	/* The promoted frames are the oldest, in order, bottom to top. */
	n->oldest_first = true;
	for (i = 0; i < n->published; i++)
		n->oldest_first &=
			blitz_deque_job(w->deque.slots[(w->deque.top + i) &
						       BLITZ_DEQUE_MASK]) ==
			&w->forks.latent[i]->job;
}

static void nest_root(void *arg)
{
	struct nest_level l = { arg, -1 };

	nest_a(&l);
}

static struct blitz_pool *share_pool_one(struct kunit *test, const char *name)
{
	struct blitz_pool *pool = blitz_pool_create(name, 1);

	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	return pool;
}

/*
 * Run the nested joins in a new pool of one worker, again while the
 * worker was switched out among its asks (a preemption at the fork's
 * cond_resched(), for one), up to 10 times.
 */
static struct blitz_pool *nest_run(struct kunit *test, const char *name,
				   struct nest *n)
{
	struct nest init = *n;
	struct blitz_pool *pool;
	int tries = 1;

	for (;;) {
		pool = share_pool_one(test, name);
		KUNIT_EXPECT_EQ(test, blitz_call(pool, nest_root, n), 0);
		if (!n->switched || tries++ == 10)
			break;
		blitz_pool_destroy(pool);
		*n = init;
	}
	KUNIT_EXPECT_FALSE_MSG(test, n->switched,
			       "switched out among the asks 10 times");
	return pool;
}

/*
 * One request, made below three open joins, promotes the outermost frame:
 * the oldest. With nobody to steal it, its join pops it back and runs b,
 * once, on the joiner.
 */
static void share_test_oldest_first(struct kunit *test)
{
	struct nest n = { .test = test, .asks = 1 };
	struct blitz_pool *pool = nest_run(test, "kunit-oldest", &n);
	int i;

	KUNIT_EXPECT_EQ(test, n.published, 1U);
	/* Three levels; the request's own fork has closed. */
	KUNIT_EXPECT_EQ(test, n.depth, (unsigned int)SHARE_DEPTH);
	KUNIT_EXPECT_TRUE(test, n.oldest_first);
	for (i = 0; i < SHARE_DEPTH; i++) {
		KUNIT_EXPECT_EQ(test, n.b_ran[i], 1);
		KUNIT_EXPECT_PTR_EQ(test, n.b_worker[i], n.w);
	}
	KUNIT_EXPECT_EQ(test, share_stat(n.w, BLITZ_STAT_PROMOTED), 1ULL);
	KUNIT_EXPECT_TRUE(test, blitz_deque_empty(&n.w->deque));
	blitz_pool_destroy(pool);
}

/*
 * Requests with no cooldown promote a frame each, oldest first: nested
 * joins, all promoted, none stolen; each is popped back, its b run once,
 * and the deque is empty after. The last request finds only its own
 * fork's frame latent, and promotes that.
 */
static void share_test_nested_promoted(struct kunit *test)
{
	struct nest n = { .test = test, .asks = SHARE_DEPTH + 1 };
	unsigned int interval = blitz_share_interval_us;
	struct blitz_pool *pool;
	int i;

	blitz_share_interval_us = 0;
	pool = nest_run(test, "kunit-nested", &n);
	blitz_share_interval_us = interval;
	KUNIT_EXPECT_EQ(test, n.published, (unsigned int)SHARE_DEPTH);
	KUNIT_EXPECT_TRUE(test, n.oldest_first);
	for (i = 0; i < SHARE_DEPTH; i++)
		KUNIT_EXPECT_EQ(test, n.b_ran[i], 1);
	KUNIT_EXPECT_EQ(test, share_stat(n.w, BLITZ_STAT_PROMOTED),
			(u64)n.asks);
	KUNIT_EXPECT_TRUE(test, blitz_deque_empty(&n.w->deque));
	blitz_pool_destroy(pool);
}

/*
 * Within the cooldown a request arms the share timer instead; at its end
 * the timer renews the request only if someone could take a frame: in a
 * pool of one worker nobody can, and the word goes back to 0.
 */
static void share_cooldown_root(void *arg)
{
	struct blitz_worker *w = blitz_current_worker();
	unsigned long *seen = arg;

	share_ask_self();		/* promotes */
	share_ask_self();		/* within the cooldown */
	seen[0] = READ_ONCE(w->forks.share);
	seen[1] = hrtimer_active(&w->share_timer);
	while (READ_ONCE(w->forks.share) == BLITZ_SHARE_WAIT)
		blitz_test_relax();
	seen[2] = READ_ONCE(w->forks.share);
}

static void share_test_cooldown(struct kunit *test)
{
	struct blitz_pool *pool = share_pool_one(test, "kunit-cool");
	unsigned int interval = blitz_share_interval_us;
	unsigned long seen[3] = {};
	struct blitz_worker *w = pool->workers[0];

	/* Long enough that the second request falls within it. */
	blitz_share_interval_us = 100000;
	KUNIT_EXPECT_EQ(test, blitz_call(pool, share_cooldown_root, seen), 0);
	blitz_share_interval_us = interval;
	KUNIT_EXPECT_EQ(test, seen[0], (unsigned long)BLITZ_SHARE_WAIT);
	KUNIT_EXPECT_EQ(test, seen[1], 1UL);
	KUNIT_EXPECT_EQ(test, seen[2], 0UL);
	KUNIT_EXPECT_EQ(test, share_stat(w, BLITZ_STAT_PROMOTED), 1ULL);
	blitz_pool_destroy(pool);
}

/*
 * A pool of one worker: nobody asks, the worker never goes cold, nothing
 * is promoted, and every join runs inline.
 */
static void share_test_one_worker(struct kunit *test)
{
	struct blitz_pool *pool = share_pool_one(test, "kunit-share1");
	struct blitz_worker *w = pool->workers[0];
	struct fib f = { 20 };

	KUNIT_EXPECT_EQ(test, blitz_call(pool, fib_join, &f), 0);
	KUNIT_EXPECT_EQ(test, f.result, fib_plain(20));
	KUNIT_EXPECT_EQ(test, share_stat(w, BLITZ_STAT_PROMOTED), 0ULL);
	KUNIT_EXPECT_EQ(test, share_stat(w, BLITZ_STAT_SHARE_REQUESTS), 0ULL);
	KUNIT_EXPECT_EQ(test, share_stat(w, BLITZ_STAT_STOLEN), 0ULL);
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&w->share_timer));
	blitz_pool_destroy(pool);
}

/* === Promoted and stolen === */

struct steal {
	struct blitz_worker *a_worker, *b_worker;
	struct completion b_ran;
	bool ask, leaf, asked_in_leaf, b_in_leaf;
	bool ask_blocked, b_late;
	/* a's task switched out from before the fork to the leaf's end */
	unsigned long csw;
	bool switched;
};

static void steal_b(void *arg)
{
	struct steal *s = arg;

	s->b_worker = blitz_current_worker();
	complete(&s->b_ran);
}

/*
 * With ask, a asks for its own b and forks; with leaf, a first runs a long
 * leaf that neither forks nor can be switched out; with ask_blocked, a
 * clears what its cold start armed and makes one request, which it does
 * not act on: it sleeps at once, for at most 5 s (b_late if b has not run
 * by then). Otherwise a sleeps until b has run. b must be stolen.
 */
static void steal_a(void *arg)
{
	struct steal *s = arg;
	struct blitz_worker *w = blitz_current_worker();
	unsigned long end = jiffies + msecs_to_jiffies(50);

	s->a_worker = w;
	if (s->leaf) {
		preempt_disable();
		while (time_before(jiffies, end))
			cpu_relax();
		s->asked_in_leaf = READ_ONCE(w->forks.share) == BLITZ_SHARE_ASK;

		s->b_in_leaf = completion_done(&s->b_ran);
		s->switched = current->nvcsw + current->nivcsw != s->csw;
		preempt_enable();
		/* The fork after the leaf acts on the request. */
		blitz_join(fib_join, &(struct fib){ 2 }, fib_join,
			   &(struct fib){ 1 });
	}
	if (s->ask)
		share_ask_self();
	if (s->ask_blocked) {
		hrtimer_cancel(&w->share_timer);
		WRITE_ONCE(w->forks.share, 0);
		blitz_ask(w, w);
		/* Late: b runs after we return, inline, and steal_check fails. */
		s->b_late = !wait_for_completion_timeout(&s->b_ran, 5 * HZ);
		return;
	}
	wait_for_completion(&s->b_ran);
}

static void steal_root(void *arg)
{
	struct steal *s = arg;

	s->csw = current->nvcsw + current->nivcsw;
	blitz_join(steal_a, arg, steal_b, arg);
}

/* Workers of @pool counted asleep in its counter word. */
static unsigned int share_sleeping(struct blitz_pool *pool)
{
	return blitz_sleeping(blitz_counters_load(&pool->counters));
}

static struct blitz_pool *share_pool_two(struct kunit *test, const char *name)
{
	struct blitz_pool *pool;

	if (num_online_cpus() < 2)
		kunit_skip(test, "a stolen frame needs two CPUs");
	pool = blitz_pool_create(name, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	return pool;
}

static void steal_check(struct kunit *test, struct blitz_pool *pool,
			struct steal *s)
{
	KUNIT_EXPECT_EQ(test, blitz_call(pool, steal_root, s), 0);
	KUNIT_ASSERT_NOT_NULL(test, s->a_worker);
	KUNIT_EXPECT_PTR_NE(test, s->a_worker, s->b_worker);
	KUNIT_EXPECT_GE(test, share_stat(s->a_worker, BLITZ_STAT_PROMOTED), 1ULL);
	KUNIT_EXPECT_GE(test, share_stat(s->b_worker, BLITZ_STAT_STOLEN), 1ULL);
}

/*
 * A requested promotion is stolen by the other worker, which its post
 * wakes. With no cooldown, the worker that took the call, cold, promotes
 * b at its fork; a asks again, for nothing: b was the only frame.
 */
static void share_test_promoted_stolen(struct kunit *test)
{
	struct blitz_pool *pool = share_pool_two(test, "kunit-stolen");
	unsigned int interval = blitz_share_interval_us;
	struct steal s = { .ask = true };

	init_completion(&s.b_ran);
	blitz_share_interval_us = 0;
	steal_check(test, pool, &s);
	blitz_share_interval_us = interval;
	blitz_pool_destroy(pool);
}

/*
 * No request from a: it sleeps until b has run. b is latent when a
 * blocks; the worker's notifier promotes it as a is switched out, for
 * the other worker to steal.
 */
static void share_test_blocked_a(struct kunit *test)
{
	struct blitz_pool *pool = share_pool_two(test, "kunit-blocked");
	struct steal s = {};

	init_completion(&s.b_ran);
	steal_check(test, pool, &s);
	blitz_pool_destroy(pool);
}

/*
 * One request, made while a runs, which a never acts on: it blocks
 * before any fork. Its notifier promotes b as it is switched out.
 */
static void share_test_asked_blocked(struct kunit *test)
{
	struct blitz_pool *pool = share_pool_two(test, "kunit-askblk");
	struct steal s = { .ask_blocked = true };

	init_completion(&s.b_ran);
	steal_check(test, pool, &s);
	KUNIT_EXPECT_FALSE(test, s.b_late);
	blitz_pool_destroy(pool);
}

/*
 * The worker that took the call goes cold (the other one sleeps), so at
 * its fork it arms the share timer, which asks it to share while it runs
 * a long leaf. The leaf hides b: b has not run when it ends, and the
 * request is pending. The fork after the leaf promotes b, and its post
 * wakes the sleeper, which steals it.
 *
 * Switched out between the fork and the leaf (preempted by a task woken
 * on its CPU, say), a's worker has its notifier promote b, rightly, and b
 * may run in the leaf: the try is made again, in a new pool, up to
 * LEAF_TRIES times.
 */
#define LEAF_TRIES	5

static bool leaf_try(struct kunit *test)
{
	struct blitz_pool *pool = share_pool_two(test, "kunit-leaf");
	struct steal s = { .leaf = true };
	int ms;

	/*
	 * New workers look for work, and ask the busy, before they sleep:
	 * one still looking when the call comes would have b promoted at
	 * the first fork, and stolen in the leaf.
	 */
	for (ms = 0; ms < 5000 && share_sleeping(pool) < 2; ms += 20)
		msleep(20);
	KUNIT_ASSERT_EQ(test, share_sleeping(pool), 2U);
	init_completion(&s.b_ran);
	steal_check(test, pool, &s);
	if (s.switched) {
		kunit_info(test, "a was switched out before its leaf ended: again");
	} else {
		KUNIT_EXPECT_TRUE(test, s.asked_in_leaf);
		KUNIT_EXPECT_FALSE(test, s.b_in_leaf);
	}
	blitz_pool_destroy(pool);
	return !s.switched;
}

static void share_test_long_leaf(struct kunit *test)
{
	int i;

	for (i = 0; i < LEAF_TRIES; i++)
		if (leaf_try(test))
			return;
	KUNIT_FAIL(test, "a was switched out before its leaf in each of %d tries",
		   LEAF_TRIES);
}

/* === A long wait takes no timer === */

struct longwait {
	struct blitz_worker *a_worker, *b_worker;
	struct completion b_started;
	u64 looks_before, looks_after;
};

static void longwait_b(void *arg)
{
	struct longwait *l = arg;

	l->b_worker = blitz_current_worker();
	complete(&l->b_started);
	msleep(1000);
}

static void longwait_a(void *arg)
{
	struct longwait *l = arg;
	struct blitz_worker *w = blitz_current_worker();

	l->a_worker = w;
	/* b is promoted while we sleep, and stolen. */
	if (!wait_for_completion_timeout(&l->b_started, 5 * HZ))
		return;
	/* A request of us, pending while we wait. */
	hrtimer_cancel(&w->share_timer);
	WRITE_ONCE(w->forks.share, 0);
	blitz_ask(w, w);
	l->looks_before = share_stat(w, BLITZ_STAT_SHARE_TIMER);
}

/* The join that waits, one level deep: its frame at depth 1. */
static void longwait_join(void *arg)
{
	struct longwait *l = arg;

	blitz_join(longwait_a, l, longwait_b, l);
	l->looks_after = share_stat(l->a_worker, BLITZ_STAT_SHARE_TIMER);
}

static void longwait_nothing(void *arg)
{
}

static void longwait_root(void *arg)
{
	blitz_join(longwait_join, arg, longwait_nothing, NULL);
}

/*
 * A joiner, one join deep, waits 1 s for its stolen b, with a request
 * pending (its own, then the idle third worker's, once that has run the
 * outer b). Asleep, with every frame of its promoted, it can change
 * nothing until b is done, and its share timer does not fire: a timer
 * that looked every interval for a switched-out owner fired 10000 times
 * with high-resolution timers, 214 at the 4 ms ticks of the x86_64 KUnit
 * kernel, then, backing off, 83-84.
 */
static void share_test_long_wait(struct kunit *test)
{
	struct longwait l = {};
	struct blitz_pool *pool;
	u64 looks;

	if (num_online_cpus() < 3)
		kunit_skip(test, "needs three CPUs");
	pool = blitz_pool_create("kunit-longwait", 3);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	init_completion(&l.b_started);
	KUNIT_EXPECT_EQ(test, blitz_call(pool, longwait_root, &l), 0);
	KUNIT_EXPECT_PTR_NE(test, l.b_worker, l.a_worker);
	looks = l.looks_after - l.looks_before;
	kunit_info(test, "%llu share timers while the joiner waited", looks);
	KUNIT_EXPECT_LT(test, looks, 2ULL);
	blitz_pool_destroy(pool);
}

/* === A joiner's request made in the thief's cooldown === */

#define RENEW_INTERVAL_MS	50
#define RENEW_INTERVALS		6

struct renew {
	struct blitz_worker *a_worker, *b_worker;
	struct completion b_started;
	atomic_t leaves, leaves_on_a;
	unsigned long joins;
	bool cooled;
};

/*
 * Long enough for the joiner, woken by the promotion of the frame of one
 * leaf, to steal it while the thief runs the other. Timed by the clock,
 * not mdelay(): under TCG, a secondary CPU's delay loop calibration can
 * fail low, and its mdelay(5) took 0.1 ms in an x86_64 KUnit run.
 */
static void renew_leaf(void *arg)
{
	struct renew *r = arg;
	u64 end = ktime_get_ns() + 5 * NSEC_PER_MSEC;

	while (ktime_get_ns() < end)
		cpu_relax();
	atomic_inc(&r->leaves);
	if (blitz_current_worker() == r->a_worker)
		atomic_inc(&r->leaves_on_a);
}

/* a sleeps until b runs: b is promoted meanwhile, and stolen. */
static void renew_a(void *arg)
{
	struct renew *r = arg;

	wait_for_completion(&r->b_started);
}

/*
 * b promotes once, which starts its cooldown, lets a return to its join,
 * and forks for RENEW_INTERVALS cooldowns. The joiner asks at once,
 * within the first (we see WAIT), then sleeps.
 */
static void renew_b(void *arg)
{
	struct renew *r = arg;
	struct blitz_worker *w = blitz_current_worker();
	unsigned long end;

	r->b_worker = w;
	share_ask_self();
	complete(&r->b_started);
	end = jiffies + msecs_to_jiffies(RENEW_INTERVALS * RENEW_INTERVAL_MS);
	while (time_before(jiffies, end)) {
		blitz_join(renew_leaf, r, renew_leaf, r);
		r->joins++;
		if (READ_ONCE(w->forks.share) == BLITZ_SHARE_WAIT)
			r->cooled = true;
	}
}

/* Before the join: b may be stolen from its start. */
static void renew_root(void *arg)
{
	struct renew *r = arg;

	r->a_worker = blitz_current_worker();
	blitz_join(renew_a, r, renew_b, r);
}

/*
 * Two workers and no spare, so no worker is inactive while the joiner
 * waits (a spare on duty for it would be, and take leaves). Its requests
 * fall in the thief's cooldown, which askers leave alone: the share timer
 * renews the request at the cooldown's end for the joiner, and the
 * thief's next fork promotes a frame, whose kick wakes the joiner to take
 * it, one a cooldown: 5 of 6 here. The timer renewed a request only when
 * some worker was inactive: the joiner took 0 or 1.
 */
static void share_test_wait_renewed(struct kunit *test)
{
	unsigned int interval = blitz_share_interval_us;
	unsigned int max = blitz_max_spares;
	struct blitz_pool *pool;
	struct renew r = {};

	/* Before max_spares changes: a skip ends the test here. */
	if (num_online_cpus() < 2)
		kunit_skip(test, "a stolen frame needs two CPUs");
	WRITE_ONCE(blitz_max_spares, 0);
	pool = blitz_pool_create("kunit-renew", 2);
	WRITE_ONCE(blitz_max_spares, max);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	init_completion(&r.b_started);
	blitz_share_interval_us = RENEW_INTERVAL_MS * USEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, blitz_call(pool, renew_root, &r), 0);
	blitz_share_interval_us = interval;
	KUNIT_ASSERT_NOT_NULL(test, r.a_worker);
	KUNIT_EXPECT_PTR_NE(test, r.a_worker, r.b_worker);
	KUNIT_EXPECT_TRUE(test, r.cooled);
	KUNIT_EXPECT_EQ(test, (unsigned long)atomic_read(&r.leaves),
			2 * r.joins);
	kunit_info(test, "%d of %lu leaves on the joiner",
		   atomic_read(&r.leaves_on_a), 2 * r.joins);
	KUNIT_EXPECT_GE(test, atomic_read(&r.leaves_on_a), 2);
	blitz_pool_destroy(pool);
}

/* === Parallel loops split on demand === */

#define LAZY_N		1000
#define LAZY_GRAIN	10
#define LAZY_RANGES	128UL

struct lazy {
	unsigned long ask_at, next, bad, nr;
	unsigned long lo[LAZY_RANGES], len[LAZY_RANGES];
	bool in_order;
	atomic_t *hits;
};

/* One worker: the ranges come one at a time. */
static void lazy_fn(unsigned long lo, unsigned long hi, void *arg)
{
	struct lazy *l = arg;
	unsigned long i;

	if (l->nr < LAZY_RANGES) {
		l->lo[l->nr] = lo;
		l->len[l->nr] = hi - lo;
	}
	l->nr++;
	if (lo >= hi || hi - lo > LAZY_GRAIN)
		l->bad++;
	if (lo != l->next)
		l->in_order = false;
	l->next = hi;
	for (i = lo; i < hi; i++)
		atomic_inc(&l->hits[i]);
	if (lo <= l->ask_at && l->ask_at < hi)
		share_ask(blitz_current_worker());
}

static void lazy_loop(void *arg)
{
	struct lazy *l = arg;

	WARN_ON(blitz_parallel_for(0, LAZY_N, LAZY_GRAIN, lazy_fn, l));
}

/* Whether a range of @l starts at @lo and is @len long. */
static bool lazy_has(const struct lazy *l, unsigned long lo,
		     unsigned long len)
{
	unsigned long i;

	for (i = 0; i < min(l->nr, LAZY_RANGES); i++)
		if (l->lo[i] == lo)
			return l->len[i] == len;
	return false;
}

/* The length of range @i of @nr when nobody asks. */
static unsigned long lazy_len(unsigned long nr, unsigned long i)
{
	static const unsigned long tail[] = { 7, 4, 2, 1, 1 };

	if (i < 4)
		return 1UL << i;
	if (i >= nr - ARRAY_SIZE(tail))
		return tail[i - (nr - ARRAY_SIZE(tail))];
	return LAZY_GRAIN;
}

/*
 * Nobody asking: the ranges come in order, on the caller, one index
 * first, each twice the last up to the grain, and none over half of what
 * is left: 1, 2, 4, 8, then 10s, then 7, 4, 2, 1, 1. A request made in
 * the first range is acted on at its end, index 1, not a grain later:
 * the upper half of [1, 1000) is promoted, and, popped back (one
 * worker), starts at 500 with one index again. Every index once, no
 * range over the grain, in order.
 */
static void share_test_parallel_for(struct kunit *test)
{
	struct blitz_pool *pool = share_pool_one(test, "kunit-lazy");
	struct blitz_worker *w = pool->workers[0];
	struct lazy *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	unsigned int interval = blitz_share_interval_us;
	unsigned long i;
	int pass;

	KUNIT_ASSERT_NOT_NULL(test, l);
	l->hits = kunit_kcalloc(test, LAZY_N, sizeof(*l->hits), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l->hits);
	l->ask_at = ULONG_MAX;
	blitz_share_interval_us = 0;
	for (pass = 0; pass < 2; pass++) {
		l->next = 0;
		l->nr = 0;
		l->in_order = true;
		KUNIT_EXPECT_EQ(test, blitz_call(pool, lazy_loop, l), 0);
		for (i = 0; i < LAZY_N; i++)
			KUNIT_EXPECT_EQ(test, atomic_read(&l->hits[i]), pass + 1);
		KUNIT_EXPECT_EQ(test, l->bad, 0UL);
		KUNIT_EXPECT_TRUE(test, l->in_order);
		KUNIT_EXPECT_TRUE(test, lazy_has(l, 0, 1));
		if (!pass) {
			/* 15 in four, 970 in tens, the last 15 in five. */
			KUNIT_EXPECT_EQ(test, l->nr, 4 + 97 + 5UL);
			for (i = 0; i < min(l->nr, LAZY_RANGES); i++)
				KUNIT_EXPECT_EQ_MSG(test, l->len[i],
						    lazy_len(l->nr, i),
						    "range %lu", i);
			KUNIT_EXPECT_EQ(test, share_stat(w, BLITZ_STAT_PROMOTED),
					0ULL);
		}
		l->ask_at = 0;
	}
	blitz_share_interval_us = interval;
	KUNIT_EXPECT_TRUE(test, lazy_has(l, 1, 1));
	KUNIT_EXPECT_TRUE(test, lazy_has(l, 500, 1));
	KUNIT_EXPECT_EQ(test, share_stat(w, BLITZ_STAT_PROMOTED), 1ULL);
	blitz_pool_destroy(pool);
}

/* === Idle === */

static bool share_all_asleep(struct blitz_pool *pool)
{
	return blitz_sleeping(blitz_counters_load(&pool->counters)) ==
	       pool->nr_workers;
}

/*
 * Joins on every worker, then idle: once every worker sleeps, none has a
 * timer armed or is cooling down, and none is armed a second later. A
 * request may be left: an asker (a thief asking its victim, an idle
 * worker asking one it saw busy) can store it just after its target went
 * idle; it costs one promotion at that worker's next fork, no wake-up.
 */
static void share_test_idle_no_timer(struct kunit *test)
{
	struct blitz_pool *pool = blitz_pool_create("kunit-quiet", 0);
	unsigned long deadline = jiffies + 10 * HZ;
	struct fib f = { 22 };
	unsigned long share;
	unsigned int i;

	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, blitz_call(pool, fib_join, &f), 0);
	KUNIT_EXPECT_EQ(test, f.result, fib_plain(22));
	while (!share_all_asleep(pool) && time_before(jiffies, deadline))
		msleep(20);
	KUNIT_ASSERT_TRUE(test, share_all_asleep(pool));
	msleep(1000);
	for (i = 0; i < pool->nr_workers; i++) {
		KUNIT_EXPECT_FALSE(test,
				   hrtimer_active(&pool->workers[i]->share_timer));
		share = READ_ONCE(pool->workers[i]->forks.share);
		KUNIT_EXPECT_EQ_MSG(test, share & ~BLITZ_SHARE_ASK, 0UL,
				    "worker %u share %#lx", i, share);
	}
	KUNIT_EXPECT_TRUE(test, share_all_asleep(pool));
	blitz_pool_destroy(pool);
}

static struct kunit_case share_test_cases[] = {
	KUNIT_CASE(share_test_oldest_first),
	KUNIT_CASE(share_test_nested_promoted),
	KUNIT_CASE(share_test_cooldown),
	KUNIT_CASE(share_test_one_worker),
	KUNIT_CASE(share_test_promoted_stolen),
	KUNIT_CASE(share_test_blocked_a),
	KUNIT_CASE(share_test_asked_blocked),
	KUNIT_CASE(share_test_long_leaf),
	KUNIT_CASE(share_test_long_wait),
	KUNIT_CASE(share_test_wait_renewed),
	KUNIT_CASE(share_test_parallel_for),
	KUNIT_CASE(share_test_idle_no_timer),
	{}
};

static struct kunit_suite share_test_suite = {
	.name = "blitz_share",
	.test_cases = share_test_cases,
};

kunit_test_suite(share_test_suite);
