// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits, so that one user who runs as many tests and holds as
 * much memory as allowed still leaves room for another:
 * max_sessions_per_user and max_pinned_mb_per_user, past which a test is
 * refused with -EDQUOT, as keyrings refuse a user past its quota.
 *
 * A user is the caller's effective uid.  Every test, and everything it
 * allocates, runs in the thread of its ioctl, so current_euid() there
 * names whom to charge; root counts like anyone else.
 *
 * A struct kverbs_user exists while something is charged to it: each
 * running session and each buffer or pinned range holds one reference
 * and keeps the pointer, so that its release uncharges the user it
 * charged, whatever the thread's credentials are by then.  The last
 * reference takes it out of the table and frees it: with no test
 * running, the table is empty.
 */
#include "kverbs.h"

#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

/**
 * struct kverbs_user - what one user's tests hold now
 * @node: in kverbs_users, keyed by @uid
 * @ref: one per charge: each running session, each buffer or pinned range
 * @uid: the effective uid
 * @sessions: tests running, against max_sessions_per_user
 * @pinned: pages held, against max_pinned_mb_per_user
 */
struct kverbs_user {
	struct hlist_node node;
	refcount_t ref;
	kuid_t uid;
	unsigned int sessions;
	unsigned long pinned;
};

/*
 * The limits past which a test fails with a clear errno (ENFILE, EDQUOT;
 * the memory's own, ENOBUFS, is mr.c's max_pinned_mb) instead of pushing
 * the machine into OOM.  The per-user ones are half the module's, so
 * that one user at its limits leaves room for another.
 */
static unsigned int kverbs_max_sessions = 256;
module_param_named(max_sessions, kverbs_max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions, "tests running at once in all (default 256)");

static unsigned int kverbs_max_sessions_per_user = 128;
module_param_named(max_sessions_per_user, kverbs_max_sessions_per_user, uint, 0644);
MODULE_PARM_DESC(max_sessions_per_user,
		 "tests one user (effective uid) may run at once (default 128)");

static unsigned int kverbs_max_pinned_mb_per_user = 512;
module_param_named(max_pinned_mb_per_user, kverbs_max_pinned_mb_per_user, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb_per_user,
		 "memory one user's tests may hold for RDMA, in MiB (default 512)");

static DEFINE_HASHTABLE(kverbs_users, 6);
/*
 * Protects kverbs_users and every user's counts; a reference is taken,
 * and the last one dropped, only under it, so a user found in the table
 * is alive.
 */
static DEFINE_SPINLOCK(kverbs_users_lock);

static struct kverbs_user *kverbs_user_find(kuid_t uid)
{
	struct kverbs_user *user;

	hash_for_each_possible(kverbs_users, user, node, __kuid_val(uid))
		if (uid_eq(user->uid, uid))
			return user;
	return NULL;
}

static bool kverbs_user_fits(const struct kverbs_user *user,
			     unsigned int sessions, unsigned long pages)
{
	u64 max_pages = (u64)READ_ONCE(kverbs_max_pinned_mb_per_user) <<
			(20 - PAGE_SHIFT);

	return (u64)user->sessions + sessions <=
	       READ_ONCE(kverbs_max_sessions_per_user) &&
	       (u64)user->pinned + pages <= max_pages;
}

/*
 * Charge @sessions and @pages to the caller's user, within its limits
 * unless @over.  Returns the user, with a reference for the charge,
 * ERR_PTR(-EDQUOT) past a limit, or ERR_PTR(-ENOMEM).
 */
static struct kverbs_user *kverbs_user_charge(unsigned int sessions,
					      unsigned long pages, bool over)
{
	kuid_t uid = current_euid();
	struct kverbs_user *user, *new = NULL;
	int ret = 0;

	spin_lock(&kverbs_users_lock);
	user = kverbs_user_find(uid);
	if (!user) {
		spin_unlock(&kverbs_users_lock);
		/*
		 * Not charged to the caller's memory cgroup: it is shared
		 * by every process of the uid, and there is at most one
		 * per uid with a test running.
		 */
		new = kzalloc(sizeof(*new), GFP_KERNEL);
		if (!new)
			return ERR_PTR(-ENOMEM);
		new->uid = uid;
		spin_lock(&kverbs_users_lock);
		/* Another thread of the same user may have come first. */
		user = kverbs_user_find(uid) ?: new;
	}
	if (!over && !kverbs_user_fits(user, sessions, pages)) {
		ret = -EDQUOT;
		goto out_unlock;
	}
	user->sessions += sessions;
	user->pinned += pages;
	if (user == new) {
		refcount_set(&user->ref, 1);
		hash_add(kverbs_users, &user->node, __kuid_val(uid));
		new = NULL;
	} else {
		refcount_inc(&user->ref);
	}
out_unlock:
	spin_unlock(&kverbs_users_lock);
	kfree(new);
	return ret ? ERR_PTR(ret) : user;
}

/* Give back what kverbs_user_charge() charged, and its reference. */
static void kverbs_user_uncharge(struct kverbs_user *user,
				 unsigned int sessions, unsigned long pages)
{
	bool last;

	spin_lock(&kverbs_users_lock);
	WARN_ON_ONCE(user->sessions < sessions || user->pinned < pages);
	user->sessions -= sessions;
	user->pinned -= pages;
	last = refcount_dec_and_test(&user->ref);
	if (last)
		hash_del(&user->node);
	spin_unlock(&kverbs_users_lock);
	if (last)
		kfree(user);
}

/**
 * kverbs_user_session_begin - count a test against its caller's user
 *
 * Call it in the thread of the test's ioctl.
 *
 * Return: the user, to be passed to kverbs_user_session_end() when the
 * test ends; ERR_PTR(-EDQUOT) when the user already runs
 * max_sessions_per_user tests, or ERR_PTR(-ENOMEM).
 */
struct kverbs_user *kverbs_user_session_begin(void)
{
	return kverbs_user_charge(1, 0, false);
}

/**
 * kverbs_user_session_end - count a test out
 * @user: as kverbs_user_session_begin() returned it
 *
 * May free @user.
 */
void kverbs_user_session_end(struct kverbs_user *user)
{
	kverbs_user_uncharge(user, 1, 0);
}

/**
 * kverbs_user_pin - charge @npages to the caller's user
 * @npages: pages about to be allocated or pinned for a test
 *
 * Call it in the thread of the test's ioctl.
 *
 * Return: the user, to be kept with the pages and passed to
 * kverbs_user_unpin() when they are released; ERR_PTR(-EDQUOT) when
 * that would pass max_pinned_mb_per_user, or ERR_PTR(-ENOMEM).
 */
struct kverbs_user *kverbs_user_pin(unsigned long npages)
{
	return kverbs_user_charge(0, npages, false);
}

/**
 * kverbs_user_unpin - give back what kverbs_user_pin() charged
 * @user: as kverbs_user_pin() returned it
 * @npages: as charged
 *
 * May free @user.
 */
void kverbs_user_unpin(struct kverbs_user *user, unsigned long npages)
{
	kverbs_user_uncharge(user, 0, npages);
}

/* Sessions now, on all files and in all users, against max_sessions. */
static atomic_t kverbs_sessions = ATOMIC_INIT(0);

/**
 * kverbs_sessions_get - count a session in, within max_sessions
 *
 * Return: 0, or -ENFILE when max_sessions are running or held already.
 */
int kverbs_sessions_get(void)
{
	if (atomic_inc_return(&kverbs_sessions) > READ_ONCE(kverbs_max_sessions)) {
		atomic_dec(&kverbs_sessions);
		return -ENFILE;
	}
	return 0;
}

/**
 * kverbs_sessions_hold - count in what a session left behind
 * @as: the user to charge, one that kverbs_sessions_hold() returned
 *	before; NULL for the caller's
 *
 * An endpoint whose release is deferred (kverbs_ep_destroy(),
 * kverbs_ep_park()) holds verbs objects, and maybe memory, after its
 * test ended: it counts against max_sessions, and against its test's
 * user's max_sessions_per_user, until it is released, over the limits if
 * need be, since it exists already.  New tests are refused while such
 * endpoints fill them.  With @as NULL, call it in the thread of the
 * test's ioctl: in a kernel thread no user is charged.
 *
 * Return: the user charged, for kverbs_sessions_release(); NULL if none
 * (a kernel thread, or no memory for a user that was not charged yet).
 */
struct kverbs_user *kverbs_sessions_hold(struct kverbs_user *as)
{
	struct kverbs_user *user;

	atomic_inc(&kverbs_sessions);
	if (as) {
		spin_lock(&kverbs_users_lock);
		as->sessions++;
		refcount_inc(&as->ref);
		spin_unlock(&kverbs_users_lock);
		return as;
	}
	if (current->flags & PF_KTHREAD)
		return NULL;
	user = kverbs_user_charge(1, 0, true);
	return IS_ERR(user) ? NULL : user;
}

/**
 * kverbs_sessions_put - count out what kverbs_sessions_get() counted in
 */
void kverbs_sessions_put(void)
{
	atomic_dec(&kverbs_sessions);
}

/**
 * kverbs_sessions_release - count out what kverbs_sessions_hold() counted in
 * @user: as kverbs_sessions_hold() returned it; may be NULL
 *
 * May free @user.
 */
void kverbs_sessions_release(struct kverbs_user *user)
{
	if (user)
		kverbs_user_uncharge(user, 1, 0);
	atomic_dec(&kverbs_sessions);
}

/**
 * kverbs_users_exit - check that nothing is left charged, at unload
 *
 * Every test has ended by then, and released what it held.
 */
void kverbs_users_exit(void)
{
	WARN_ON(!hash_empty(kverbs_users));
	WARN_ON(atomic_read(&kverbs_sessions));
}
