/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpu-runner.h - apply's GPUs, each in a process of its own.
 *
 * The slow work of a boot (sriov-manage rebinds, MIG changes, GI creation:
 * seconds each) is per GPU, and GPUs do not depend on each other: each GPU's
 * steps (vgpu_apply_gpu_steps()) run in a child, and the host takes as long
 * as its slowest GPU.  A child's log messages come back through a pipe and
 * reach the caller's log callback as one block per GPU, in GPU order, once
 * all are done; nothing is printed here.  The changes stay all or none: a
 * child that succeeded waits for the verdict, and every child undoes its
 * work when one GPU failed.
 */
#ifndef VGPU_GPU_RUNNER_H
#define VGPU_GPU_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "apply.h"

/* What each GPU's process does around its steps; @data is the runner's. */
struct vgpu_runner_ops {
	/* in GPU @i's process, before its steps (NULL: nothing) */
	void (*start)(void *data, struct vgpu_apply *a, size_t i);
	/*
	 * in GPU @i's process, once every GPU has said how it went: keep
	 * (@commit) or undo (NULL: nothing)
	 */
	void (*finish)(void *data, struct vgpu_apply *a, size_t i, bool commit);
};

/**
 * vgpu_runner_apply() - vgpu_apply_gpu_steps() for every GPU of @a, each in
 * a child process, all at once.
 * @a: a run whose @a->gpus vgpu_apply_resolve() filled; its context's log
 *     callback gets each GPU's messages, one GPU after the other in @a->gpus
 *     order (a child's messages are not deduplicated against another's)
 * @ops: what each child does before its steps and after the verdict
 * @data: passed to @ops
 *
 * Every child is told to commit when all succeeded, else to undo.  A
 * signal for this process (vgpu_interrupt()) is passed on to the children,
 * which stop as they would themselves.  Differences the children find
 * (@a->diffs) stay in their processes; a step a child reports (a dry run
 * belongs in one process) reaches the log as "would TEXT".
 * Return: 0, or -errno with the first failing GPU's message in @a->ctx
 * (" (and other GPUs failed: above)" when more did), or the reason a
 * child could not be started.
 */
int vgpu_runner_apply(struct vgpu_apply *a, const struct vgpu_runner_ops *ops, void *data);

#endif
