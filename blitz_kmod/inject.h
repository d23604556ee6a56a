/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The injection queue: jobs submitted from outside a pool. Each worker has
 * one, fed by the CPUs mapped to that worker; any worker may drain it.
 *
 * Producers (blitz_submit(), any context but NMI) push on a lock-free
 * llist: one cmpxchg, O(1). Takers (workers, in task context) take the
 * oldest jobs, a batch of at most a given size, under a raw spinlock that
 * producers never touch. The llist hands its jobs over newest first; a
 * taker that finds the backlog empty moves the whole llist out, reverses
 * it outside the lock, takes its batch and puts the rest back as the
 * backlog. One taker at a time moves jobs out (&blitz_inject.moving):
 * the others find nothing meanwhile, and what is put back is older than
 * anything queued after it. Each job is reversed once and cut once: O(1)
 * per job, whatever the backlog, and the lock is held for a walk of one
 * batch at most, never for a reversal: a long queue makes no long
 * non-preemptible section on PREEMPT_RT. Jobs leave in the order they
 * came (FIFO per submitting CPU), and none is overtaken. While a taker
 * holds jobs that it puts back, a lockless look (blitz_inject_empty())
 * misses them: it says so, and its caller posts them again.
 *
 * Each queue has a bit in a bitmap of its owner's choice (the pool's
 * queued bitmap), so that a taker finds the queues holding jobs without
 * looking at every queue: the producer whose add found the list empty
 * sets it, and so does a taker that puts jobs back; a taker clears it,
 * under the lock, when its take leaves the queue empty, then looks at the
 * list once more and sets it again if a job came meanwhile. A queue that
 * is not empty thus has its bit set, except while its first producer is
 * between its add and setting the bit (litmus/inject-queued-hint.litmus).
 * The bit is a hint: an empty queue may have it set, until a taker finds
 * it empty and clears it, and whoever must not miss a job looks at the
 * queue itself (blitz_inject_empty()).
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
 * @lock: serialises the takers
 * @backlog: jobs moved off @list, oldest first; written under @lock
 * @moving: a taker has jobs out, to put back; under @lock
 *
 * @list and the takers' fields live on cache lines of their own.
 */
struct blitz_inject {
	struct llist_head list;
	raw_spinlock_t lock ____cacheline_aligned_in_smp;
	struct llist_node *backlog;
	bool moving;
};

static inline void blitz_inject_init(struct blitz_inject *q)
{
	init_llist_head(&q->list);
	raw_spin_lock_init(&q->lock);
	q->backlog = NULL;
	q->moving = false;
}

/*
 * Queue @node; returns whether the list was empty. Fully ordered (the
 * cmpxchg): whoever takes the node sees what was written before. Any
 * context but NMI. llist_add(), inline: it is on the path of every
 * injected job.
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
 * The add that found @q's list empty (blitz_inject_add() returned true)
 * sets @q's bit, @bit in @queued. After the fully ordered add: a taker
 * that clears the bit, and then finds the list empty, does so before we
 * look at the bit, and we set it (litmus/inject-queued-hint.litmus).
 * Looked at first, so that a burst does not write the bitmap's line while
 * the bit is set. Any context but NMI.
 */
static inline void blitz_inject_mark(unsigned long *queued, unsigned int bit)
{
	if (!test_bit(bit, queued))
		set_bit(bit, queued);
}

/*
 * Whether @q looks empty. A lockless look; a job a taker moved out and
 * puts back is missed meanwhile, but only by others than that taker,
 * which then runs it, pushes it where it can be stolen, or posts it again
 * (blitz_inject_take(), blitz_inject_take_if()).
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
 * The jobs we moved out are back: @list (or NULL), the oldest of them,
 * becomes the backlog, which nobody filled meanwhile (@q's moving), and
 * @q's bit, @bit in @queued, is marked under the lock: a taker that found
 * the queue empty and cleared the bit came before, and we set it again,
 * or comes after, and sees the jobs.
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
 * Take the oldest jobs of @q, at most @max (at least 1): they come
 * oldest first, NULL-terminated, and *@nr says how many. NULL (and 0)
 * when @q is empty. If this leaves @q empty, clear its bit, @bit in
 * @queued (see blitz_inject_mark()). *@back says whether jobs were moved
 * out and put back, unseen meanwhile by lockless looks: then the caller
 * posts them again. Task context.
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
	 * The lock hands on to us what the taker that put jobs back saw of
	 * them: its fully ordered llist_del_all() read the producers'
	 * fully ordered llist_add(), and it wrote the backlog under the
	 * lock. (litmus/inject-backlog-handoff.litmus)
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
	 * Left empty: only under the lock, where the backlog cannot fill
	 * behind us. Jobs we put back have the bit set again.
	 */
	if (!rest && llist_empty(&q->list) && test_bit(bit, queued)) {
		clear_bit(bit, queued);
		/*
		 * Orders the clear before our look at the list; pairs with
		 * the fully ordered blitz_inject_add() before a producer's
		 * look at the bit: either it sees the bit clear and sets it,
		 * or we see its job and set it again
		 * (litmus/inject-queued-hint.litmus).
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
 * Take the oldest jobs of @q that @match, at most @max, oldest first,
 * NULL-terminated; the others stay, in order, all on the backlog, and
 * @q's bit, @bit in @queued, set. The whole queue is moved out, walked
 * and put back outside the lock: for rare paths (a waiter looking for its
 * group's jobs), whose caller posts the jobs put back. While another
 * taker has jobs out, it finds none. Task context.
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
