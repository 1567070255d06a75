/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * migrate-check.h - will a running vGPU domain survive a live migration to
 * another host?  The checks of `vgpuctl migrate-check` (issue #28) as
 * decisions over plain data (pure: no I/O): the source's manifest (the
 * host's versions and the domain's vGPUs) against the target's offer (its
 * versions, and for each source vGPU the device it would give or why none).
 * A target that could not be asked is NULL: its checks are UNKNOWN, never PASS.
 */
#ifndef VGPU_MIGRATE_CHECK_H
#define VGPU_MIGRATE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capacity.h"
#include "migrate-plan.h"
#include "model.h"

/*
 * NVML's vGPU metadata as the manifest carries it (base64): a driver's is a
 * few hundred bytes (nvml.h: 260 of opaque data after the header)
 */
#define VGPU_MIG_NV_METADATA_MAX 1024
/* nvmlVgpuVmCompatibility_t bits and nvmlVgpuPgpuCompatibilityLimitCode_t (nvml.h's values) */
#define VGPU_MIG_NV_COMPAT_COLD 0x1u
#define VGPU_MIG_NV_COMPAT_HIBERNATE 0x2u
#define VGPU_MIG_NV_COMPAT_SLEEP 0x4u
#define VGPU_MIG_NV_COMPAT_LIVE 0x8u
#define VGPU_MIG_NV_LIMIT_HOST_DRIVER 0x1u
#define VGPU_MIG_NV_LIMIT_GUEST_DRIVER 0x2u
#define VGPU_MIG_NV_LIMIT_GPU 0x4u
#define VGPU_MIG_NV_LIMIT_OTHER 0x80000000u

/* One vGPU of the domain, with the board it runs on (source) or would run on (target). */
struct vgpu_mig_vgpu {
	unsigned type_id; /* the driver's type ID, 0 unknown */
	char type_name[VGPU_PROFILE_MAX]; /* the profile, "A30-6C"; "" unknown */
	enum vgpu_iface iface; /* mdev or vendor-specific VFIO */
	uint16_t pci_device; /* the board's PCI device ID, 0 unknown */
	uint32_t pci_subsystem; /* subsystem vendor << 16 | subsystem device, 0 unknown */
	uint64_t fb_mib; /* the board's framebuffer in MiB, 0 unknown */
	enum vgpu_tristate ecc; /* the board's ECC mode */
	/* vgpu_params (source only): each must be off for migration */
	enum vgpu_tristate enable_uvm, enable_debugging, enable_profiling;
	/* NVML's (driver-build, nvidia-compatibility; runtime state for downtime) */
	uint8_t nv_metadata[VGPU_MIG_NV_METADATA_MAX]; /* source: nvmlVgpuInstanceGetMetadata's */
	size_t nv_metadata_len; /* 0: not known (no NVML, or no instance of the domain) */
	bool has_nv_compat; /* target: nvmlGetVgpuCompatibility answered */
	uint32_t nv_compat; /* its vgpuVmCompatibility bits, VGPU_MIG_NV_COMPAT_* */
	uint32_t nv_limit; /* its compatibilityLimitCode, VGPU_MIG_NV_LIMIT_* */
	uint64_t runtime_state_bytes; /* source: nvmlVgpuInstanceGetRuntimeStateSize; 0 unknown */
	/* -- libvirt's fields (downtime, migrate-xml) -- */
	uint64_t type_fb_mib; /* the vGPU type's framebuffer in MiB, 0 unknown */
	/*
	 * mdev: the source's UUID; in an offer the UUID the target would give
	 * (the source's when free there, else a new one); "" none (a VF)
	 */
	char mdev_uuid[VGPU_UUID_LEN];
	char parent[VGPU_BDF_LEN]; /* offer: the VF (or mdev parent) it would give; "" unknown */
	int numa_node; /* offer: the target GPU's NUMA node, -1 unknown */
	char cpus[256]; /* offer: that GPU's CPUs ("0-5,48-53"), "" unknown */
	/* -- the shared plan's fields (migrate-plan.h): migrate-offer, migrate-xml -- */
	bool display; /* source, mdev: its hostdev shows a display or ramfb */
	/* -- NVLink's fields (topology): the GPU's active NVLinks, NVML's -- */
	bool has_nvlinks; /* NVML answered (source: the vGPU's GPU; offer: the GPU given) */
	unsigned nvlinks; /* how many links are active; 0 on a board without NVLink */
};

/* One host's side: versions and its vGPUs (source: the domain's; target: one per source vGPU). */
struct vgpu_mig_host {
	unsigned long libvirt; /* major * 1000000 + minor * 1000 + micro; 0 unknown */
	unsigned long qemu; /* as libvirt */
	unsigned long kernel; /* as libvirt, from "6.8.0-45-generic" */
	char driver_version[32]; /* the vGPU manager's version, "550.90.05"; "" unknown */
	struct vgpu_mig_vgpu *vgpus;
	size_t n_vgpus;
	/*
	 * target only, one per source vGPU in its order: the capacity model's
	 * answer (VGPU_CAP_OK: @vgpus[i] is the board it would give, and
	 * @devices[i] the device, a VF address or the GPU of an mdev)
	 */
	enum vgpu_cap_reason *reasons;
	char (*devices)[32];
	/*
	 * NVML's (driver-build): does the driver build migrate (source: the
	 * GPUs of its vGPUs; target: the ones offered)?  Known only when
	 * @driver_build_from names who said: "nvml", "kernel log"
	 */
	enum vgpu_tristate driver_build;
	char driver_build_from[16];
	/* -- libvirt's fields (engine, qemu-blockers, downtime, post-copy): source only -- */
	struct vgpu_mig_domain *domain; /* what its XML says; NULL when it was not read */
	unsigned long long max_downtime_ms; /* the domain's now, 0 unknown */
	bool max_downtime_default; /* not read (not running): QEMU's default assumed */
	unsigned long bandwidth_mib_s; /* the migration's bandwidth; 0: VGPU_MIG_BANDWIDTH_MIB_S */
	bool postcopy; /* the caller asks for post-copy */
	/* -- the shared plan's fields (migrate-plan.h): migrate-offer, migrate-xml -- */
	char uuid[VGPU_UUID_LEN]; /* source: the domain's UUID; "" unknown */
	unsigned vcpus; /* source: the domain's <vcpu>; 0 unknown */
	uint64_t memory_kib; /* source: its memory; 0 unknown */
	bool pinned; /* source: vgpuctl pinned it (its metadata says so) */
	/*
	 * target: the hook's decision for the source's domain (vgpu_mplan_make(),
	 * a new mdev UUID named ""), allocated; NULL when the offer has none
	 */
	struct vgpu_mplan *plan;
	char plan_error[512]; /* target: why the hook would refuse; "" when it would not */
};

/* What the source domain's XML says that QEMU refuses to migrate (qemu-blockers). */
struct vgpu_mig_domain {
	char name[256]; /* the domain's name, for the next steps */
	char machine[64]; /* <os><type machine=...>, "pc-q35-8.2"; "" none */
	bool iommu; /* a guest <iommu> */
	bool migration_off; /* enable-migration=off (qemu:commandline or qemu:override) */
	bool ramfb; /* a vGPU hostdev with ramfb='on', or a ramfb video device */
	unsigned n_vfio; /* VFIO devices: <hostdev mode='subsystem'> of type mdev or pci */
	unsigned n_vfio_other; /* of them, those that are not vgpuctl's vGPUs */
};

/*
 * downtime: the bandwidth assumed when none is given: 10 Gbit/s (1192 MiB/s,
 * a 10 GbE link's payload rounded down)
 */
#define VGPU_MIG_BANDWIDTH_MIB_S 1192UL
/* QEMU's max downtime when nobody set one */
#define VGPU_MIG_QEMU_DEFAULT_DOWNTIME_MS 300ULL

/**
 * vgpu_mig_downtime_need_ms() - the downtime the source's vGPUs need at most:
 * each vGPU type's framebuffer plus its runtime state, sent at the bandwidth.
 * @src: the source's manifest (type_fb_mib, runtime_state_bytes, bandwidth_mib_s)
 * @known: set to false when a vGPU's type framebuffer is not known (then 0 is
 *         returned), else true
 * Return: ceil(bytes * 1000 / (bandwidth MiB/s * 2^20)) in ms, at least 1 for any vGPU.
 */
unsigned long long vgpu_mig_downtime_need_ms(const struct vgpu_mig_host *src, bool *known);
/**
 * vgpu_mig_downtime_advice_ms() - the max downtime to set before a migration
 * (`virsh migrate-setmaxdowntime DOMAIN MS`): the need plus a quarter, rounded
 * up to 100 ms, and never below QEMU's default of 300 ms.
 * @need_ms: vgpu_mig_downtime_need_ms()
 * Return: the value in ms.
 */
unsigned long long vgpu_mig_downtime_advice_ms(unsigned long long need_ms);
/**
 * vgpu_mig_machine_before() - is the machine type versioned below @min?
 * @machine: "pc-q35-8.0", "pc-i440fx-7.2", "virt-8.1", "q35" (unversioned: the
 *           newest, false), "pc-q35-rhel9.2.0" (RHEL's numbering: false)
 * @min: major * 1000 + minor (8001 for 8.1)
 * Return: true when the name ends in an upstream version below @min.
 */
bool vgpu_mig_machine_before(const char *machine, unsigned min);

enum vgpu_mig_status {
	VGPU_MIG_PASS,
	VGPU_MIG_WARN,
	VGPU_MIG_UNKNOWN,
	VGPU_MIG_FAIL,
};

/* One check's answer: `STATUS ID what: source vs target — next`. */
struct vgpu_mig_result {
	const char *id; /* "engine", "board", ... (static text) */
	enum vgpu_mig_status status;
	char *what; /* what was compared, "libvirt, QEMU, kernel" */
	char *source; /* the source's value */
	char *target; /* the target's value, "?" when it was not asked */
	char *next; /* the next step; "" when none is needed */
};

struct vgpu_mig_results {
	struct vgpu_mig_result *items;
	size_t n;
	/* the max downtime the downtime check names to set first, in ms; 0 when it names none */
	unsigned long long downtime_advice_ms;
};

enum vgpu_mig_verdict {
	VGPU_MIG_GO, /* every check PASS or WARN */
	VGPU_MIG_NO_GO, /* some check FAIL */
	VGPU_MIG_UNSURE, /* none FAIL, some UNKNOWN */
};

/* The minimums NVIDIA names for vGPU live migration on KVM. */
#define VGPU_MIG_MIN_LIBVIRT 8006000UL
#define VGPU_MIG_MIN_QEMU 8001000UL
#define VGPU_MIG_MIN_KERNEL 5018000UL
#define VGPU_MIG_MIN_KERNEL_VFIO 6008000UL /* vendor-specific VFIO */
#define VGPU_MIG_MIN_LIBVIRT_CROSS 11000000UL /* mdev <-> VF */

/**
 * vgpu_mig_version_parse() - a version as libvirt numbers it.
 * @s: "8.6.0", "6.8.0-45-generic", "11.0" (the leading numbers count)
 * Return: major * 1000000 + minor * 1000 + micro, or 0 when @s does not start with a number
 * or a part is above 999 (minor, micro).
 */
unsigned long vgpu_mig_version_parse(const char *s);

struct vgpu_record;
struct vgpu_records;

/**
 * vgpu_mig_manifest_of() - the source's side: @domain's vGPUs as its owner
 * records name them, each with the board of its GPU in @m (PCI device ID,
 * framebuffer), in the records' order.
 * @m: the source's model
 * @recs: its owner records
 * @domain: the domain's name or UUID
 * @out: its vGPUs (the versions are left as they were: the caller reads
 *       them); free with vgpu_mig_offer_clear()
 * Return: how many vGPUs the records name (0: none; @out then holds none).
 * The ECC mode, vgpu_params and NVML's answers are not in the model: unknown.
 */
size_t vgpu_mig_manifest_of(const struct vgpu_model *m, const struct vgpu_records *recs,
			    const char *domain, struct vgpu_mig_host *out);

/**
 * vgpu_mig_record_is() - does owner record @r belong to @domain?
 * @r: the record
 * @domain: a domain name, or its UUID in any case
 * Return: true when it does.
 */
bool vgpu_mig_record_is(const struct vgpu_record *r, const char *domain);

/**
 * vgpu_mig_params_parse() - the migration blockers a vGPU's vgpu_params sets.
 * @text: the file's text: comma-separated name=value ("frame_rate_limiter=0,enable_uvm=1");
 *        empty or blank when nothing is set
 * @v: its enable_uvm, enable_debugging and enable_profiling: on for a value
 *     other than 0, off when 0 or not named
 */
void vgpu_mig_params_parse(const char *text, struct vgpu_mig_vgpu *v);

/**
 * vgpu_mig_offer() - the target's side: for each of the source's vGPUs the
 * GPU the capacity model would give (a slot of the same type, counting the
 * ones given to the vGPUs before it), preferring the source's board (PCI
 * device ID and framebuffer), or the reason none fits; nothing is written.
 * @m: the target's model
 * @recs: its owner records (reservations count as held), or NULL
 * @src: the source's manifest
 * @out: its vGPUs, reasons and devices (n_vgpus of @src); the versions are
 *       left as they were (the caller reads them); free with vgpu_mig_offer_clear()
 *
 * The ECC mode and NVML's answers are not in the model: they are left
 * unknown (VGPU_UNKNOWN, no compatibility) for the caller to fill.
 */
void vgpu_mig_offer(const struct vgpu_model *m, const struct vgpu_records *recs,
		    const struct vgpu_mig_host *src, struct vgpu_mig_host *out);

/**
 * vgpu_mig_offer_clear() - free the arrays vgpu_mig_offer() or
 * vgpu_mig_manifest_parse() put into @h and zero them (the versions stay).
 * @h: a host filled by one of them
 */
void vgpu_mig_offer_clear(struct vgpu_mig_host *h);

/**
 * vgpu_mig_check() - run every check of the source against the target.
 * @src: the source's manifest
 * @dst: the target's offer (as many @reasons and @devices as @src has vGPUs
 *       where @dst->n_vgpus says so), or NULL when the target could not be asked
 * @out: the answers in check order; free with vgpu_mig_results_free()
 *
 * Checks, in order: engine, interface, driver-build, driver-version,
 * nvidia-compatibility, board, ecc, topology, capacity, vgpu-params,
 * qemu-blockers, downtime, post-copy.  A check that compares the two ends
 * is UNKNOWN when @dst is NULL or either value is not known.
 */
void vgpu_mig_check(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
		    struct vgpu_mig_results *out);

/**
 * vgpu_mig_verdict_of() - the verdict of a set of answers.
 * @r: the answers
 * Return: VGPU_MIG_NO_GO when one FAILs, else VGPU_MIG_UNSURE when one is UNKNOWN, else
 * VGPU_MIG_GO.
 */
enum vgpu_mig_verdict vgpu_mig_verdict_of(const struct vgpu_mig_results *r);

/**
 * vgpu_mig_result_find() - the answer of the check @id.
 * @r: the answers
 * @id: a check ID, "board"
 * Return: the answer (borrowed from @r), or NULL when @r has none of that ID.
 */
const struct vgpu_mig_result *vgpu_mig_result_find(const struct vgpu_mig_results *r,
						   const char *id);

/**
 * vgpu_mig_nv_limit_name() - an nvmlVgpuPgpuCompatibilityLimitCode_t in words.
 * @code: the code (VGPU_MIG_NV_LIMIT_*)
 * Return: static text: "host driver", "guest driver", "GPU", "other" or "none".
 */
const char *vgpu_mig_nv_limit_name(uint32_t code);

/**
 * vgpu_mig_status_name() - "PASS", "FAIL", "WARN" or "UNKNOWN".
 * @s: the status
 * Return: static text.
 */
const char *vgpu_mig_status_name(enum vgpu_mig_status s);

/**
 * vgpu_mig_results_free() - free the answers and zero @r.
 * @r: answers of vgpu_mig_check() (a zeroed one is fine)
 */
void vgpu_mig_results_free(struct vgpu_mig_results *r);

#endif
