// SPDX-License-Identifier: GPL-2.0
/*
 * Tests run in threads (kverbs serve, perf -q), each blocked in its own
 * ioctl, and a signal that must end them all.
 *
 * A signal goes to one thread of the process; the kernel ends the ioctl
 * of the thread it interrupts, not the others'.  So the threads run with
 * SIGINT and SIGTERM blocked, the calling thread takes those with
 * sigtimedwait(), and passes them on to every thread as SIGUSR1, whose
 * handler does nothing: what counts is that it interrupts the ioctl,
 * which then returns EINTR.  A thread may be just about to enter its
 * ioctl when the first one comes, so it is repeated until all are done.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "kverbs.h"

struct kv_thread {
	pthread_t id;
	void *(*fn)(void *arg);
	void *arg;
	int *running;
};

static void *kv_thread_main(void *arg)
{
	struct kv_thread *t = arg;

	t->fn(t->arg);
	__atomic_fetch_sub(t->running, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void kv_threads_on_usr1(int sig)
{
	(void)sig;
}

/**
 * kv_threads_run - run @fn(@args[i]) in @n threads until all return
 * @n: threads, at most KV_THREADS_MAX
 * @fn: what each runs
 * @args: each one's argument
 * @stop: set to 1 when SIGINT or SIGTERM came; @fn may also set it, and
 *	the others' ioctls are then interrupted too
 *
 * Returns 1 when a signal stopped them, 0 when they all ended by
 * themselves, or the negative error of pthread_create() after the
 * threads that did start have ended (they were told to stop).
 */
int kv_threads_run(unsigned int n, void *(*fn)(void *arg), void **args, int *stop)
{
	const struct timespec tick = { .tv_nsec = 100 * 1000 * 1000 };
	struct sigaction sa = { .sa_handler = kv_threads_on_usr1 };
	struct kv_thread threads[KV_THREADS_MAX];
	sigset_t stopsigs, old;
	unsigned int i, started;
	int running = n, ret = 0, signalled = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stopsigs, &old);

	for (started = 0; started < n; started++) {
		threads[started] = (struct kv_thread){ .fn = fn, .arg = args[started],
						       .running = &running };
		ret = pthread_create(&threads[started].id, NULL, kv_thread_main,
				     &threads[started]);
		if (ret) {
			__atomic_fetch_sub(&running, n - started, __ATOMIC_RELEASE);
			__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
		if (sigtimedwait(&stopsigs, NULL, &tick) > 0) {
			signalled = 1;
			__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
		}
		if (__atomic_load_n(stop, __ATOMIC_ACQUIRE))
			for (i = 0; i < started; i++)
				pthread_kill(threads[i].id, SIGUSR1);
	}
	for (i = 0; i < started; i++)
		pthread_join(threads[i].id, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret ? -ret : signalled;
}
