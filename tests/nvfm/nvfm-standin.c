// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nvfm-standin.c - test-only libnvfm.so.1: the Fabric Manager SDK entry
 * points of src/lib/fabric-abi.h, answering for an HGX H100 8-GPU board
 * whose daemon state lives with the NVML stand-in's, under
 * $FAKE_NV_ROOT/var/lib/fake-nvidia/, every access under flock on `lock`.
 * Contract: README.md here.
 *
 * Not thread-safe (vgpuctl is single-threaded); never printed to.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "fabric-abi.h"

/* every entry point with the header's exact signature */
#define STANDIN_DECLARE(ret, name, args) ret name args;
VGPU_NVFM_REQUIRED(STANDIN_DECLARE)
VGPU_NVFM_OPTIONAL(STANDIN_DECLARE)
#undef STANDIN_DECLARE

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NGPUS 8
/* H100 SXM5: 18 NVLink 4 links of 25 GB/s each way (the line rate is made up) */
#define NVLINKS 18
#define LINE_RATE_MBPS 25000

/*
 * The published HGX H100 8-GPU partition table (Fabric Manager user guide,
 * "GPU partitions" for DGX H100 / HGX H100): physical IDs 1..8.
 */
static const struct {
	unsigned id, n, gpu[NGPUS];
} table[] = {
	{ 0, 8, { 1, 2, 3, 4, 5, 6, 7, 8 } },
	{ 1, 4, { 1, 2, 3, 4 } },
	{ 2, 4, { 5, 6, 7, 8 } },
	{ 3, 2, { 1, 2 } },
	{ 4, 2, { 3, 4 } },
	{ 5, 2, { 5, 6 } },
	{ 6, 2, { 7, 8 } },
	{ 7, 1, { 1 } },
	{ 8, 1, { 2 } },
	{ 9, 1, { 3 } },
	{ 10, 1, { 4 } },
	{ 11, 1, { 5 } },
	{ 12, 1, { 6 } },
	{ 13, 1, { 7 } },
	{ 14, 1, { 8 } },
};
#define NPARTS ARRAY_SIZE(table)

static int init_count;
/* the one connection: fmConnect hands out its address */
static int connection;

/* ---- state files ----------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int spath(char *buf, size_t n, const char *fmt, ...)
{
	const char *root = getenv("FAKE_NV_ROOT");
	char rel[256];
	va_list ap;
	int len;

	if (!root || !*root)
		return -1;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	len = snprintf(buf, n, "%s/var/lib/fake-nvidia/%s", root, rel);
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* flock on st/lock, as the fakes and the NVML stand-in take it; -1 without a root */
static int lock_take(void)
{
	char p[PATH_MAX];
	int fd;

	if (spath(p, sizeof(p), "%s", "") < 0 || mkdir_p(p) < 0 || spath(p, sizeof(p), "lock") < 0)
		return -1;
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void lock_drop(int fd)
{
	if (fd >= 0)
		close(fd);
}

static bool st_exists(const char *name)
{
	char p[PATH_MAX];

	return spath(p, sizeof(p), "%s", name) == 0 && access(p, F_OK) == 0;
}

/* the numbers of st/NAME, one a line (blank lines and '#' comments skipped); how many */
static size_t st_numbers(const char *name, unsigned *out, size_t max)
{
	char p[PATH_MAX], line[128];
	size_t n = 0;
	FILE *f;

	if (spath(p, sizeof(p), "%s", name) < 0 || !(f = fopen(p, "re")))
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long v = strtoul(line, &end, 10);

		if (end != line && v <= UINT_MAX)
			out[n++] = (unsigned)v;
	}
	fclose(f);
	return n;
}

static long st_number(const char *name, long def)
{
	unsigned v;

	return st_numbers(name, &v, 1) ? (long)v : def;
}

static void st_write_ids(const char *name, const unsigned *ids, size_t n)
{
	char p[PATH_MAX];
	FILE *f;

	if (spath(p, sizeof(p), "%s", name) < 0 || !(f = fopen(p, "we")))
		return;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%u\n", ids[i]);
	fclose(f);
}

static void st_write_str(const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	if (spath(p, sizeof(p), "%s", name) < 0 || !(f = fopen(p, "we")))
		return;
	fputs(text, f);
	fclose(f);
}

static void st_remove(const char *name)
{
	char p[PATH_MAX];

	if (spath(p, sizeof(p), "%s", name) == 0)
		unlink(p);
}

/* one line in st/calls (the NVML stand-in's and the fakes' log): "nvfm FUNCTION ARGS" */
__attribute__((format(printf, 1, 2))) static void log_call(const char *fmt, ...)
{
	char p[PATH_MAX], line[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (spath(p, sizeof(p), "calls") == 0 && (f = fopen(p, "ae"))) {
		fprintf(f, "nvfm %s\n", line);
		fclose(f);
	}
}

static const struct {
	const char *name;
	fmReturn_t code;
} fail_names[] = {
	{ "not-running", FM_ST_CONNECTION_NOT_VALID },
	{ "not-ready", FM_ST_NOT_READY },
	{ "in-use", FM_ST_IN_USE },
	/* what a restarted Fabric Manager answers before it is resynced is unverified */
	{ "out-of-sync", FM_ST_NOT_CONFIGURED },
	{ "FM_ST_BADPARAM", FM_ST_BADPARAM },
	{ "FM_ST_GENERIC_ERROR", FM_ST_GENERIC_ERROR },
	{ "FM_ST_NOT_SUPPORTED", FM_ST_NOT_SUPPORTED },
	{ "FM_ST_UNINITIALIZED", FM_ST_UNINITIALIZED },
	{ "FM_ST_TIMEOUT", FM_ST_TIMEOUT },
	{ "FM_ST_VERSION_MISMATCH", FM_ST_VERSION_MISMATCH },
	{ "FM_ST_IN_USE", FM_ST_IN_USE },
	{ "FM_ST_NOT_CONFIGURED", FM_ST_NOT_CONFIGURED },
	{ "FM_ST_CONNECTION_NOT_VALID", FM_ST_CONNECTION_NOT_VALID },
	{ "FM_ST_NVLINK_ERROR", FM_ST_NVLINK_ERROR },
	{ "FM_ST_NOT_READY", FM_ST_NOT_READY },
};

/*
 * fm-fail: lines "CALL ERROR" (CALL an entry point or '*'); the first fault
 * for @fn (with @star, '*' lines too), FM_ST_SUCCESS when none.
 */
static fmReturn_t fault_of(const char *fn, bool star)
{
	char p[PATH_MAX], line[256];
	fmReturn_t r = FM_ST_SUCCESS;
	FILE *f;

	if (spath(p, sizeof(p), "fm-fail") < 0 || !(f = fopen(p, "re")))
		return FM_ST_SUCCESS;
	while (r == FM_ST_SUCCESS && fgets(line, sizeof(line), f)) {
		char call[128], err[128], *end;
		long v;

		if (sscanf(line, "%127s %127s", call, err) != 2 || call[0] == '#')
			continue;
		if (!(star && strcmp(call, "*") == 0) && strcmp(call, fn) != 0)
			continue;
		v = strtol(err, &end, 10);
		if (end != err && !*end) {
			r = (fmReturn_t)v;
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(fail_names); i++)
			if (strcmp(err, fail_names[i].name) == 0)
				r = fail_names[i].code;
		if (r == FM_ST_SUCCESS)
			r = FM_ST_GENERIC_ERROR; /* a name nobody knows: still a fault */
	}
	fclose(f);
	return r;
}

static fmReturn_t fault(const char *fn)
{
	return fault_of(fn, true);
}

/* the table row of partition @id, -1 when none */
static int part_of(unsigned id)
{
	for (size_t i = 0; i < NPARTS; i++)
		if (table[i].id == id)
			return (int)i;
	return -1;
}

static bool listed(const unsigned *v, size_t n, unsigned x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* the daemon's active partitions: none while restarted and not resynced */
static size_t active_load(unsigned *ids, size_t max)
{
	if (st_exists("fm-restarted"))
		return 0;
	return st_numbers("fm-active", ids, max);
}

/* module-<BDF> files (NVML's module IDs): the bus of physical ID @phys, "" when none */
static void bus_of(unsigned phys, char *out, size_t n)
{
	char p[PATH_MAX];
	struct dirent *e;
	DIR *d;

	out[0] = '\0';
	if (spath(p, sizeof(p), "%s", "") < 0 || !(d = opendir(p)))
		return;
	while ((e = readdir(d))) {
		unsigned dom, bus, dev, fn;

		if (strncmp(e->d_name, "module-", 7) != 0 ||
		    st_number(e->d_name, -1) != (long)phys ||
		    sscanf(e->d_name + 7, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
			continue;
		/* as Fabric Manager writes a bus ID: NVML's long form */
		snprintf(out, n, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
		break;
	}
	closedir(d);
}

#define ENTER()                                                                                    \
	do {                                                                                       \
		if (!init_count)                                                                   \
			return FM_ST_UNINITIALIZED;                                                \
	} while (0)
#define HANDLE_ENTER(h)                                                                            \
	do {                                                                                       \
		ENTER();                                                                           \
		if ((h) != (fmHandle_t)&connection)                                                \
			return FM_ST_BADPARAM;                                                     \
	} while (0)

/* ---- entry points ---------------------------------------------------------------------- */

fmReturn_t fmLibInit(void)
{
	init_count++;
	return FM_ST_SUCCESS;
}

fmReturn_t fmLibShutdown(void)
{
	if (!init_count)
		return FM_ST_UNINITIALIZED;
	init_count--;
	return FM_ST_SUCCESS;
}

fmReturn_t fmConnect(fmConnectParams_v2 *params, fmHandle_t *handle)
{
	char p[PATH_MAX];
	fmReturn_t r;

	ENTER();
	if (!params || !handle)
		return FM_ST_BADPARAM;
	if (params->version != fmConnectParams_version2 &&
	    params->version != fmConnectParams_version1)
		return FM_ST_VERSION_MISMATCH;
	/* no root: no daemon */
	if (spath(p, sizeof(p), "%s", "") < 0)
		return FM_ST_CONNECTION_NOT_VALID;
	/* a fault named for fmConnect; of the '*' ones only not-running (no daemon) */
	r = fault_of("fmConnect", false);
	if (r == FM_ST_SUCCESS && fault("fmConnect") == FM_ST_CONNECTION_NOT_VALID)
		r = FM_ST_CONNECTION_NOT_VALID;
	if (r != FM_ST_SUCCESS)
		return r;
	{
		/* where vgpuctl was told Fabric Manager listens: "inet IP:PORT" or "unix PATH" */
		bool unix_socket = params->version == fmConnectParams_version2 ?
					   params->addressType == NV_FM_API_ADDR_TYPE_UNIX :
					   params->addressIsUnixSocket != 0;
		char text[FM_MAX_STR_LENGTH + 16];
		int fd = lock_take();

		snprintf(text, sizeof(text), "%s %.*s\n", unix_socket ? "unix" : "inet",
			 FM_MAX_STR_LENGTH, params->addressInfo);
		st_write_str("fm-address", text);
		lock_drop(fd);
	}
	*handle = (fmHandle_t)&connection;
	return FM_ST_SUCCESS;
}

fmReturn_t fmDisconnect(fmHandle_t handle)
{
	HANDLE_ENTER(handle);
	return FM_ST_SUCCESS;
}

static void gpu_info(fmFabricPartitionGpuInfo_t *g, unsigned phys)
{
	memset(g, 0, sizeof(*g));
	g->physicalId = phys;
	g->numNvLinksAvailable = NVLINKS;
	g->maxNumNvLinks = NVLINKS;
	g->nvlinkLineRateMBps = LINE_RATE_MBPS;
}

fmReturn_t fmGetSupportedFabricPartitions(fmHandle_t handle, fmFabricPartitionList_v2 *list)
{
	unsigned uns[NPARTS], act[NPARTS];
	size_t nuns, nact;
	fmReturn_t r;
	int fd;

	HANDLE_ENTER(handle);
	if (!list)
		return FM_ST_BADPARAM;
	if (list->version != fmFabricPartitionList_version2)
		return FM_ST_VERSION_MISMATCH;
	if ((r = fault("fmGetSupportedFabricPartitions")) != FM_ST_SUCCESS)
		return r;
	fd = lock_take();
	if (st_number("fm-mode", 2) == 0) {
		lock_drop(fd);
		return FM_ST_NOT_SUPPORTED;
	}
	nuns = st_numbers("fm-unsupported", uns, NPARTS);
	nact = active_load(act, NPARTS);
	lock_drop(fd);
	list->numPartitions = 0;
	list->maxNumPartitions = NPARTS;
	for (size_t i = 0; i < NPARTS; i++) {
		fmFabricPartitionInfo_t *pi;

		if (listed(uns, nuns, table[i].id))
			continue;
		pi = &list->partitionInfo[list->numPartitions++];
		memset(pi, 0, sizeof(*pi));
		pi->partitionId = table[i].id;
		pi->isActive = listed(act, nact, table[i].id);
		pi->numGpus = table[i].n;
		/* the GPUs' UUIDs and bus IDs are left empty: vgpuctl maps physical IDs */
		for (unsigned k = 0; k < table[i].n; k++)
			gpu_info(&pi->gpuInfo[k], table[i].gpu[k]);
	}
	return FM_ST_SUCCESS;
}

fmReturn_t fmGetUnsupportedFabricPartitions(fmHandle_t handle,
					    fmUnsupportedFabricPartitionList_v1 *list)
{
	unsigned uns[NPARTS];
	size_t nuns;
	fmReturn_t r;
	int fd;

	HANDLE_ENTER(handle);
	if (!list)
		return FM_ST_BADPARAM;
	if (list->version != fmUnsupportedFabricPartitionList_version1)
		return FM_ST_VERSION_MISMATCH;
	if ((r = fault("fmGetUnsupportedFabricPartitions")) != FM_ST_SUCCESS)
		return r;
	fd = lock_take();
	nuns = st_numbers("fm-unsupported", uns, NPARTS);
	lock_drop(fd);
	list->numPartitions = 0;
	for (size_t i = 0; i < NPARTS; i++) {
		fmUnsupportedFabricPartitionInfo_t *ui;

		if (!listed(uns, nuns, table[i].id))
			continue;
		ui = &list->partitionInfo[list->numPartitions++];
		memset(ui, 0, sizeof(*ui));
		ui->partitionId = table[i].id;
		ui->numGpus = table[i].n;
		for (unsigned k = 0; k < table[i].n; k++)
			ui->gpuPhysicalIds[k] = table[i].gpu[k];
	}
	return FM_ST_SUCCESS;
}

fmReturn_t fmGetNvlinkFailedDevices(fmHandle_t handle, fmNvlinkFailedDevices_v1 *list)
{
	unsigned failed[NGPUS];
	size_t n;
	fmReturn_t r;
	int fd;

	HANDLE_ENTER(handle);
	if (!list)
		return FM_ST_BADPARAM;
	if (list->version != fmNvlinkFailedDevices_version1)
		return FM_ST_VERSION_MISMATCH;
	if ((r = fault("fmGetNvlinkFailedDevices")) != FM_ST_SUCCESS)
		return r;
	fd = lock_take();
	n = st_numbers("fm-failed", failed, NGPUS);
	list->numGpus = 0;
	list->numSwitches = 0;
	for (size_t i = 0; i < n; i++) {
		fmNvlinkFailedDeviceInfo_t *d = &list->gpuInfo[list->numGpus++];

		memset(d, 0, sizeof(*d));
		bus_of(failed[i], d->pciBusId, sizeof(d->pciBusId));
		d->numPorts = 1;
		d->portNum[0] = 0;
	}
	lock_drop(fd);
	return FM_ST_SUCCESS;
}

/*
 * Activation under the lock: the mode's call, a known supported inactive
 * partition whose GPUs no active partition holds, one VF per GPU in mode 2.
 */
/*
 * The physical ID of the GPU whose VF is @vf: its physfn under
 * $FAKE_NV_ROOT/sys/bus/pci/devices, that PF's module-<BDF> file; -1 unknown.
 */
static long phys_of_vf(const fmPciDevice_t *vf)
{
	const char *root = getenv("FAKE_NV_ROOT");
	char p[PATH_MAX], link[PATH_MAX], name[64];
	const char *pf;
	ssize_t n;

	if (!root)
		return -1;
	snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/%04x:%02x:%02x.%x/physfn", root, vf->domain,
		 vf->bus, vf->device, vf->function);
	n = readlink(p, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	pf = strrchr(link, '/');
	pf = pf ? pf + 1 : link;
	snprintf(name, sizeof(name), "module-%.32s", pf);
	return st_number(name, -1);
}

static fmReturn_t activate(fmFabricPartitionId_t id, bool with_vfs, const fmPciDevice_t *vfs,
			   unsigned nvfs)
{
	unsigned act[NPARTS], uns[NPARTS];
	size_t nact, nuns;
	long mode = st_number("fm-mode", 2);
	int row = part_of(id);

	if (mode == 0 || (mode == 2) != with_vfs)
		return FM_ST_NOT_SUPPORTED;
	if (st_exists("fm-restarted"))
		return FM_ST_NOT_CONFIGURED;
	nuns = st_numbers("fm-unsupported", uns, NPARTS);
	if (row < 0 || listed(uns, nuns, id))
		return FM_ST_BADPARAM;
	if (with_vfs && nvfs != table[row].n)
		return FM_ST_BADPARAM;
	/* nv_fm_agent.h: "the order of VFs should be associated with actual physical GPUs in the
	 * partition": VF k is on the partition's GPU k */
	for (unsigned k = 0; with_vfs && k < nvfs; k++) {
		long phys = phys_of_vf(&vfs[k]);

		if (phys >= 0 && (unsigned long)phys != table[row].gpu[k])
			return FM_ST_BADPARAM;
	}
	nact = active_load(act, NPARTS);
	for (size_t i = 0; i < nact; i++) {
		int other = part_of(act[i]);

		if (act[i] == id)
			return FM_ST_IN_USE;
		for (unsigned a = 0; other >= 0 && a < table[other].n; a++)
			for (unsigned b = 0; b < table[row].n; b++)
				if (table[other].gpu[a] == table[row].gpu[b])
					return FM_ST_IN_USE;
	}
	act[nact++] = id;
	st_write_ids("fm-active", act, nact);
	return FM_ST_SUCCESS;
}

fmReturn_t fmActivateFabricPartition(fmHandle_t handle, fmFabricPartitionId_t id)
{
	fmReturn_t r;
	int fd;

	HANDLE_ENTER(handle);
	fd = lock_take();
	log_call("fmActivateFabricPartition %u", id);
	r = fault("fmActivateFabricPartition");
	if (r == FM_ST_SUCCESS)
		r = activate(id, false, NULL, 0);
	lock_drop(fd);
	return r;
}

fmReturn_t fmActivateFabricPartitionWithVFs(fmHandle_t handle, fmFabricPartitionId_t id,
					    fmPciDevice_t *vfs, unsigned int n)
{
	char line[64 + 16 * FM_MAX_NUM_GPUS];
	size_t len;
	fmReturn_t r;
	int fd;

	HANDLE_ENTER(handle);
	if (!vfs || n == 0 || n > FM_MAX_NUM_GPUS)
		return FM_ST_BADPARAM;
	len = (size_t)snprintf(line, sizeof(line), "fmActivateFabricPartitionWithVFs %u", id);
	for (unsigned i = 0; i < n && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %04x:%02x:%02x.%x",
					vfs[i].domain, vfs[i].bus, vfs[i].device, vfs[i].function);
	fd = lock_take();
	log_call("%s", line);
	r = fault("fmActivateFabricPartitionWithVFs");
	if (r == FM_ST_SUCCESS)
		r = activate(id, true, vfs, n);
	lock_drop(fd);
	return r;
}

fmReturn_t fmDeactivateFabricPartition(fmHandle_t handle, fmFabricPartitionId_t id)
{
	unsigned act[NPARTS], keep[NPARTS];
	size_t nact, nkeep = 0;
	fmReturn_t r;
	int fd;

	HANDLE_ENTER(handle);
	fd = lock_take();
	log_call("fmDeactivateFabricPartition %u", id);
	r = fault("fmDeactivateFabricPartition");
	if (r == FM_ST_SUCCESS && st_exists("fm-restarted"))
		r = FM_ST_NOT_CONFIGURED;
	if (r == FM_ST_SUCCESS && part_of(id) < 0)
		r = FM_ST_BADPARAM;
	if (r == FM_ST_SUCCESS) {
		nact = active_load(act, NPARTS);
		for (size_t i = 0; i < nact; i++)
			if (act[i] != id)
				keep[nkeep++] = act[i];
		/* the header: "FM_ST_UNINITIALIZED specified partition is not activated" */
		if (nkeep == nact)
			r = FM_ST_UNINITIALIZED;
		else
			st_write_ids("fm-active", keep, nkeep);
	}
	lock_drop(fd);
	return r;
}

fmReturn_t fmSetActivatedFabricPartitions(fmHandle_t handle,
					  fmActivatedFabricPartitionList_v1 *list)
{
	char line[64 + 4 * FM_MAX_FABRIC_PARTITIONS];
	size_t len;
	fmReturn_t r;
	int fd;

	HANDLE_ENTER(handle);
	if (!list)
		return FM_ST_BADPARAM;
	if (list->version != fmActivatedFabricPartitionList_version1)
		return FM_ST_VERSION_MISMATCH;
	if (list->numPartitions > FM_MAX_FABRIC_PARTITIONS)
		return FM_ST_BADPARAM;
	len = (size_t)snprintf(line, sizeof(line), "fmSetActivatedFabricPartitions");
	for (unsigned i = 0; i < list->numPartitions && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %u",
					list->partitionIds[i]);
	fd = lock_take();
	log_call("%s", line);
	r = fault("fmSetActivatedFabricPartitions");
	for (unsigned i = 0; r == FM_ST_SUCCESS && i < list->numPartitions; i++)
		if (part_of(list->partitionIds[i]) < 0)
			r = FM_ST_BADPARAM;
	if (r == FM_ST_SUCCESS) {
		st_write_ids("fm-active", list->partitionIds, list->numPartitions);
		st_remove("fm-restarted");
	}
	lock_drop(fd);
	return r;
}
