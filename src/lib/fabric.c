// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fabric Manager through dlopen(): libnvfm's few entry points resolved by
 * name, with the types declared below, so vgpuctl builds and runs where
 * Fabric Manager's SDK is absent (every PCIe host).
 *
 * The types, the version words and the return values are those of NVIDIA's
 * Fabric Manager SDK headers, nv_fm_types.h and nv_fm_agent.h (R535 and
 * later: fmConnectParams_v2 with addressType, return values down to
 * FM_ST_PARTITION_ROUTE_PROGRAMMING_ERROR = -29; older libraries know only
 * fmConnectParams_v1 and -1 to -10).  Each versioned structure carries
 * MAKE_FM_PARAM_VERSION(type, ver) = sizeof(type) | ver << 24 in its first
 * member: fmConnectParams_v2 version 2 (v1: 1), fmFabricPartitionList_v2
 * version 1, fmActivatedFabricPartitionList_v1, fmNvlinkFailedDevices_v1,
 * fmUnsupportedFabricPartitionList_v1 version 1.  The test stand-in
 * (tests/nvfm/) implements the same calls from this file's declarations.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric-abi.h"
#include "fabric.h"
#include "model.h"
#include "sysfs.h"

/* How long fmConnect waits for Fabric Manager (ms); it runs on this host. */
#define FM_CONNECT_TIMEOUT_MS 2000
/*
 * Where Fabric Manager listens for its SDK without a configuration saying
 * otherwise (user guide, "The Fabric Manager API interface"):
 * FM_CMD_BIND_INTERFACE=127.0.0.1, FM_CMD_PORT_NUMBER=6666, and
 * FM_CMD_UNIX_SOCKET_PATH empty (TCP, not a Unix socket).
 */
#define FM_DEFAULT_BIND "127.0.0.1"
#define FM_DEFAULT_PORT 6666
/* fabricmanager.cfg is a few KiB */
#define FM_CFG_MAX (256 * 1024)

struct vgpu_fm {
	void *dl;
	char lib[256];
	fmHandle_t handle;
#define X(ret, name, params) ret(*name) params;
	VGPU_NVFM_REQUIRED(X)
	VGPU_NVFM_OPTIONAL(X)
#undef X
};

void vgpu_fabric_clear(struct vgpu_fabric *f)
{
	free(f->v);
	f->v = NULL;
	f->n = 0;
	vgpu_strv_clear(&f->failed);
	f->mode = VGPU_FABRIC_NONE;
}

/*
 * The value of @key in Fabric Manager's configuration (KEY=VALUE lines, '#'
 * comments; the last line wins), blanks and a trailing comment trimmed, in
 * @buf.  Return: true when the key is there (@buf may be empty).
 */
static bool cfg_value(const char *text, const char *key, char *buf, size_t n)
{
	size_t klen = strlen(key);
	bool found = false;

	for (const char *p = text; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[512];
		char *s, *e;

		snprintf(line, sizeof(line), "%.*s",
			 (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
		p = eol ? eol + 1 : NULL;
		s = line + strspn(line, " \t\r");
		if (strncmp(s, key, klen) != 0)
			continue;
		s += klen;
		s += strspn(s, " \t");
		if (*s != '=')
			continue;
		s++;
		s += strspn(s, " \t");
		e = s + strcspn(s, "#\r");
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		*e = '\0';
		snprintf(buf, n, "%s", s);
		found = true;
	}
	return found;
}

/* FABRIC_MODE; 0 (its default) when the key is not there. */
static int parse_mode(const char *text, enum vgpu_fabric_mode *mode)
{
	char val[64];
	long v = 0;
	char *e;

	if (cfg_value(text, "FABRIC_MODE", val, sizeof(val))) {
		errno = 0;
		v = strtol(val, &e, 10);
		if (errno || e == val || *e || v < VGPU_FABRIC_BAREMETAL || v > VGPU_FABRIC_VGPU)
			return -EINVAL;
	}
	*mode = (enum vgpu_fabric_mode)v;
	return 0;
}

static int cfg_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, char **text)
{
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	int r;

	*text = NULL;
	vgpu_sysdir_root(fs, &root);
	r = vgpu_sysfs_read_file(&root, FM_CFG_MAX, text, NULL, "%s", VGPU_FABRIC_CFG);
	if (r < 0 && r != -ENOENT)
		return vgpu_error(ctx, r, "cannot read '%s': %s",
				  VGPU_SHOW(&root, VGPU_FABRIC_CFG, show), vgpu_strerror(r));
	return r;
}

int vgpu_fabric_mode_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, enum vgpu_fabric_mode *mode)
{
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	VGPU_AUTOFREE char *text = NULL;
	int r;

	*mode = VGPU_FABRIC_NONE;
	r = cfg_read(ctx, fs, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	vgpu_sysdir_root(fs, &root);
	if (parse_mode(text, mode) < 0)
		return vgpu_error(ctx, -EINVAL, "'%s': FABRIC_MODE is not 0, 1 or 2",
				  VGPU_SHOW(&root, VGPU_FABRIC_CFG, show));
	return 0;
}

int vgpu_fabric_address(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_fabric_addr *out)
{
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN], ip[128] = "", port[32] = "";
	VGPU_AUTOFREE char *text = NULL;
	long pn = FM_DEFAULT_PORT;
	char *e;
	int r;

	*out = (struct vgpu_fabric_addr){ 0 };
	snprintf(out->addr, sizeof(out->addr), "%s:%d", FM_DEFAULT_BIND, FM_DEFAULT_PORT);
	if (!fs)
		return 0;
	r = cfg_read(ctx, fs, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	vgpu_sysdir_root(fs, &root);
	/* a socket path, when set, is where Fabric Manager listens: not TCP */
	if (cfg_value(text, "FM_CMD_UNIX_SOCKET_PATH", out->addr, sizeof(out->addr)) &&
	    out->addr[0]) {
		out->unix_socket = true;
		return 0;
	}
	if (!cfg_value(text, "FM_CMD_BIND_INTERFACE", ip, sizeof(ip)) || !ip[0])
		snprintf(ip, sizeof(ip), "%s", FM_DEFAULT_BIND);
	if (cfg_value(text, "FM_CMD_PORT_NUMBER", port, sizeof(port)) && port[0]) {
		errno = 0;
		pn = strtol(port, &e, 10);
		if (errno || e == port || *e || pn < 0 || pn > 65535)
			return vgpu_error(ctx, -EINVAL,
					  "'%s': FM_CMD_PORT_NUMBER '%s' is not a TCP port",
					  VGPU_SHOW(&root, VGPU_FABRIC_CFG, show), port);
	}
	snprintf(out->addr, sizeof(out->addr), "%s:%ld", ip, pn);
	return 0;
}

/* ---- the library -------------------------------------------------------------------------- */

/* fmReturn_t as Fabric Manager's headers name it, for messages. */
static const char *fm_name(fmReturn_t r)
{
	static const char *const names[] = {
		"FM_ST_SUCCESS",
		"FM_ST_BADPARAM",
		"FM_ST_GENERIC_ERROR",
		"FM_ST_NOT_SUPPORTED",
		"FM_ST_UNINITIALIZED",
		"FM_ST_TIMEOUT",
		"FM_ST_VERSION_MISMATCH",
		"FM_ST_IN_USE",
		"FM_ST_NOT_CONFIGURED",
		"FM_ST_CONNECTION_NOT_VALID",
		"FM_ST_NVLINK_ERROR",
		"FM_ST_RESOURCE_BAD",
		"FM_ST_RESOURCE_IN_USE",
		"FM_ST_RESOURCE_NOT_IN_USE",
		"FM_ST_RESOURCE_EXHAUSTED",
		"FM_ST_RESOURCE_NOT_READY",
		"FM_ST_PARTITION_EXISTS",
		"FM_ST_PARTITION_ID_IN_USE",
		"FM_ST_PARTITION_ID_NOT_IN_USE",
		"FM_ST_PARTITION_NAME_IN_USE",
		"FM_ST_PARTITION_NAME_NOT_IN_USE",
		"FM_ST_PARTITION_ID_NAME_MISMATCH",
		"FM_ST_NOT_READY",
		"FM_ST_RESOURCE_USED_IN_THIS_PARTITION",
		"FM_ST_RESOURCE_USED_IN_ANOTHER_PARTITION",
		"FM_ST_PARTITION_MISWIRED_TRUNKS",
		"FM_ST_PARTITION_INSUFFICIENT_TRUNKS",
		"FM_ST_PARTITION_MISSING_SWITCHES",
		"FM_ST_PARTITION_NETWORK_CONFIG_ERROR",
		"FM_ST_PARTITION_ROUTE_PROGRAMMING_ERROR",
	};

	if (r <= 0 && (size_t)-r < sizeof(names) / sizeof(names[0]))
		return names[-r];
	return "an unknown status";
}

static int fm_errno(fmReturn_t r)
{
	switch (r) {
	case FM_ST_SUCCESS:
		return 0;
	case FM_ST_CONNECTION_NOT_VALID:
		return -ECONNREFUSED;
	case FM_ST_NOT_READY:
	case FM_ST_TIMEOUT:
	case FM_ST_RESOURCE_NOT_READY:
		return -EAGAIN;
	case FM_ST_IN_USE:
	case FM_ST_RESOURCE_IN_USE:
	case FM_ST_PARTITION_ID_IN_USE:
	case FM_ST_RESOURCE_USED_IN_ANOTHER_PARTITION:
		return -EBUSY;
	case FM_ST_NOT_CONFIGURED:
		return -ESTALE;
	case FM_ST_BADPARAM:
	case FM_ST_RESOURCE_BAD:
	case FM_ST_PARTITION_ID_NOT_IN_USE:
		return -EINVAL;
	case FM_ST_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

/* What Fabric Manager's answer means, for a one-line message. */
static const char *fm_cause(fmReturn_t r)
{
	switch (fm_errno(r)) {
	case -ECONNREFUSED:
		return "Fabric Manager is not running";
	case -EAGAIN:
		return "the fabric is not ready";
	case -EBUSY:
		return "the partition or its GPUs are in use";
	case -ESTALE:
		return "Fabric Manager is out of sync (restarted and not told which partitions are active)";
	case -EINVAL:
		return "no such partition, or not one VF per GPU";
	case -EOPNOTSUPP:
		return "not supported in this fabric mode";
	default:
		return "Fabric Manager failed";
	}
}

/* "0000:1b:00.4" to fmPciDevice_t. */
static int pci_device(const char *bdf, fmPciDevice_t *out)
{
	char norm[VGPU_BDF_LEN];
	unsigned d, b, s, f;

	if (vgpu_bdf_normalize(bdf, norm) < 0 || sscanf(norm, "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
		return -EINVAL;
	*out = (fmPciDevice_t){ .domain = d, .bus = b, .device = s, .function = f };
	return 0;
}

int vgpu_fm_open(struct vgpu_ctx *ctx, const char *path, struct vgpu_sysfs *fs,
		 struct vgpu_fm **out)
{
	struct vgpu_fm *fm;
	const char *lib = path ? path : VGPU_NVFM_SONAME;
	struct vgpu_fabric_addr at;
	fmConnectParams_v2 cp = { .version = fmConnectParams_version2,
				  .timeoutMs = FM_CONNECT_TIMEOUT_MS };
	fmReturn_t r;
	int e;

	*out = NULL;
	e = vgpu_fabric_address(ctx, fs, &at);
	if (e < 0)
		return e;
	cp.addressType = at.unix_socket ? NV_FM_API_ADDR_TYPE_UNIX : NV_FM_API_ADDR_TYPE_INET;
	cp.addressIsUnixSocket = at.unix_socket;
	fm = vgpu_xcalloc(1, sizeof(*fm));
	snprintf(fm->lib, sizeof(fm->lib), "%s", lib);
	fm->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!fm->dl) {
		const char *err = dlerror();

		free(fm);
		/* a soname the loader looked up everywhere: not installed */
		if (!strchr(lib, '/'))
			return vgpu_error(ctx, -ENOENT,
					  "%s is not installed: Fabric Manager's SDK library", lib);
		return vgpu_error(ctx, -ENOENT, "'%s' cannot be loaded: %s", lib,
				  err ? err : "unknown error");
	}
#define X(ret, name, params)                                                                       \
	*(void **)&fm->name = dlsym(fm->dl, #name);                                                \
	if (!fm->name) {                                                                           \
		dlclose(fm->dl);                                                                   \
		free(fm);                                                                          \
		return vgpu_error(ctx, -ENOSYS, "'%s' has no %s (Fabric Manager too old)", lib,    \
				  #name);                                                          \
	}
	VGPU_NVFM_REQUIRED(X)
#undef X
#define X(ret, name, params) *(void **)&fm->name = dlsym(fm->dl, #name);
	VGPU_NVFM_OPTIONAL(X)
#undef X
	r = fm->fmLibInit();
	if (r != FM_ST_SUCCESS) {
		e = vgpu_error(ctx, -EIO, "'%s' cannot start: %s", lib, fm_name(r));
		dlclose(fm->dl);
		free(fm);
		return e;
	}
	snprintf(cp.addressInfo, sizeof(cp.addressInfo), "%s", at.addr);
	r = fm->fmConnect(&cp, &fm->handle);
	if (r == FM_ST_VERSION_MISMATCH) {
		/* a library before R535: fmConnectParams_v1 */
		fmConnectParams_v1 c1 = { .version = fmConnectParams_version1,
					  .timeoutMs = FM_CONNECT_TIMEOUT_MS,
					  .addressIsUnixSocket = at.unix_socket };

		snprintf(c1.addressInfo, sizeof(c1.addressInfo), "%s", at.addr);
		r = fm->fmConnect((fmConnectParams_v2 *)(void *)&c1, &fm->handle);
	}
	if (r != FM_ST_SUCCESS) {
		e = fm_errno(r);
		if (e == -ECONNREFUSED)
			e = vgpu_error(ctx, e, "Fabric Manager is not running (no answer at %s)",
				       at.addr);
		else
			e = vgpu_error(ctx, e, "Fabric Manager cannot be reached at %s: %s (%s)",
				       at.addr, fm_cause(r), fm_name(r));
		fm->fmLibShutdown();
		dlclose(fm->dl);
		free(fm);
		return e;
	}
	*out = fm;
	return 0;
}

void vgpu_fm_close(struct vgpu_fm *fm)
{
	if (!fm)
		return;
	fm->fmDisconnect(fm->handle);
	fm->fmLibShutdown();
	dlclose(fm->dl);
	free(fm);
}

/* The GPU whose NVML module ID is @module, else the GPU FM's @pci names; "" when none. */
static void gpu_bus(const struct vgpu_model *m, unsigned module, const char *pci,
		    char bus[VGPU_BDF_LEN])
{
	char norm[VGPU_BDF_LEN];

	bus[0] = '\0';
	for (size_t i = 0; m && i < m->n_gpus; i++)
		if (m->gpus[i].module_id >= 0 && (unsigned)m->gpus[i].module_id == module) {
			snprintf(bus, VGPU_BDF_LEN, "%s", m->gpus[i].addr);
			return;
		}
	if (pci && pci[0] && vgpu_bdf_normalize(pci, norm) == 0)
		snprintf(bus, VGPU_BDF_LEN, "%s", norm);
}

static int by_id(const void *a, const void *b)
{
	const struct vgpu_fabric_part *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* A failed device as a user reads it: its bus, else its UUID, else KIND and its index. */
static char *failed_name(const fmNvlinkFailedDeviceInfo_t *d, const char *kind, unsigned i)
{
	char norm[VGPU_BDF_LEN];
	char pci[FM_DEVICE_PCI_BUS_ID_BUFFER_SIZE + 1], uuid[FM_UUID_BUFFER_SIZE + 1];

	snprintf(pci, sizeof(pci), "%.*s", FM_DEVICE_PCI_BUS_ID_BUFFER_SIZE, d->pciBusId);
	snprintf(uuid, sizeof(uuid), "%.*s", FM_UUID_BUFFER_SIZE, d->uuid);
	if (pci[0] && vgpu_bdf_normalize(pci, norm) == 0)
		return strcmp(kind, "switch") ? vgpu_xstrdup(norm) :
						vgpu_asprintf("switch %s", norm);
	if (uuid[0])
		return vgpu_asprintf("%s %s", kind, uuid);
	return vgpu_asprintf("%s %u", kind, i);
}

/* p->gpu holds as many GPUs as Fabric Manager lists in a partition */
_Static_assert(VGPU_FABRIC_MAX_GPUS >= FM_MAX_NUM_GPUS, "a partition's GPUs must fit");

/* A new partition @id at the end of @out (supported and active as given). */
static struct vgpu_fabric_part *part_add(struct vgpu_fabric *out, unsigned id, bool supported,
					 bool active)
{
	struct vgpu_fabric_part *p;

	out->v = vgpu_xreallocarray(out->v, out->n + 1, sizeof(*out->v));
	p = &out->v[out->n++];
	*p = (struct vgpu_fabric_part){ .id = id, .supported = supported, .active = active };
	return p;
}

/* The supported partitions, each GPU with its links, named by its bus through @m. */
static void add_supported(const fmFabricPartitionList_v2 *list, const struct vgpu_model *m,
			  struct vgpu_fabric *out)
{
	for (unsigned i = 0; i < list->numPartitions && i < FM_MAX_FABRIC_PARTITIONS; i++) {
		const fmFabricPartitionInfo_t *pi = &list->partitionInfo[i];
		struct vgpu_fabric_part *p = part_add(out, pi->partitionId, true, pi->isActive);

		for (unsigned k = 0; k < pi->numGpus && k < FM_MAX_NUM_GPUS; k++) {
			const fmFabricPartitionGpuInfo_t *gi = &pi->gpuInfo[k];
			struct vgpu_fabric_gpu *g = &p->gpu[p->ngpus++];
			char pci[FM_DEVICE_PCI_BUS_ID_BUFFER_SIZE + 1];

			snprintf(pci, sizeof(pci), "%.*s", FM_DEVICE_PCI_BUS_ID_BUFFER_SIZE,
				 gi->pciBusId);
			g->module_id = gi->physicalId;
			g->nvlinks = gi->numNvLinksAvailable;
			g->max_nvlinks = gi->maxNumNvLinks;
			gpu_bus(m, gi->physicalId, pci, g->bus);
		}
	}
}

/* The unsupported partitions, where this library lists them (a warning when it cannot). */
static void add_unsupported(struct vgpu_ctx *ctx, struct vgpu_fm *fm, const struct vgpu_model *m,
			    struct vgpu_fabric *out)
{
	VGPU_AUTOFREE fmUnsupportedFabricPartitionList_v1 *uns = NULL;
	fmReturn_t r;

	if (!fm->fmGetUnsupportedFabricPartitions)
		return;
	uns = vgpu_xcalloc(1, sizeof(*uns));
	uns->version = fmUnsupportedFabricPartitionList_version1;
	r = fm->fmGetUnsupportedFabricPartitions(fm->handle, uns);
	if (r != FM_ST_SUCCESS) {
		if (r != FM_ST_NOT_SUPPORTED)
			vgpu_log(ctx, LOG_WARNING,
				 "Fabric Manager's unsupported partitions cannot be read: %s",
				 fm_name(r));
		return;
	}
	for (unsigned i = 0; i < uns->numPartitions && i < FM_MAX_FABRIC_PARTITIONS; i++) {
		const fmUnsupportedFabricPartitionInfo_t *ui = &uns->partitionInfo[i];
		struct vgpu_fabric_part *p = part_add(out, ui->partitionId, false, false);

		for (unsigned k = 0; k < ui->numGpus && k < FM_MAX_NUM_GPUS; k++) {
			struct vgpu_fabric_gpu *g = &p->gpu[p->ngpus++];

			g->module_id = ui->gpuPhysicalIds[k];
			gpu_bus(m, g->module_id, NULL, g->bus);
		}
	}
}

/* The NVLink-failed GPUs and switches, where this library lists them. */
static void add_failed(struct vgpu_ctx *ctx, struct vgpu_fm *fm, struct vgpu_fabric *out)
{
	VGPU_AUTOFREE fmNvlinkFailedDevices_v1 *failed = NULL;
	fmReturn_t r;

	if (!fm->fmGetNvlinkFailedDevices)
		return;
	failed = vgpu_xcalloc(1, sizeof(*failed));
	failed->version = fmNvlinkFailedDevices_version1;
	r = fm->fmGetNvlinkFailedDevices(fm->handle, failed);
	if (r != FM_ST_SUCCESS) {
		if (r != FM_ST_NOT_SUPPORTED)
			vgpu_log(ctx, LOG_WARNING,
				 "Fabric Manager's NVLink-failed devices cannot be read: %s",
				 fm_name(r));
		return;
	}
	for (unsigned i = 0; i < failed->numGpus && i < FM_MAX_NUM_GPUS; i++)
		vgpu_strv_push(&out->failed, failed_name(&failed->gpuInfo[i], "GPU", i));
	for (unsigned i = 0; i < failed->numSwitches && i < FM_MAX_NUM_NVSWITCHES; i++)
		vgpu_strv_push(&out->failed, failed_name(&failed->switchInfo[i], "switch", i));
}

/*
 * Fabric Manager cannot say its mode: @out->mode is kept as the caller set it
 * (vgpu_fabric_mode_read()), but for a Fabric Manager without partitions
 * (FM_ST_NOT_SUPPORTED: bare metal), which makes it VGPU_FABRIC_BAREMETAL.
 */
int vgpu_fm_read(struct vgpu_ctx *ctx, struct vgpu_fm *fm, const struct vgpu_model *m,
		 struct vgpu_fabric *out)
{
	VGPU_AUTOFREE fmFabricPartitionList_v2 *list = vgpu_xcalloc(1, sizeof(*list));
	fmReturn_t r;

	out->v = NULL;
	out->n = 0;
	out->failed = (struct vgpu_strv){ 0 };
	list->version = fmFabricPartitionList_version2;
	r = fm->fmGetSupportedFabricPartitions(fm->handle, list);
	if (r == FM_ST_NOT_SUPPORTED) {
		/* bare metal (FABRIC_MODE=0): no partitions */
		out->mode = VGPU_FABRIC_BAREMETAL;
		return 0;
	}
	if (r != FM_ST_SUCCESS)
		return vgpu_error(ctx, fm_errno(r),
				  "Fabric Manager's partitions cannot be read: %s (%s)",
				  fm_cause(r), fm_name(r));
	add_supported(list, m, out);
	add_unsupported(ctx, fm, m, out);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_id);
	add_failed(ctx, fm, out);
	return 0;
}

int vgpu_fm_activate(struct vgpu_ctx *ctx, struct vgpu_fm *fm, unsigned id,
		     const char (*vfs)[VGPU_BDF_LEN], size_t nvfs)
{
	fmPciDevice_t dev[VGPU_FABRIC_MAX_GPUS];
	fmReturn_t r;

	if (nvfs > VGPU_FABRIC_MAX_GPUS)
		return vgpu_error(ctx, -EINVAL,
				  "fabric partition %u: %zu VFs, more than a partition's %d GPUs",
				  id, nvfs, VGPU_FABRIC_MAX_GPUS);
	for (size_t i = 0; i < nvfs; i++)
		if (pci_device(vfs[i], &dev[i]) < 0)
			return vgpu_error(ctx, -EINVAL,
					  "fabric partition %u: '%s' is not a PCI address", id,
					  vfs[i]);
	if (nvfs && !fm->fmActivateFabricPartitionWithVFs)
		return vgpu_error(
			ctx, -ENOSYS,
			"'%s' has no fmActivateFabricPartitionWithVFs (Fabric Manager too old for vGPU)",
			fm->lib);
	if (nvfs)
		r = fm->fmActivateFabricPartitionWithVFs(fm->handle, id, dev, (unsigned)nvfs);
	else
		r = fm->fmActivateFabricPartition(fm->handle, id);
	if (r != FM_ST_SUCCESS)
		return vgpu_error(ctx, fm_errno(r),
				  "fabric partition %u cannot be activated: %s (%s)", id,
				  fm_cause(r), fm_name(r));
	return 0;
}

int vgpu_fm_deactivate(struct vgpu_ctx *ctx, struct vgpu_fm *fm, unsigned id)
{
	fmReturn_t r = fm->fmDeactivateFabricPartition(fm->handle, id);

	/* nv_fm_agent.h: "FM_ST_UNINITIALIZED specified partition is not activated" */
	if (r == FM_ST_UNINITIALIZED)
		return vgpu_error(ctx, -ENOENT, "fabric partition %u is not active (%s)", id,
				  fm_name(r));
	if (r != FM_ST_SUCCESS)
		return vgpu_error(ctx, fm_errno(r),
				  "fabric partition %u cannot be deactivated: %s (%s)", id,
				  fm_cause(r), fm_name(r));
	return 0;
}

int vgpu_fm_set_activated(struct vgpu_ctx *ctx, struct vgpu_fm *fm, const unsigned *ids, size_t n)
{
	fmActivatedFabricPartitionList_v1 list = {
		.version = fmActivatedFabricPartitionList_version1
	};
	fmReturn_t r;

	if (n > FM_MAX_FABRIC_PARTITIONS)
		return vgpu_error(ctx, -EINVAL,
				  "%zu active partitions, more than Fabric Manager's %d", n,
				  FM_MAX_FABRIC_PARTITIONS);
	for (size_t i = 0; i < n; i++)
		list.partitionIds[i] = ids[i];
	list.numPartitions = (unsigned)n;
	r = fm->fmSetActivatedFabricPartitions(fm->handle, &list);
	if (r != FM_ST_SUCCESS)
		return vgpu_error(ctx, fm_errno(r),
				  "Fabric Manager cannot be told the active partitions: %s (%s)",
				  fm_cause(r), fm_name(r));
	return 0;
}
