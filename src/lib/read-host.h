/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read-host.h - the host as every command, apply and the hook see it: the
 * readers' model (read-pci.c, read-types.c, read-topo.c), with the owner
 * records counted in and the stored type catalogues merged back
 * (read-host.c).
 */
#ifndef VGPU_READ_HOST_H
#define VGPU_READ_HOST_H

#include "ctx.h"
#include "mig.h"
#include "model.h"
#include "records.h"
#include "sysfs.h"

enum {
	VGPU_READ_TYPES = 1, /* type catalogues and what each parent offers */
	VGPU_READ_TOPOLOGY = 2, /* NUMA nodes, CPUs, siblings (always read when a GPU needs it) */
};

/**
 * vgpu_model_read() - read the host below @fs into a new model.
 * @ctx: errors, and warnings about damaged files
 * @fs: the host root
 * @what: VGPU_READ_* flags.
 * @out: the model, on success
 *
 * Damaged entries are reported at LOG_WARNING through @ctx and skipped;
 * only a host that cannot be read at all fails.  Call again after a
 * write to see the new state.  The topology is read with
 * VGPU_READ_TOPOLOGY or whenever a GPU's NUMA node must be derived from it.
 * Owner records and stored catalogues are not read: vgpu_host_read() does that.
 * Return: 0 or -errno with a message in @ctx; caller frees *out.
 */
int vgpu_model_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned what,
		    struct vgpu_model **out);
/**
 * vgpu_host_read() - read the host below @fs: its GPUs, parents and (with
 * VGPU_READ_TYPES) type catalogues, plus every owner record, so that a VF
 * reserved or claimed by a record counts as taken whether or not its vGPU
 * exists (a --per-start reservation, a vGPU gone after a reboot).
 * @ctx: errors, and warnings about damaged files
 * @fs: the host root
 * @what: VGPU_READ_* flags
 * @out: the model, on success
 * @recs: the records read, on success (NULL: not wanted)
 * Return: 0 or -errno with a message in @ctx; caller frees *out and clears @recs.
 */
int vgpu_host_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, unsigned what,
		   struct vgpu_model **out, struct vgpu_records *recs);

/**
 * vgpu_host_arch() - the host's machine architecture, as uname -m says it
 * ("x86_64", "aarch64").  Read from the tree: proc/sys/kernel/arch (recent
 * kernels), so a --sysroot tree says its own; uname(2) only for the
 * real host ("/") when that file is missing, since uname describes the
 * machine vgpuctl runs on, not a tree taken from another one.
 * @fs: the host root
 * @buf: the architecture, NUL-terminated, on success
 * @len: the size of @buf
 * Return: 0, or -ENOENT when the tree does not say (callers then do not
 * compare).
 */
int vgpu_host_arch(struct vgpu_sysfs *fs, char *buf, size_t len);

/**
 * vgpu_host_warn_unknown_type() - warn about @t if its name is outside
 * NVIDIA's grammar, naming the file it came from.
 * @ctx: where the warning goes (each message is shown once by the CLI)
 * @t: a type of a model
 */
void vgpu_host_warn_unknown_type(struct vgpu_ctx *ctx, const struct vgpu_type *t);
/**
 * vgpu_host_warn_unknown_types() - warn once per type of @m whose name is
 * outside NVIDIA's grammar, naming the file it came from (for the commands
 * that list or choose types).
 * @ctx: where the warnings go
 * @m: a model read with VGPU_READ_TYPES
 */
void vgpu_host_warn_unknown_types(struct vgpu_ctx *ctx, const struct vgpu_model *m);

/* What an owner record's vGPU is on the host now. */
enum vgpu_state {
	VGPU_STATE_ACTIVE, /* there, of its type, on its parent */
	VGPU_STATE_RESERVED, /* per-start and not there: created at the next start */
	VGPU_STATE_MISSING, /* persistent and not there (after a reboot: the hook makes it) */
	VGPU_STATE_CONFLICT, /* something else is where it should be */
	VGPU_STATE_ORPHAN, /* a vGPU on the host that no record claims */
	VGPU_STATE_UNKNOWN, /* its parent cannot be read */
	VGPU_STATE_DAMAGED, /* its record cannot be read: the parent stays blocked */
	VGPU_STATE_CONFIG, /* no record claims it, the host config's last apply made it */
	VGPU_STATE_INCOMING, /* held for a domain migrating here, not there yet */
};

/**
 * vgpu_state_str() - the state's name as listings and metrics show it.
 * @s: a state
 * Return: "active", "reserved", "missing", "conflict", "orphan", "unknown",
 * "damaged", "config" or "incoming".
 */
const char *vgpu_state_str(enum vgpu_state s);

/**
 * vgpu_host_record_state() - the state of the vGPU record @r describes,
 * read fresh from the host.
 * @ctx: gets a warning when the parent cannot be read
 * @fs: the host root
 * @r: an owner record
 * Return: VGPU_STATE_ACTIVE, _RESERVED, _MISSING, _INCOMING (an incoming
 * record whose vGPU is not there yet), _CONFLICT or _UNKNOWN.
 */
enum vgpu_state vgpu_host_record_state(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
				       const struct vgpu_record *r);

/* A vGPU on the host that no owner record claims. */
struct vgpu_orphan {
	const struct vgpu_parent *parent; /* in the model */
	const char *mdev; /* its mdev UUID (in the model), NULL for vendor VFIO */
};

/**
 * vgpu_host_orphans() - every vGPU of @m that no record of @recs claims:
 * an mdev whose UUID no record of its parent names, a vendor-VFIO VF in
 * use without a record.
 * @m: the host
 * @recs: every owner record
 * @out: a heap array of them, parents in model order (NULL when none)
 * Return: how many.
 */
size_t vgpu_host_orphans(const struct vgpu_model *m, const struct vgpu_records *recs,
			 struct vgpu_orphan **out);

/* A vGPU that names the GPU instance it runs on. */
struct vgpu_gi_user {
	long gi; /* its nvidia/gpu_instance_id */
	const char *who; /* the VF's PCI address or the mdev's UUID (in the model) */
	const char *profile; /* its type's profile (in the model), NULL when unknown */
	const struct vgpu_type *type; /* its type (in the model), NULL when unknown */
};

/**
 * vgpu_host_gi_users() - the vGPUs of @g that name their GPU instance
 * (nvidia/gpu_instance_id of a vendor-VFIO VF or of an mdev), each file
 * read once; unreadable ones are skipped.
 * @fs: the host root
 * @m: the host, read with VGPU_READ_TYPES
 * @g: a GPU of @m
 * @out: a heap array of them (NULL when none)
 * Return: how many.
 */
size_t vgpu_host_gi_users(struct vgpu_sysfs *fs, const struct vgpu_model *m,
			  const struct vgpu_gpu *g, struct vgpu_gi_user **out);

/**
 * vgpu_host_set_gis() - complete @g's GPU instances with a listing that
 * knows their profiles and starts (nvidia-smi mig -lgi, NVML), and count
 * their vGPUs again (a GI procfs did not name had none counted).
 * @fs: the host root
 * @m: the host, read with VGPU_READ_TYPES
 * @g: a GPU of @m
 * @gis: the GIs listed, profiles from @g's board table
 * @n: how many
 *
 * gis_exact is set when every GI of @g, procfs's included, then has a
 * profile and a start.
 */
void vgpu_host_set_gis(struct vgpu_sysfs *fs, const struct vgpu_model *m, struct vgpu_gpu *g,
		       const struct vgpu_mig_gi *gis, size_t n);

/**
 * vgpu_host_versions() - the host's kernel release and NVIDIA driver
 * version, as a migration compares them: proc/sys/kernel/osrelease (uname
 * -r) and the version in proc/driver/nvidia/version's "NVRM version:" line.
 * @fs: the host root
 * @kernel: the kernel as vgpu_mig_version_parse() numbers it, 0 when not known
 * @driver: the driver version ("550.54.16"), "" when not known
 * @len: the size of @driver
 */
void vgpu_host_versions(struct vgpu_sysfs *fs, unsigned long *kernel, char *driver, size_t len);

struct vgpu_mig_host;

/**
 * vgpu_host_driver_build() - does the host's vGPU manager build migrate, as
 * its log says ("vGPU migration enabled" / "vGPU migration disabled")?
 * @fs: the host
 * @h: a manifest or offer: left alone when NVML already said
 *     (@h->driver_build_from set), else filled from the last such line of the
 *     first of var/log/kern.log, var/log/messages, var/log/syslog that has
 *     one (their last 4 MiB each); unknown when none does.  /dev/kmsg is
 *     not read: a device, not a file, and its ring forgets a long-running
 *     host's start.
 */
void vgpu_host_driver_build(struct vgpu_sysfs *fs, struct vgpu_mig_host *h);

/**
 * vgpu_host_vgpu_params() - the migration blockers in the vgpu_params of
 * @domain's vGPUs: sys/bus/mdev/devices/UUID/nvidia/vgpu_params (mdev), or
 * sys/bus/pci/devices/VF/nvidia/vgpu_params (vendor VFIO).
 * @fs: the host root
 * @recs: the owner records vgpu_mig_manifest_of() built @h from
 * @domain: the domain, as given to it
 * @h: its vGPUs, in the records' order; one whose file cannot be read
 *     (its vGPU is not there) stays unknown
 */
void vgpu_host_vgpu_params(struct vgpu_sysfs *fs, const struct vgpu_records *recs,
			   const char *domain, struct vgpu_mig_host *h);

#endif
