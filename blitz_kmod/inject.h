/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The injection queue, Rayon's injector: jobs submitted from outside a pool,
 * one queue per worker. Producers llist_add() lock-free, in any context but
 * NMI. Takers cut batches of the oldest jobs off a backlog under a raw
 * spinlock; one at a time (&blitz_inject.moving) moves the list there,
 * reversed outside the lock: FIFO, O(1) per job, no long lock hold. A bit per
 * queue in the pool's queued bitmap hints which queues hold jobs
 * (litmus/inject-queued-hint.litmus). Documentation/blitz/design.rst,
 * "Injection lists".
 */
#ifndef _BLITZ_INJECT_H
#define _BLITZ_INJECT_H

#include <linux/bitops.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/llist.h>
#include <linux/spinlock.h>

/**
 * struct blitz_inject - an injection queue
 * @list: where producers push, newest first
 * @since: jiffies when a submit last found @list empty (blitz_inject())
 * @lock: serialises the takers
 * @backlog: jobs moved off @list, oldest first; written under @lock
 * @moving: a taker has jobs out, to put back; under @lock
 *
 * @list and the takers' fields live on cache lines of their own.
 */
struct blitz_inject {
	struct llist_head list;
	unsigned long since;
	raw_spinlock_t lock ____cacheline_aligned_in_smp;
	struct llist_node *backlog;
	bool moving;
};

static inline void blitz_inject_init(struct blitz_inject *q)
{
	init_llist_head(&q->list);
	q->since = jiffies;
	raw_spin_lock_init(&q->lock);
	q->backlog = NULL;
	q->moving = false;
}

/*
 * Queue @node; returns whether the list was empty. Fully ordered (the
 * cmpxchg): the taker sees what was written before. Any context but NMI.
 * llist_add(), inline: every injected job comes through here.
 */
static inline bool blitz_inject_add(struct blitz_inject *q,
				    struct llist_node *node)
{
	struct llist_node *first = READ_ONCE(q->list.first);

	do {
		node->next = first;
	} while (!try_cmpxchg(&q->list.first, &first, node));
	return !first;
}

/*
 * Whether the jobs on @q's list have waited there for over a tick: those
 * of a producer that found the list not empty ride along with the first,
 * which was posted, and nobody has taken it since. A hint: read without
 * ordering, it may belong to the list's previous fill.
 */
static inline bool blitz_inject_stale(struct blitz_inject *q)
{
	return time_after(jiffies, READ_ONCE(q->since) + 1);
}

/*
 * Set @bit in @queued after an add that found the list empty. The fully
 * ordered add pairs with the taker's smp_mb__after_atomic() between its clear
 * and its look at the list (litmus/inject-queued-hint.litmus). Tested first
 * so that a burst does not write the bitmap's line. Any context but NMI.
 */
static inline void blitz_inject_mark(unsigned long *queued, unsigned int bit)
{
	if (!test_bit(bit, queued))
		set_bit(bit, queued);
}

/*
 * Whether @q looks empty, locklessly. Jobs a taker has out are missed, but
 * that taker runs them, pushes them where they can be stolen, or posts them.
 */
static inline bool blitz_inject_empty(struct blitz_inject *q)
{
	return !READ_ONCE(q->backlog) && llist_empty(&q->list);
}

/* The last node of the NULL-terminated @list, not NULL. */
static inline struct llist_node *blitz_inject_last(struct llist_node *list)
{
	while (list->next)
		list = list->next;
	return list;
}

/*
 * Put the jobs we moved out back as the backlog, which nobody filled meanwhile
 * (@q->moving), and mark @bit under the lock: a taker that clears it comes
 * before, and we set it again, or after, and sees the jobs.
 */
static inline void blitz_inject_put_back(struct blitz_inject *q,
					 struct llist_node *list,
					 unsigned long *queued,
					 unsigned int bit)
{
	raw_spin_lock(&q->lock);
	if (list) {
		WRITE_ONCE(q->backlog, list);
		blitz_inject_mark(queued, bit);
	}
	q->moving = false;
	raw_spin_unlock(&q->lock);
}

/*
 * Cut the first @max (at least 1) of @list off: they stay at @list,
 * NULL-terminated; returns the rest, and *@nr says how many were cut.
 */
static inline struct llist_node *blitz_inject_cut(struct llist_node *list,
						  unsigned int max,
						  unsigned int *nr)
{
	struct llist_node *last = list, *rest;
	unsigned int n;

	for (n = 1; n < max && last->next; n++)
		last = last->next;
	rest = last->next;
	last->next = NULL;
	*nr = n;
	return rest;
}

/*
 * Take the oldest jobs of @q, at most @max (at least 1), oldest first,
 * NULL-terminated, and *@nr says how many (NULL and 0 when @q is empty).
 * Clears @bit in @queued if @q is left empty. *@back: jobs were moved out and
 * put back, unseen meanwhile by lockless looks, so the caller posts them again.
 * Task context.
 */
static inline struct llist_node *blitz_inject_take(struct blitz_inject *q,
						   unsigned int max,
						   unsigned int *nr,
						   unsigned long *queued,
						   unsigned int bit,
						   bool *back)
{
	struct llist_node *first, *rest = NULL;

	*nr = 0;
	*back = false;
	/*
	 * Hands on what the taker that put the backlog back saw of its jobs;
	 * pairs with its unlock (litmus/inject-backlog-handoff.litmus).
	 */
	raw_spin_lock(&q->lock);
	first = q->backlog;
	if (first) {
		rest = blitz_inject_cut(first, max, nr);
		WRITE_ONCE(q->backlog, rest);
	} else if (!q->moving) {
		first = llist_del_all(&q->list);
		q->moving = !!first;
	}
	/*
	 * Clear only under the lock, where the backlog cannot fill behind us;
	 * jobs we put back mark the bit again.
	 */
	if (!rest && llist_empty(&q->list) && test_bit(bit, queued)) {
		clear_bit(bit, queued);
		/*
		 * Pairs with the producer's fully ordered add before its
		 * mark (litmus/inject-queued-hint.litmus).
		 */
		smp_mb__after_atomic();
		if (!llist_empty(&q->list))
			set_bit(bit, queued);
	}
	raw_spin_unlock(&q->lock);
	if (!first || *nr)
		return first;
	/* Moved out: reversed and cut outside the lock. */
	first = llist_reverse_order(first);
	rest = blitz_inject_cut(first, max, nr);
	blitz_inject_put_back(q, rest, queued, bit);
	*back = rest;
	return first;
}

/*
 * Take the oldest jobs of @q that @match, at most @max, oldest first; the
 * others stay, in order, as the backlog. The whole queue is walked outside
 * the lock: for rare paths (a group waiter), whose caller posts the jobs put
 * back. Finds none while another taker has jobs out. Task context.
 */
static inline struct llist_node *
blitz_inject_take_if(struct blitz_inject *q,
		     bool (*match)(struct llist_node *node, void *arg),
		     void *arg, unsigned int max, unsigned long *queued,
		     unsigned int bit)
{
	struct llist_node *head = NULL, *list = NULL, **pp, *taken = NULL;
	struct llist_node **tail = &taken;
	unsigned int n = 0;

	raw_spin_lock(&q->lock);
	if (!q->moving) {
		head = q->backlog;
		WRITE_ONCE(q->backlog, NULL);
		list = llist_del_all(&q->list);
		q->moving = head || list;
	}
	raw_spin_unlock(&q->lock);
	if (!head && !list)
		return NULL;
	/* The list after the backlog: it is newer. */
	list = llist_reverse_order(list);
	if (head)
		blitz_inject_last(head)->next = list;
	else
		head = list;
	for (pp = &head; *pp && n < max; ) {
		if (match(*pp, arg)) {
			n++;
			*tail = *pp;
			tail = &(*pp)->next;
			*pp = *tail;
		} else {
			pp = &(*pp)->next;
		}
	}
	*tail = NULL;
	blitz_inject_put_back(q, head, queued, bit);
	return taken;
}

#endif /* _BLITZ_INJECT_H */
