/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz tracepoints: jobs submitted, run, stolen; workers asleep and
 * woken, blocked and unblocked; spares started, stopped and exiting;
 * join frames promoted and stolen. System "blitz", for perf, trace-cmd
 * and bpftrace; modelled on include/trace/events/workqueue.h. Each event
 * names its pool and, where one acts, the worker by its index.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM blitz

#if !defined(_TRACE_BLITZ_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_BLITZ_H

#include <linux/blitz.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

/* Pool names are at most 63 characters (blitz_pool_create()). */
#define BLITZ_TRACE_POOL_LEN	64

/**
 * blitz_submit - a job is being queued
 * @pool: the pool's name
 * @job: the job
 * @local: from a worker of @pool, for its own deque; else injected
 *
 * Fired just before the job is queued: once queued it may run and be
 * freed. A local job that finds the deque full is injected after all,
 * and counted in the worker's overflows.
 */
TRACE_EVENT(blitz_submit,
	    TP_PROTO(const char *pool, struct blitz_job *job, bool local),
	    TP_ARGS(pool, job, local),
	    TP_STRUCT__entry(__array(char, pool, BLITZ_TRACE_POOL_LEN)
			     __field(void *, job)
			     __field(void *, func)
			     __field(bool, local)),
	    TP_fast_assign(strscpy(__entry->pool, pool, BLITZ_TRACE_POOL_LEN);
			   __entry->job = job;
			   __entry->func = job->func;
			   __entry->local = local;),
	    TP_printk("pool=%s job=%p func=%ps %s", __entry->pool,
		      __entry->job, __entry->func,
		      __entry->local ? "local" : "injected")
);

DECLARE_EVENT_CLASS(blitz_job_run,
		    TP_PROTO(const char *pool, unsigned int worker,
			     struct blitz_job *job, void *func),
		    TP_ARGS(pool, worker, job, func),
		    TP_STRUCT__entry(__array(char, pool, BLITZ_TRACE_POOL_LEN)
				     __field(unsigned int, worker)
				     __field(void *, job)
				     __field(void *, func)),
		    TP_fast_assign(strscpy(__entry->pool, pool,
					   BLITZ_TRACE_POOL_LEN);
				   __entry->worker = worker;
				   __entry->job = job;
				   __entry->func = func;),
		    TP_printk("pool=%s worker=%u job=%p func=%ps",
			      __entry->pool, __entry->worker, __entry->job,
			      __entry->func)
);

/**
 * blitz_execute_start - a worker calls a job's function
 * @pool: the pool's name
 * @worker: the worker's index
 * @job: the job; its owner's from now on, so never dereference it
 * @func: the function
 */
DEFINE_EVENT(blitz_job_run, blitz_execute_start,
	     TP_PROTO(const char *pool, unsigned int worker,
		      struct blitz_job *job, void *func),
	     TP_ARGS(pool, worker, job, func)
);

/**
 * blitz_execute_end - a job's function returned
 * @pool: the pool's name
 * @worker: the worker's index
 * @job: the job, perhaps freed by now: a key to match the start with
 * @func: the function
 */
DEFINE_EVENT(blitz_job_run, blitz_execute_end,
	     TP_PROTO(const char *pool, unsigned int worker,
		      struct blitz_job *job, void *func),
	     TP_ARGS(pool, worker, job, func)
);

/**
 * blitz_steal - a worker took a job from another's deque
 * @pool: the pool's name
 * @thief: the taker's index
 * @victim: the index of the worker whose deque it was
 * @job: the job
 */
TRACE_EVENT(blitz_steal,
	    TP_PROTO(const char *pool, unsigned int thief,
		     unsigned int victim, struct blitz_job *job),
	    TP_ARGS(pool, thief, victim, job),
	    TP_STRUCT__entry(__array(char, pool, BLITZ_TRACE_POOL_LEN)
			     __field(unsigned int, thief)
			     __field(unsigned int, victim)
			     __field(void *, job)),
	    TP_fast_assign(strscpy(__entry->pool, pool, BLITZ_TRACE_POOL_LEN);
			   __entry->thief = thief;
			   __entry->victim = victim;
			   __entry->job = job;),
	    TP_printk("pool=%s thief=%u victim=%u job=%p", __entry->pool,
		      __entry->thief, __entry->victim, __entry->job)
);

DECLARE_EVENT_CLASS(blitz_worker,
		    TP_PROTO(const char *pool, unsigned int worker),
		    TP_ARGS(pool, worker),
		    TP_STRUCT__entry(__array(char, pool, BLITZ_TRACE_POOL_LEN)
				     __field(unsigned int, worker)),
		    TP_fast_assign(strscpy(__entry->pool, pool,
					   BLITZ_TRACE_POOL_LEN);
				   __entry->worker = worker;),
		    TP_printk("pool=%s worker=%u", __entry->pool,
			      __entry->worker)
);

/**
 * blitz_sleep - an idle worker goes to sleep
 * @pool: the pool's name
 * @worker: its index
 */
DEFINE_EVENT(blitz_worker, blitz_sleep,
	     TP_PROTO(const char *pool, unsigned int worker),
	     TP_ARGS(pool, worker)
);

/**
 * blitz_wake - a sleeping worker is woken, for a job
 * @pool: the pool's name
 * @worker: its index
 */
DEFINE_EVENT(blitz_worker, blitz_wake,
	     TP_PROTO(const char *pool, unsigned int worker),
	     TP_ARGS(pool, worker)
);

/**
 * blitz_block - a worker blocked in a job
 * @pool: the pool's name
 * @worker: its index
 *
 * Fired by the worker's preempt notifier, as it is switched out with its
 * task not runnable; a preemption does not fire it.
 */
DEFINE_EVENT(blitz_worker, blitz_block,
	     TP_PROTO(const char *pool, unsigned int worker),
	     TP_ARGS(pool, worker)
);

/**
 * blitz_unblock - a worker that blocked in a job runs again
 * @pool: the pool's name
 * @worker: its index
 */
DEFINE_EVENT(blitz_worker, blitz_unblock,
	     TP_PROTO(const char *pool, unsigned int worker),
	     TP_ARGS(pool, worker)
);

DECLARE_EVENT_CLASS(blitz_spare,
		    TP_PROTO(const char *pool, unsigned int worker, int cpu),
		    TP_ARGS(pool, worker, cpu),
		    TP_STRUCT__entry(__array(char, pool, BLITZ_TRACE_POOL_LEN)
				     __field(unsigned int, worker)
				     __field(int, cpu)),
		    TP_fast_assign(strscpy(__entry->pool, pool,
					   BLITZ_TRACE_POOL_LEN);
				   __entry->worker = worker;
				   __entry->cpu = cpu;),
		    TP_printk("pool=%s worker=%u cpu=%d", __entry->pool,
			      __entry->worker, __entry->cpu)
);

/**
 * blitz_spare_start - a spare worker is put on duty
 * @pool: the pool's name
 * @worker: the spare's index
 * @cpu: the CPU whose workers all blocked, where it runs
 */
DEFINE_EVENT(blitz_spare, blitz_spare_start,
	     TP_PROTO(const char *pool, unsigned int worker, int cpu),
	     TP_ARGS(pool, worker, cpu)
);

/**
 * blitz_spare_stop - a spare worker goes back to its parked list
 * @pool: the pool's name
 * @worker: the spare's index
 * @cpu: its CPU, where another worker runs again
 */
DEFINE_EVENT(blitz_spare, blitz_spare_stop,
	     TP_PROTO(const char *pool, unsigned int worker, int cpu),
	     TP_ARGS(pool, worker, cpu)
);

/**
 * blitz_spare_exit - a parked spare worker is stopped
 * @pool: the pool's name
 * @worker: the spare's index
 * @cpu: the CPU it was parked for
 *
 * Fired by the pool's manager, holding the pool's manage_lock, just
 * before it stops a spare left parked for spare_idle_ms.
 */
DEFINE_EVENT(blitz_spare, blitz_spare_exit,
	     TP_PROTO(const char *pool, unsigned int worker, int cpu),
	     TP_ARGS(pool, worker, cpu)
);

DECLARE_EVENT_CLASS(blitz_frame,
		    TP_PROTO(const char *pool, unsigned int worker, void *fn),
		    TP_ARGS(pool, worker, fn),
		    TP_STRUCT__entry(__array(char, pool, BLITZ_TRACE_POOL_LEN)
				     __field(unsigned int, worker)
				     __field(void *, fn)),
		    TP_fast_assign(strscpy(__entry->pool, pool,
					   BLITZ_TRACE_POOL_LEN);
				   __entry->worker = worker;
				   __entry->fn = fn;),
		    TP_printk("pool=%s worker=%u b=%ps", __entry->pool,
			      __entry->worker, __entry->fn)
);

/**
 * blitz_join_promote - a latent join frame was pushed, for thieves
 * @pool: the pool's name
 * @worker: the joining worker's index
 * @fn: the join's b
 */
DEFINE_EVENT(blitz_frame, blitz_join_promote,
	     TP_PROTO(const char *pool, unsigned int worker, void *fn),
	     TP_ARGS(pool, worker, fn)
);

/**
 * blitz_join_stolen - another worker runs a join's b
 * @pool: the pool's name
 * @worker: the index of the worker running it
 * @fn: the join's b
 */
DEFINE_EVENT(blitz_frame, blitz_join_stolen,
	     TP_PROTO(const char *pool, unsigned int worker, void *fn),
	     TP_ARGS(pool, worker, fn)
);

#endif /* _TRACE_BLITZ_H */

#include <trace/define_trace.h>
