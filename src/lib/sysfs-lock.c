// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Locks below the root: the host lock (run/vgpuctl/lock), the lock of each
 * GPU (run/vgpuctl/gpu/BDF/lock), the queue of tickets that serves their
 * waiters in order, and vgpu_locks_take(), which takes the host lock and a
 * decision's GPU locks without waiting for a GPU while holding the host
 * lock.  See sysfs-lock.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "sysfs-lock.h"
#include "sysfs-priv.h"
#include "sysfs-state.h"

/*
 * The waiters' queue: each waiter for a lock puts a ticket
 * "BOOTTIME-NS.PID" in DIR/queue and only the oldest ticket of a waiter
 * that is alive and running may take the flock, so waiters are served in
 * the order they came, not by whoever polls first.  The queue is fairness
 * only: the flock alone keeps two runs out of the lock together.
 *
 * A ticket is alive while its waiter holds a flock on it: the waiter locks
 * the file before its name appears and the kernel drops the lock when the
 * waiter dies, whatever PID namespace it ran in and whoever has its PID now.
 * A PID read from a name could be reused, or be another namespace's.
 * A waiter proves it is running by touching its ticket (its mtime) every
 * TICKET_BEAT_MS; a ticket untouched for TICKET_STALL_MS is a waiter
 * stopped (Ctrl-Z, SIGSTOP) or starved, and the others pass it: it loses
 * its turn, not everybody theirs, and takes its place again if it runs.
 */
#define TICKET_BEAT_MS 100
#define TICKET_STALL_MS 1000

enum ticket_state { TICKET_WAITING, TICKET_STALLED, TICKET_DEAD };

static enum ticket_state ticket_state(int qfd, const char *name)
{
	int fd = openat(qfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	enum ticket_state state = TICKET_WAITING;

	if (fd < 0)
		return errno == ENOENT ? TICKET_DEAD : TICKET_WAITING; /* unreadable: wait for it */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		state = TICKET_DEAD; /* nobody holds it: its waiter is gone */
	} else if (fstat(fd, &st) == 0 && sysfs_mtime_age_ms(&st) > TICKET_STALL_MS) {
		state = TICKET_STALLED;
	}
	close(fd);
	return state;
}

/*
 * How many waiters that are alive and running came before @mine; the
 * tickets of dead waiters are removed on the way.  Return: the count, or -errno.
 */
static int tickets_ahead(const struct vgpu_sysdir *q, const char *mine)
{
	VGPU_AUTOSTRV names = { 0 };
	int ahead = 0, r = vgpu_sysfs_list_dir(q, &names, ".");

	if (r < 0)
		return r;
	for (size_t i = 0; i < names.n; i++) {
		const char *n = names.items[i];

		/* ".NAME": a ticket being made, not yet locked and named */
		if (n[0] == '.' || strcmp(n, mine) >= 0)
			continue;
		switch (ticket_state(q->fd, n)) {
		case TICKET_DEAD:
			(void)unlinkat(q->fd, n, 0);
			break;
		case TICKET_STALLED:
			break;
		case TICKET_WAITING:
			ahead++;
			break;
		}
	}
	return ahead;
}

/*
 * Put this run's ticket in the queue: made under a dot name, locked, then
 * renamed, so no other waiter ever sees it unlocked.  Return: the ticket's
 * fd (holding the flock that says this waiter lives), or -errno.
 */
static int ticket_take(int qfd, char *ticket, size_t len)
{
	char tmp[96];
	struct timespec arrival;
	int fd;

	clock_gettime(CLOCK_BOOTTIME, &arrival);
	snprintf(ticket, len, "%020llu.%ld",
		 (unsigned long long)arrival.tv_sec * 1000000000ULL +
			 (unsigned long long)arrival.tv_nsec,
		 (long)getpid());
	snprintf(tmp, sizeof(tmp), ".%s", ticket);
	fd = openat(qfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || renameat(qfd, tmp, qfd, ticket) < 0) {
		int e = -errno;

		(void)unlinkat(qfd, tmp, 0);
		close(fd);
		return e;
	}
	return fd;
}

/* Remove this run's ticket: the name first, so nobody sees it unlocked. */
static int ticket_drop(int qfd, const char *ticket, int fd)
{
	int r = unlinkat(qfd, ticket, 0) < 0 ? -errno : 0;

	close(fd);
	return r;
}

/*
 * The lock file @dir/lock (flock, exclusive), waiters served in the order
 * they came through the tickets of @dir/queue, the wait bounded in
 * wall-clock time.  @what names it in messages ("the host lock").
 */
static int fifo_lock(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *dir_rel,
		     const char *what, unsigned timeout_ms, int *out)
{
	VGPU_AUTOSYSDIR dir = { .fd = -1 };
	VGPU_AUTOSYSDIR queue = { .fd = -1 };
	char show[VGPU_SHOW_LEN], ticket[64], qrel[VGPU_PATH_MAX];
	uint64_t start = vgpu_monotonic_ms(), waited = 0, beat = start;
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	int r, fd, tfd, ahead = 0;

	snprintf(qrel, sizeof(qrel), "%s/queue", dir_rel);
	r = vgpu_sysfs_mkdirs(fs, &queue, qrel);
	if (r == 0)
		r = vgpu_sysdir_open(fs, &dir, "%s", dir_rel);
	if (r < 0) {
		vgpu_sysdir_root(fs, &dir);
		return vgpu_error(ctx, r, "cannot create '%s': %s",
				  vgpu_sysdir_show(&dir, qrel, show, sizeof(show)),
				  vgpu_strerror(r));
	}
	vgpu_sysdir_show(&dir, "lock", show, sizeof(show));
	fd = openat(dir.fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return vgpu_error(ctx, -errno, "cannot open lock '%s': %s", show, strerror(errno));
	/* the lock is free and nobody waits: no ticket to make (the common case) */
	if (tickets_ahead(&queue, "~") == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
		*out = fd;
		return 0;
	}
	tfd = ticket_take(queue.fd, ticket, sizeof(ticket));
	if (tfd < 0) {
		close(fd);
		return vgpu_error(ctx, tfd, "cannot queue for %s '%s': %s", what, show,
				  strerror(-tfd));
	}
	/* bounded, in wall-clock time: a hook waiting here blocks a VM start */
	for (;;) {
		uint64_t now;

		ahead = tickets_ahead(&queue, ticket);
		if (ahead == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (ahead < 0 || (ahead == 0 && errno != EWOULDBLOCK && errno != EINTR)) {
			r = ahead < 0 ? ahead : -errno;
			(void)ticket_drop(queue.fd, ticket, tfd);
			close(fd);
			return vgpu_error(ctx, r, "cannot lock '%s': %s", show, strerror(-r));
		}
		now = vgpu_monotonic_ms();
		waited = now - start;
		if (vgpu_interrupted()) { /* Ctrl-C: stop waiting, nothing was changed */
			(void)ticket_drop(queue.fd, ticket, tfd);
			close(fd);
			return vgpu_error(ctx, -EINTR,
					  "interrupted (signal %d) while waiting for %s",
					  vgpu_interrupted(), what);
		}
		if (waited >= timeout_ms) {
			(void)ticket_drop(queue.fd, ticket, tfd);
			close(fd);
			return vgpu_error(
				ctx, -EWOULDBLOCK,
				"another vgpuctl holds %s '%s' (waited %llu ms, %d more waiting before this run)",
				what, show, (unsigned long long)waited, ahead);
		}
		/* still here and running: the others keep this run's turn */
		if (now - beat >= TICKET_BEAT_MS) {
			(void)futimens(tfd, NULL);
			beat = now;
		}
		nanosleep(&nap, NULL);
	}
	r = ticket_drop(queue.fd, ticket, tfd);
	if (r < 0)
		vgpu_warn(ctx, "cannot remove the lock ticket '%s/%s': %s",
			  vgpu_sysdir_show(&queue, ".", show, sizeof(show)), ticket, strerror(-r));
	*out = fd;
	return 0;
}

int vgpu_sysfs_lock(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned timeout_ms)
{
	if (fs->lockfd >= 0)
		return 0;
	return fifo_lock(ctx, fs, "run/vgpuctl", "the host lock", timeout_ms, &fs->lockfd);
}

void vgpu_sysfs_unlock(struct vgpu_sysfs *fs)
{
	if (fs->lockfd >= 0)
		close(fs->lockfd); /* drops the flock */
	fs->lockfd = -1;
}

int vgpu_sysfs_lock_gpu(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *gpu,
			unsigned timeout_ms, int *fd)
{
	char bdf[VGPU_BDF_LEN], rel[VGPU_PATH_MAX], what[64];

	if (vgpu_bdf_normalize(gpu, bdf) < 0)
		return vgpu_error(ctx, -EINVAL, "'%s' is not a PCI address", gpu);
	snprintf(rel, sizeof(rel), "run/vgpuctl/gpu/%s", bdf);
	snprintf(what, sizeof(what), "the lock of GPU %s", bdf);
	return fifo_lock(ctx, fs, rel, what, timeout_ms, fd);
}

void vgpu_gpu_locks_add(struct vgpu_gpu_locks *l, const char *gpu)
{
	for (size_t i = 0; i < l->gpus.n; i++)
		if (strcmp(l->gpus.items[i], gpu) == 0)
			return;
	vgpu_strv_push(&l->gpus, vgpu_xstrdup(gpu));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vgpu_gpu_locks_take(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu_locks *l,
			uint64_t deadline_ms)
{
	/* byte order: every run takes them in this one order (no cycle) */
	if (l->gpus.n)
		qsort(l->gpus.items, l->gpus.n, sizeof(*l->gpus.items), cmp_str);
	free(l->fds);
	l->fds = vgpu_xcalloc(l->gpus.n ? l->gpus.n : 1, sizeof(*l->fds));
	for (l->n = 0; l->n < l->gpus.n; l->n++) {
		uint64_t now = vgpu_monotonic_ms();
		int e = vgpu_sysfs_lock_gpu(ctx, fs, l->gpus.items[l->n],
					    deadline_ms > now ? (unsigned)(deadline_ms - now) : 0,
					    &l->fds[l->n]);

		if (e < 0) {
			vgpu_gpu_locks_release(l);
			return e;
		}
	}
	return 0;
}

void vgpu_gpu_locks_release(struct vgpu_gpu_locks *l)
{
	while (l->n)
		close(l->fds[--l->n]); /* drops the flock */
	free(l->fds);
	l->fds = NULL;
	vgpu_strv_clear(&l->gpus);
}

/* Is every GPU of @want in @have? */
static bool gpus_within(const struct vgpu_strv *want, const struct vgpu_strv *have)
{
	for (size_t i = 0; i < want->n; i++) {
		size_t k = 0;

		while (k < have->n && strcmp(want->items[i], have->items[k]) != 0)
			k++;
		if (k == have->n)
			return false;
	}
	return true;
}

static void gpus_copy(struct vgpu_gpu_locks *to, const struct vgpu_strv *from)
{
	for (size_t i = 0; i < from->n; i++)
		vgpu_gpu_locks_add(to, from->items[i]);
}

int vgpu_locks_take(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, uint64_t deadline_ms,
		    int (*gpus)(void *arg, struct vgpu_gpu_locks *want), void *arg,
		    struct vgpu_gpu_locks *held)
{
	for (;;) {
		struct vgpu_gpu_locks want = { .n = 0 };
		uint64_t now = vgpu_monotonic_ms();
		int e = vgpu_sysfs_lock(ctx, fs,
					deadline_ms > now ? (unsigned)(deadline_ms - now) : 0);

		if (e == 0)
			e = gpus(arg, &want);
		if (e == 0 && held->n && gpus_within(&want.gpus, &held->gpus)) {
			vgpu_gpu_locks_release(&want);
			return 0; /* waited for without the host lock: held already */
		}
		if (e == 0) {
			/* under the host lock: try, never wait */
			vgpu_gpu_locks_release(held);
			gpus_copy(held, &want.gpus);
			e = vgpu_gpu_locks_take(ctx, fs, held, vgpu_monotonic_ms());
			if (e == 0) {
				vgpu_gpu_locks_release(&want);
				return 0;
			}
		}
		vgpu_sysfs_unlock(fs);
		if (e != -EWOULDBLOCK || !want.gpus.n) {
			vgpu_gpu_locks_release(&want);
			vgpu_gpu_locks_release(held);
			return e;
		}
		/* a GPU is busy: wait for its lock alone, then decide again */
		vgpu_ctx_clear(ctx);
		gpus_copy(held, &want.gpus);
		vgpu_gpu_locks_release(&want);
		e = vgpu_gpu_locks_take(ctx, fs, held, deadline_ms);
		if (e < 0)
			return e;
	}
}
