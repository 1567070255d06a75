// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nvtools.c - nvidia-smi and sriov-manage, one argv each, read back after
 * every change.  Output formats: the nvidia-smi samples of the NVIDIA MIG
 * User Guide ("Getting Started with MIG") and sriov-manage as the NVIDIA
 * Virtual GPU Software User Guide runs it; judge by the output, not only the
 * exit code (nvidia-smi -mig exits 0 with a "pending" warning when a client
 * holds the GPU).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "exec.h"
#include "nvtools.h"
#include "util.h"

#define DEFAULT_TIMEOUT_MS (5 * 60 * 1000L)

static long timeout(const struct vgpu_nvtools *t)
{
	return t->timeout_ms > 0 ? t->timeout_ms : DEFAULT_TIMEOUT_MS;
}

/*
 * Run a changing command, or report it as a dry run's step (@what: its
 * kind, GPU, object and count); @res (NULL: not wanted) holds its output.
 */
static int change(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *const *argv,
		  const struct vgpu_step *what, struct vgpu_exec_result *res)
{
	VGPU_AUTOFREE char *cmd = vgpu_argv_str(argv);
	struct vgpu_exec_result mine;
	int e;

	if (!res)
		res = &mine;
	*res = (struct vgpu_exec_result){ 0 };
	if (t->dry_run) {
		struct vgpu_step s = *what;

		s.means = VGPU_STEP_BY_PROGRAM;
		s.path = argv[0];
		vgpu_step_reportf(ctx, &s, "run: %s", cmd);
		return 0;
	}
	vgpu_log(ctx, LOG_INFO, "running: %s", cmd);
	e = vgpu_exec_ok(ctx, argv, timeout(t), res);
	if (res == &mine)
		vgpu_exec_clear(res);
	return e;
}

int vgpu_nv_mig_mode(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus,
		     int *current, int *pending)
{
	const char *argv[] = { t->nvidia_smi,
			       "-i",
			       bus,
			       "--query-gpu=pci.bus_id,mig.mode.current,mig.mode.pending",
			       "--format=csv,noheader",
			       NULL };
	struct vgpu_exec_result res;
	int e = vgpu_exec_ok(ctx, argv, timeout(t), &res);

	if (e == 0)
		e = vgpu_mig_parse_mode(ctx, res.out, current, pending);
	vgpu_exec_clear(&res);
	return e;
}

int vgpu_nv_set_mig(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus, bool on)
{
	const char *argv[] = { t->nvidia_smi, "-i", bus, "-mig", on ? "1" : "0", NULL };
	const struct vgpu_step what = { .kind = on ? VGPU_STEP_MIG_ON : VGPU_STEP_MIG_OFF,
					.object = VGPU_OBJECT_GPU,
					.gpu = bus,
					.count = 1 };
	struct vgpu_exec_result res;
	char why[512] = "";
	int cur, pend, e;

	e = change(ctx, t, argv, &what, &res);
	if (e == 0 && !t->dry_run) {
		/* "Warning: MIG mode is in pending enable state ...: In use by another client" */
		vgpu_last_line(res.out, why, sizeof(why));
		e = vgpu_nv_mig_mode(ctx, t, bus, &cur, &pend);
		if (e == 0 && cur != (int)on)
			e = vgpu_error(ctx, -EBUSY,
				       "GPU %s: MIG mode is still %s after '-mig %d'%s%s", bus,
				       cur == 1 ? "enabled" : "disabled", on, why[0] ? ": " : "",
				       why);
	}
	vgpu_exec_clear(&res);
	return e;
}

int vgpu_nv_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const struct vgpu_mig_board *b,
		const char *bus, struct vgpu_mig_gi **gis, size_t *n)
{
	const char *argv[] = { t->nvidia_smi, "mig", "-i", bus, "-lgi", NULL };
	struct vgpu_exec_result res;
	int e = vgpu_exec(ctx, argv, timeout(t), &res);

	*gis = NULL;
	*n = 0;
	/*
	 * no GIs: "No GPU instances found: Not Found" with exit 6 (NVML's
	 * NOT_FOUND), on stdout or stderr depending on the driver
	 */
	bool none = (res.out && strstr(res.out, "No GPU instances found")) ||
		    (res.err && strstr(res.err, "No GPU instances found"));

	if (e == 0 && res.status != 0 && !none)
		e = vgpu_exec_failed(ctx, argv, &res);
	if (e == 0 && !none)
		e = vgpu_mig_parse_lgi(ctx, b, res.out, gis, n);
	vgpu_exec_clear(&res);
	return e;
}

int vgpu_nv_create_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus,
		       const struct vgpu_mig_gi *gis, size_t n)
{
	VGPU_AUTOFREE char *ids = NULL, *names = NULL;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		vgpu_append(&ids, "%s%d", i ? "," : "", gis[i].profile->id);
		vgpu_append(&names, "%s%s", i ? "," : "", gis[i].profile->name);
	}
	{
		const char *argv[] = { t->nvidia_smi, "mig", "-i", bus, "-cgi", ids, "-C", NULL };
		const struct vgpu_step what = { .kind = VGPU_STEP_GI_CREATE,
						.object = VGPU_OBJECT_GPU_INSTANCE,
						.gpu = bus,
						.profile = names,
						.count = (unsigned)n };

		return change(ctx, t, argv, &what, NULL);
	}
}

int vgpu_nv_set_hetero(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus, bool on)
{
	const char *argv[] = { t->nvidia_smi, "vgpu", "-i", bus, "-shm", on ? "1" : "0", NULL };
	const struct vgpu_step what = { .kind = on ? VGPU_STEP_MIXED_ON : VGPU_STEP_MIXED_OFF,
					.object = VGPU_OBJECT_GPU,
					.gpu = bus,
					.count = 1 };

	return change(ctx, t, argv, &what, NULL);
}

int vgpu_nv_destroy_gis(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus)
{
	const char *dci[] = { t->nvidia_smi, "mig", "-i", bus, "-dci", NULL };
	const char *dgi[] = { t->nvidia_smi, "mig", "-i", bus, "-dgi", NULL };
	const struct vgpu_step ci = { .kind = VGPU_STEP_CI_DESTROY,
				      .object = VGPU_OBJECT_GPU_INSTANCE,
				      .gpu = bus };
	const struct vgpu_step gi = { .kind = VGPU_STEP_GI_DESTROY,
				      .object = VGPU_OBJECT_GPU_INSTANCE,
				      .gpu = bus };

	/* a GI without CIs makes -dci fail with nothing to destroy: -dgi decides */
	change(ctx, t, dci, &ci, NULL);
	return change(ctx, t, dgi, &gi, NULL);
}

static bool unbind_lock(const struct vgpu_exec_result *res)
{
	return (res->err && strstr(res->err, "unbindLock")) ||
	       (res->out && strstr(res->out, "unbindLock"));
}

int vgpu_nv_enable_vfs(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus)
{
	const char *argv[] = { t->sriov_manage, "-e", bus, NULL };
	const struct vgpu_step what = { .kind = VGPU_STEP_VFS_ON,
					.object = VGPU_OBJECT_GPU,
					.gpu = bus };
	int tries = t->unbind_tries > 0 ? t->unbind_tries : 5;
	long wait_ms = t->unbind_wait_ms > 0 ? t->unbind_wait_ms : 2000;
	struct vgpu_exec_result res;
	int e = 0;

	for (int i = 1; i <= tries; i++) {
		e = change(ctx, t, argv, &what, &res);
		if (e == 0 || !unbind_lock(&res)) {
			vgpu_exec_clear(&res);
			return e;
		}
		vgpu_exec_clear(&res);
		if (i < tries) {
			vgpu_log(ctx, LOG_INFO,
				 "GPU %s is held by a client (unbindLock); try %d of %d", bus,
				 i + 1, tries);
			usleep((useconds_t)wait_ms * 1000);
		}
	}
	return vgpu_error(
		ctx, e,
		"cannot enable the VFs of GPU %s: a client holds the GPU (sriov-manage could not take its unbindLock %d times; stop DCGM, nvsm or other NVML users and run again)",
		bus, tries);
}

int vgpu_nv_disable_vfs(struct vgpu_ctx *ctx, const struct vgpu_nvtools *t, const char *bus)
{
	const char *argv[] = { t->sriov_manage, "-d", bus, NULL };
	const struct vgpu_step what = { .kind = VGPU_STEP_VFS_OFF,
					.object = VGPU_OBJECT_GPU,
					.gpu = bus };

	return change(ctx, t, argv, &what, NULL);
}
