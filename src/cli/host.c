// SPDX-License-Identifier: GPL-2.0-or-later
/* Opening and reading the host for a command; the library's log sink. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalogue.h"
#include "cli.h"
#include "read-host.h"
#include "fabric.h"
#include "nvml.h"

/*
 * Each warning is printed once: a damaged file seen through several VFs
 * says so once.  A hash set keeps this linear in the number of messages
 * (a tree with 20,000 junk entries must not cost seconds).
 */
struct seen_set {
	char **slots;
	size_t cap, n;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Add @msg; false when it was there already. */
static bool seen_add(struct seen_set *set, const char *msg)
{
	size_t i;

	if (set->n * 2 >= set->cap) {
		struct seen_set bigger = { .cap = set->cap ? set->cap * 2 : 64 };

		bigger.slots = vgpu_xcalloc(bigger.cap, sizeof(*bigger.slots));
		for (size_t k = 0; k < set->cap; k++) {
			if (!set->slots[k])
				continue;
			for (i = hash(set->slots[k]) & (bigger.cap - 1); bigger.slots[i];
			     i = (i + 1) & (bigger.cap - 1))
				;
			bigger.slots[i] = set->slots[k];
		}
		free(set->slots);
		bigger.n = set->n;
		*set = bigger;
	}
	for (i = hash(msg) & (set->cap - 1); set->slots[i]; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->slots[i], msg) == 0)
			return false;
	set->slots[i] = vgpu_xstrdup(msg);
	set->n++;
	return true;
}

static struct seen_set seen; /* CLI-only: one process, one run */

void cli_log_cb(void *data, int priority, const char *msg)
{
	struct cli *c = data;

	if (!seen_add(&seen, msg))
		return;
	if (priority <= LOG_WARNING)
		fprintf(c->err, "vgpuctl: warning: %s\n", msg);
	else
		fprintf(c->err, "vgpuctl: %s\n", msg);
}

void cli_cleanup(struct cli *c)
{
	vgpu_model_free(c->model);
	vgpu_records_clear(&c->recs);
	vgpu_nvml_close(c->nvml);
	if (c->cat)
		vgpu_catalogue_clear(c->cat);
	free(c->cat);
	vgpu_sysfs_free(c->fs);
	free(c->hook_xml);
	vgpu_ctx_clear(&c->ctx);
	for (size_t i = 0; i < seen.cap; i++)
		free(seen.slots[i]);
	free(seen.slots);
	memset(&seen, 0, sizeof(seen));
}

const char *cli_default_uri(void)
{
	const char *uri = getenv("LIBVIRT_DEFAULT_URI");

	return uri && *uri ? uri : "qemu:///system";
}

/* Whether this binary is the one in its build tree's src/ (not an installed copy). */
bool cli_from_build_tree(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t l = strlen(VGPUCTL_BUILD_BIN_DIR);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	return (size_t)n > l && strncmp(exe, VGPUCTL_BUILD_BIN_DIR, l) == 0 && exe[l] == '/' &&
	       !strchr(exe + l + 1, '/');
}

int cli_read_host(struct cli *c, unsigned what)
{
	if (c->model_ready)
		return 0;
	if (c->sysroot && !*c->sysroot) {
		cli_error(c, "--sysroot '': an empty root is not a directory");
		return EXIT_FAILURE;
	}
	if (!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	/*
	 * A GPU listing of a tree without a PCI bus (an empty directory, a
	 * mistyped path) is a mistake, not a host without GPUs; a topology
	 * dump is still a host for topology.
	 */
	if ((what & CLI_READ_GPUS) && c->sysroot) {
		VGPU_AUTOSYSDIR bus = { 0 };

		if (vgpu_sysdir_open(c->fs, &bus, "sys/bus/pci") == -ENOENT) {
			cli_error(c, "--sysroot '%s': no sys/bus/pci below it: not a host's root",
				  c->sysroot);
			return EXIT_FAILURE;
		}
	}
	vgpu_model_free(c->model);
	c->model = NULL;
	vgpu_records_clear(&c->recs);
	if (vgpu_host_read(&c->ctx, c->fs, what & ~(CLI_READ_NVML | CLI_READ_GPUS), &c->model,
			   &c->recs) < 0) {
		cli_error(c, "%s", vgpu_ctx_error(&c->ctx));
		return EXIT_FAILURE;
	}
	if ((what & CLI_READ_NVML) && cli_nvml(c))
		vgpu_nvml_fill(&c->ctx, c->nvml, c->model);
	/* as nvidia-smi's "No devices were found": an empty listing is not silence */
	if ((what & CLI_READ_GPUS) && !c->model->n_gpus)
		fputs("vgpuctl: no NVIDIA GPU found\n", c->err);
	return 0;
}

void cli_name_held_types(struct cli *c)
{
	bool unnamed = false;

	for (size_t i = 0; !unnamed && i < c->model->n_gpus; i++) {
		const struct vgpu_gpu *g = &c->model->gpus[i];

		for (size_t j = 0; !unnamed && j < g->n_parents; j++) {
			const struct vgpu_type *t;

			if (!g->parents[j].current_type)
				continue;
			t = vgpu_model_find_type(c->model, g, g->parents[j].current_type);
			unnamed = !t || !t->name;
		}
	}
	if (unnamed && !c->nvml_tried && cli_nvml(c))
		vgpu_nvml_fill(&c->ctx, c->nvml, c->model);
}

char *cli_host_name(struct cli *c)
{
	struct vgpu_sysdir root;
	char buf[256];

	if (!c->fs && vgpu_sysfs_open(&c->ctx, c->sysroot, &c->fs) < 0)
		return NULL;
	vgpu_sysdir_root(c->fs, &root);
	if (vgpu_sysfs_read_str(&root, buf, sizeof(buf), "proc/sys/kernel/hostname") < 0 || !*buf)
		return NULL;
	return vgpu_xstrdup(buf);
}

struct vgpu_nvml *cli_nvml(struct cli *c)
{
	if (c->nvml_tried)
		return c->nvml;
	c->nvml_tried = true;
	if (!c->nvml_path && c->sysroot && strcmp(c->sysroot, "/") != 0)
		return NULL; /* another host's tree: this host's driver does not speak for it */
	if (vgpu_nvml_open(&c->ctx, c->nvml_path, &c->nvml) < 0) {
		/* a named library must load; the default may be absent (no driver): the
		 * commands that fall back say so */
		vgpu_log(&c->ctx, c->nvml_path ? LOG_WARNING : LOG_DEBUG, "%s",
			 vgpu_ctx_error(&c->ctx));
		c->nvml = NULL;
	}
	return c->nvml;
}

int cli_nvfm(struct cli *c, struct vgpu_fm **out)
{
	*out = NULL;
	if (!c->nvfm_path && c->sysroot && strcmp(c->sysroot, "/") != 0)
		return 0; /* another host's tree: this host's Fabric Manager is not its */
	return vgpu_fm_open(&c->ctx, c->nvfm_path, c->fs, out);
}

int cli_fabric(struct cli *c, struct vgpu_fabric *out)
{
	enum vgpu_fabric_mode mode = VGPU_FABRIC_NONE;
	struct vgpu_fm *fm = NULL;
	bool modules = false;
	int r = vgpu_fabric_mode_read(&c->ctx, c->fs, &mode);

	memset(out, 0, sizeof(*out));
	out->mode = VGPU_FABRIC_NONE;
	if (r == 0 && mode == VGPU_FABRIC_VGPU)
		r = cli_nvfm(c, &fm);
	if (r < 0 || !fm) {
		out->mode = r < 0 || mode == VGPU_FABRIC_VGPU ? VGPU_FABRIC_NONE : mode;
		return r;
	}
	for (size_t i = 0; i < c->model->n_gpus; i++)
		modules |= c->model->gpus[i].module_id >= 0;
	if (!modules && cli_nvml(c))
		vgpu_nvml_module_ids(&c->ctx, c->nvml, c->model);
	out->mode = mode; /* Fabric Manager cannot tell it: the configuration does */
	r = vgpu_fm_read(&c->ctx, fm, c->model, out);
	vgpu_fm_close(fm);
	return r;
}

int cli_find_gpu(struct cli *c, const char *cmd, const char *arg, const struct vgpu_gpu **out)
{
	*out = NULL;
	if (!arg)
		return 0;
	*out = vgpu_model_find_gpu_arg(c->model, arg);
	if (*out)
		return 0;
	cli_error(c, "%s%s--gpu '%s': no such NVIDIA GPU (see 'vgpuctl gpus')", cmd ? cmd : "",
		  cmd ? ": " : "", arg);
	return EXIT_FAILURE;
}

static void on_stop(int sig)
{
	vgpu_interrupt(sig);
}

/*
 * Ctrl-C, a hang-up or a service stop while a command changes the host:
 * the library stops the program it runs (its own process group hears
 * nothing), ends its lock waits, rolls back and unlocks;
 * cli_reraise_stop() raises the signal again once that is done.  One that
 * was ignored when we started (nohup, a background job) stays ignored.
 */
void cli_catch_stops(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop }, old;

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

void cli_reraise_stop(void)
{
	int sig = vgpu_interrupted();

	if (!sig)
		return;
	fflush(NULL);
	signal(sig, SIG_DFL);
	raise(sig);
}
