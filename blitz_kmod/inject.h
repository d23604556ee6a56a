/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The injection queue: jobs submitted from outside a pool. Each worker has
 * one, fed by the CPUs mapped to that worker; any worker may drain it.
 *
 * Producers (blitz_submit(), any context but NMI) push on a lock-free
 * llist: one cmpxchg, O(1). Takers (workers, in task context) take the
 * oldest jobs, a batch of at most a given size, under a raw spinlock that
 * producers never touch. The llist hands its jobs over newest first; a
 * taker that finds the backlog empty moves the whole llist there,
 * reversed, and then every taker cuts its batch off the backlog's head.
 * Each job is reversed once and cut once: O(1) per job, whatever the
 * backlog. The llist is emptied only when the backlog is (or, by a waiter
 * filtering the queue, appended to it), so jobs leave in the order they
 * came (FIFO per submitting CPU) and none is overtaken for ever.
 *
 * A taker holds the lock for one batch, a walk of at most its size, and,
 * when it refills the backlog, for the reversal of the list: a walk of
 * every job queued since the last refill, each job's one reversal. The
 * lock is raw, so after a burst that walk is one long non-preemptible
 * section for the taker (never for a producer).
 *
 * Each queue has a bit in a bitmap of its owner's choice (the pool's
 * queued bitmap), so that a taker finds the queues holding jobs without
 * looking at every queue: the producer whose add found the list empty
 * sets it, and a taker clears it, under the lock, when its take leaves
 * the queue empty, then looks at the list once more and sets it again if
 * a job came meanwhile. A queue that is not empty thus has its bit set,
 * except while its first producer is between its add and setting the bit
 * (litmus/inject-queued-hint.litmus). The bit is a hint: an empty queue
 * may have it set, until a taker finds it empty and clears it, and
 * whoever must not miss a job looks at the queue itself
 * (blitz_inject_empty()).
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
 *
 * @list and the takers' fields live on cache lines of their own.
 */
struct blitz_inject {
	struct llist_head list;
	raw_spinlock_t lock ____cacheline_aligned_in_smp;
	struct llist_node *backlog;
};

static inline void blitz_inject_init(struct blitz_inject *q)
{
	init_llist_head(&q->list);
	raw_spin_lock_init(&q->lock);
	q->backlog = NULL;
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
 * Whether @q looks empty. A lockless look; a job moving from the list to
 * the backlog may be missed, but only by others than the taker moving it,
 * which then runs it or pushes it where it can be stolen, or, filtering
 * the list (blitz_inject_take_if()), posts it again.
 */
static inline bool blitz_inject_empty(struct blitz_inject *q)
{
	return !READ_ONCE(q->backlog) && llist_empty(&q->list);
}

/*
 * Take the oldest jobs of @q, at most @max (at least 1): they come
 * oldest first, NULL-terminated, and *@nr says how many. NULL (and 0)
 * when @q is empty. If this leaves @q empty, clear its bit, @bit in
 * @queued (see blitz_inject_mark()). Task context.
 */
static inline struct llist_node *blitz_inject_take(struct blitz_inject *q,
						   unsigned int max,
						   unsigned int *nr,
						   unsigned long *queued,
						   unsigned int bit)
{
	struct llist_node *first, *last, *rest = NULL;
	unsigned int n = 0;

	/*
	 * The lock hands on to us what the taker that moved the jobs saw of
	 * them: its fully ordered llist_del_all() read the producers'
	 * fully ordered llist_add(). (litmus/inject-backlog-handoff.litmus)
	 */
	raw_spin_lock(&q->lock);
	first = q->backlog;
	if (!first)
		first = llist_reverse_order(llist_del_all(&q->list));
	if (first) {
		for (last = first, n = 1; n < max && last->next; n++)
			last = last->next;
		rest = last->next;
		WRITE_ONCE(q->backlog, rest);
		last->next = NULL;
	}
	/* Only under the lock, where the backlog cannot fill behind us. */
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
	*nr = n;
	return first;
}

/*
 * Take the oldest jobs of @q that @match, at most @max, oldest first,
 * NULL-terminated; the others stay, in order, all on the backlog.
 * O(jobs queued), under the takers' lock: for rare paths (a waiter
 * looking for its group's jobs, or for its own calls back), whose caller
 * posts the jobs it moved to the backlog. Task context.
 */
static inline struct llist_node *
blitz_inject_take_if(struct blitz_inject *q,
		     bool (*match)(struct llist_node *node, void *arg),
		     void *arg, unsigned int max)
{
	struct llist_node *head, **pp, *taken = NULL, **tail = &taken;
	unsigned int n = 0;

	raw_spin_lock(&q->lock);
	/* The list after the backlog: it is newer. */
	head = q->backlog;
	for (pp = &head; *pp; pp = &(*pp)->next)
		;
	*pp = llist_reverse_order(llist_del_all(&q->list));
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
	WRITE_ONCE(q->backlog, head);
	raw_spin_unlock(&q->lock);
	return taken;
}

#endif /* _BLITZ_INJECT_H */
