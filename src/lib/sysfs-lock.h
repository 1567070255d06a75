/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysfs-lock.h - locks below the root: the host lock, one lock per GPU,
 * waiters served in the order they came, waits bounded in wall-clock time.
 * Order: the host lock, then GPU locks by address; no lock is held across a
 * call that may wait on us (a libvirt call that runs our hook).
 */
#ifndef VGPU_SYSFS_LOCK_H
#define VGPU_SYSFS_LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "sysfs.h"
#include "util.h"

/**
 * vgpu_sysfs_lock() - take the host-wide lock ROOT/run/vgpuctl/lock
 * (flock(2), exclusive), waiting at most @timeout_ms for another holder.
 * Waiters are served in the order they came: each queues a ticket in
 * ROOT/run/vgpuctl/queue and only the oldest live ticket tries the flock.
 * @ctx: where errors go
 * @fs: the host root; holds the lock's fd
 * @timeout_ms: how long to wait, in wall-clock (monotonic) time (0: try once)
 *
 * Held until vgpu_sysfs_unlock() or vgpu_sysfs_free() (or process exit).
 * Taking it again while held is a no-op.  ROOT/run/vgpuctl is created if missing.
 * Return: 0 or -errno with a message in @ctx (-EWOULDBLOCK: still held).
 */
int vgpu_sysfs_lock(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned timeout_ms);
/**
 * vgpu_sysfs_unlock() - release the lock (fine when not held).
 * @fs: the host root
 */
void vgpu_sysfs_unlock(struct vgpu_sysfs *fs);
/**
 * vgpu_sysfs_lock_gpu() - take the lock of one GPU,
 * ROOT/run/vgpuctl/gpu/<BDF>/lock, served in order and bounded as the host
 * lock is.  Driver writes to a GPU's parents happen under it, so the starts
 * of domains on different GPUs do not wait for each other.  Order: the host
 * lock (when held) before GPU locks, GPU locks by address.
 * @ctx: where errors go
 * @fs: the host root
 * @gpu: the GPU's PCI address
 * @timeout_ms: how long to wait, in wall-clock time
 * @fd: the lock's descriptor, on success: closing it releases the lock
 * Return: 0 or -errno with a message in @ctx (-EWOULDBLOCK: still held).
 */
int vgpu_sysfs_lock_gpu(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const char *gpu,
			unsigned timeout_ms, int *fd);
/* A set of GPU locks, taken together in the one order every run uses. */
struct vgpu_gpu_locks {
	struct vgpu_strv gpus; /* the GPUs' PCI addresses, each once */
	int *fds; /* the locks held, in the order taken */
	size_t n; /* how many are held */
};
/**
 * vgpu_gpu_locks_add() - add @gpu to the set (a second add is a no-op).
 * @l: the set, zeroed before its first use
 * @gpu: a GPU's PCI address, normalized
 */
void vgpu_gpu_locks_add(struct vgpu_gpu_locks *l, const char *gpu);
/**
 * vgpu_gpu_locks_take() - take the lock of every GPU of @l in byte order of
 * their addresses, all by @deadline_ms.  A run that holds the host lock
 * never waits here (vgpu_locks_take() tries, then lets the host lock go):
 * a start on an idle GPU must not queue behind a busy GPU's work.
 * @ctx: where errors go
 * @fs: the host root
 * @l: the set
 * @deadline_ms: on vgpu_monotonic_ms()'s clock
 * Return: 0, or -errno with a message in @ctx and none of the locks held.
 */
int vgpu_gpu_locks_take(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu_locks *l,
			uint64_t deadline_ms);
/**
 * vgpu_gpu_locks_release() - let go of the locks held and empty the set.
 * @l: the set (one never taken is fine)
 */
void vgpu_gpu_locks_release(struct vgpu_gpu_locks *l);
/**
 * vgpu_locks_take() - the host lock and the locks of the GPUs a decision
 * names, without ever waiting for a GPU lock while the host lock is held.
 * @ctx: where errors go
 * @fs: the host root
 * @deadline_ms: the whole wait ends then (vgpu_monotonic_ms()'s clock)
 * @gpus: called under the host lock: reads what it decides on (again, each
 * time) and adds the GPUs whose locks it needs to its set; 0 or -errno
 * with a message in @ctx
 * @arg: for @gpus
 * @held: zeroed before the call; the GPU locks held on success
 *
 * Under the host lock the GPU locks are only tried.  When one is busy, the
 * host lock is let go, the GPU locks are waited for alone, then the host
 * lock is taken again and @gpus decides again (the host may have changed
 * meanwhile); that ends when its GPUs are all held, or at @deadline_ms.
 * Return: 0 with the host lock and @held's locks held, or -errno with a
 * message in @ctx and no lock held.
 */
int vgpu_locks_take(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, uint64_t deadline_ms,
		    int (*gpus)(void *arg, struct vgpu_gpu_locks *want), void *arg,
		    struct vgpu_gpu_locks *held);
#define VGPU_LOCK_PATH "run/vgpuctl/lock"

#endif
