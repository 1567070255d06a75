// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nvml-standin.c - test-only libnvidia-ml.so.1: the NVML entry points of
 * src/lib/nvml-abi.h, acting on the fixture host tree $FAKE_NV_ROOT exactly as
 * the bash fakes (tests/apply/fake-nvidia-smi, fake-nv-lib.sh) do, on the same
 * state files under the same flock, so `fake-nvidia-smi mig -lgi` shows GIs
 * made here and this library sees GIs made there.  Contract: README.md here.
 *
 * Built twice: libnvidia-ml.so.1 (every entry point) and, with -DSTANDIN_OLD,
 * old/libnvidia-ml.so.1, an older driver without VGPU_NVML_OPTIONAL and
 * without nvmlDeviceCreateGpuInstanceWithPlacement.
 *
 * Not thread-safe (vgpuctl is single-threaded); never printed to, except one
 * stderr line for a tree the fakes would also refuse.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvml-abi.h"

/* every entry point with the header's exact signature */
#define STANDIN_DECLARE(ret, name, args) ret name args;
VGPU_NVML_REQUIRED(STANDIN_DECLARE)
VGPU_NVML_OPTIONAL(STANDIN_DECLARE)
#undef STANDIN_DECLARE

/*
 * Real NVML entry points the header does not list (yet), exported for tests:
 * creation without a placement (first fit), and the CI calls needed to empty
 * a GI before nvmlGpuInstanceDestroy (which refuses a GI with a CI).
 */
nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t dev, unsigned int profileId,
					 nvmlGpuInstance_t *gi);
nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gi, unsigned int profileId,
						nvmlComputeInstance_t *cis, unsigned int *count);
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci);

/* nvml.h's NVML_ERROR_ARGUMENT_VERSION_MISMATCH: the vGPU structs' version check */
#define STANDIN_VERSION_MISMATCH 25

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_GIS 16
#define MAX_VFS 64

/* ---- tables ------------------------------------------------------------ */

/*
 * GI profiles, as fake-nv-lib.sh's fnv_profiles (the selftest compares
 * them): nvidia-smi profile ID, NVML profile index, name, compute slices,
 * memory slices, legal starts (bit i: memory slice i), per-GPU maximum, SMs
 * (vgpu-host.md 4.2 -lgip samples; the RTX PRO 6000 figures are made up).
 */
struct profile {
	unsigned int id, index;
	const char *name;
	unsigned int csl, msl, starts, max, sm;
};

#define MIG8(s1, s1l, g2, g3, g4, g7, sm1, sm1l, sm2, sm3, sm4, sm7)                               \
	{ 19, 0, s1, 1, 1, 0x7f, 7, sm1 }, { 20, 7, s1 "+me", 1, 1, 0x7f, 1, sm1 },                \
		{ 15, 9, s1l, 1, 2, 0x55, 4, sm1l }, { 14, 1, g2, 2, 2, 0x15, 3, sm2 },            \
		{ 9, 2, g3, 3, 4, 0x11, 2, sm3 }, { 5, 3, g4, 4, 4, 0x01, 1, sm4 },                \
	{                                                                                          \
		0, 4, g7, 7, 8, 0x01, 1, sm7                                                       \
	}

static const struct profile prof_h100_80[] = {
	MIG8("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", 16, 26, 32, 60, 64,
	     132),
};
static const struct profile prof_a100_80[] = {
	MIG8("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", 14, 14, 28, 42, 56,
	     98),
};
static const struct profile prof_a100_40[] = {
	MIG8("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", 14, 14, 28, 42, 56,
	     98),
};
static const struct profile prof_a30[] = {
	{ 14, 0, "1g.6gb", 1, 1, 0x0f, 4, 14 }, { 21, 7, "1g.6gb+me", 1, 1, 0x0f, 1, 14 },
	{ 5, 1, "2g.12gb", 2, 2, 0x05, 2, 28 }, { 6, 8, "2g.12gb+me", 2, 2, 0x05, 1, 28 },
	{ 0, 3, "4g.24gb", 4, 4, 0x01, 1, 56 },
};
/* src/lib/mig-tables.c mig_dc; NVML indexes by suffix: +gfx 10-12, -me 13-14, +me.all 15-16 */
static const struct profile prof_dc[] = {
	{ 14, 0, "1g.24gb", 1, 1, 0x0f, 4, 46 },
	{ 21, 7, "1g.24gb+me", 1, 1, 0x0f, 1, 46 },
	{ 47, 10, "1g.24gb+gfx", 1, 1, 0x0f, 4, 46 },
	{ 65, 15, "1g.24gb+me.all", 1, 1, 0x0f, 1, 46 },
	{ 67, 13, "1g.24gb-me", 1, 1, 0x0f, 4, 46 },
	{ 5, 1, "2g.48gb", 2, 2, 0x05, 2, 94 },
	{ 35, 11, "2g.48gb+gfx", 2, 2, 0x05, 2, 94 },
	{ 64, 16, "2g.48gb+me.all", 2, 2, 0x05, 1, 94 },
	{ 66, 14, "2g.48gb-me", 2, 2, 0x05, 2, 94 },
	{ 0, 3, "4g.96gb", 4, 4, 0x01, 1, 188 },
	{ 32, 12, "4g.96gb+gfx", 4, 4, 0x01, 1, 188 },
};

/*
 * vGPU types.  Type IDs are global in NVML.  H100 80GB: the IDs of
 * tests/data/mkhosts.sh and fake-nv-lib.sh's fnv_vgpu_types (maxima and GI
 * profiles: vgpu-host.md 4.3).  RTX PRO 6000 Blackwell ("DC"): a test range,
 * 1200-1299, shaped on NVIDIA's published Blackwell type table as
 * vgpu-device-manager carries it (vgpu-host.md 4.3): time-sliced DC-<GB>C
 * with max 96/GB, and MIG-backed types time-sliced inside +gfx GIs (47
 * 1g.24gb+gfx, 35 2g.48gb+gfx, 32 4g.96gb+gfx), max = per-GI x GIs.  This
 * table is ALSO tests/nvml/dc-types.txt (read by mkhosts.sh and the bash
 * fakes); the selftest checks that the two agree.  gi = -1: time-sliced.
 */
struct vtype {
	unsigned int id;
	const char *name;
	int gi;
	unsigned int per_gi, max, fb_mib;
	/* time-sliced: the maximum in mixed-size mode; 0: the same as max */
	unsigned int mixed_max;
};

static const struct vtype types_h100_80[] = {
	{ 1056, "H100-1-10C", 19, 1, 7, 10240, 0 },   { 1057, "H100-1-20C", 15, 1, 4, 20480, 0 },
	{ 1058, "H100-2-20C", 14, 1, 3, 20480, 0 },   { 1059, "H100-3-40C", 9, 1, 2, 40960, 0 },
	{ 1060, "H100-4-40C", 5, 1, 1, 40960, 0 },    { 1061, "H100-7-80C", 0, 1, 1, 81920, 0 },
	{ 1062, "H100-1-10CME", 20, 1, 1, 10240, 0 },
};

static const struct vtype types_dc[] = {
	{ 1200, "DC-96C", -1, 0, 1, 98304, 0 },	  { 1201, "DC-48C", -1, 0, 2, 49152, 0 },
	{ 1202, "DC-32C", -1, 0, 3, 32768, 0 },	  { 1203, "DC-24C", -1, 0, 4, 24576, 0 },
	{ 1204, "DC-16C", -1, 0, 6, 16384, 0 },	  { 1205, "DC-12C", -1, 0, 8, 12288, 0 },
	{ 1206, "DC-8C", -1, 0, 12, 8192, 0 },	  { 1207, "DC-6C", -1, 0, 16, 6144, 0 },
	{ 1208, "DC-4C", -1, 0, 24, 4096, 0 },	  { 1220, "DC-1-24C", 47, 1, 4, 24576, 0 },
	{ 1221, "DC-1-12C", 47, 2, 8, 12288, 0 }, { 1222, "DC-1-8C", 47, 3, 12, 8192, 0 },
	{ 1223, "DC-1-6C", 47, 4, 16, 6144, 0 },  { 1224, "DC-1-4C", 47, 6, 24, 4096, 0 },
	{ 1230, "DC-2-48C", 35, 1, 2, 49152, 0 }, { 1231, "DC-2-24C", 35, 2, 4, 24576, 0 },
	{ 1232, "DC-2-16C", 35, 3, 6, 16384, 0 }, { 1240, "DC-4-96C", 32, 1, 1, 98304, 0 },
	{ 1241, "DC-4-48C", 32, 2, 2, 49152, 0 },
};

/*
 * H100 NVL (94 GB), time-sliced only here: the test IDs of
 * tests/data/mkhosts.sh's H100L_TYPES (the reference names no real ones);
 * sizes and the maxima of both modes from vgpu-host.md 5.2 ("4C 23/16": 23
 * in equal-size mode, 16 in mixed-size mode, what NVML then reports).
 */
static const struct vtype types_h100l[] = {
	{ 1300, "H100L-94C", -1, 0, 1, 96256, 1 }, { 1301, "H100L-47C", -1, 0, 2, 48128, 2 },
	{ 1302, "H100L-23C", -1, 0, 4, 23552, 4 }, { 1303, "H100L-15C", -1, 0, 6, 15360, 4 },
	{ 1304, "H100L-11C", -1, 0, 8, 11264, 8 }, { 1305, "H100L-6C", -1, 0, 15, 6144, 8 },
	{ 1306, "H100L-4C", -1, 0, 23, 4096, 16 },
};

/*
 * Families, found as fnv_family finds them: the `Model:` of
 * proc/driver/nvidia/gpus/<BDF>/information, else the PCI device ID, matched
 * (upper case) against shell patterns in order; the first match wins.
 */
struct family {
	const char *key; /* fnv_family's word */
	const char *patterns; /* '|'-separated fnmatch patterns; NULL: only by device */
	const char *devices; /* PCI device IDs */
	unsigned long long mem_mib;
	unsigned int compute_slices, mem_slices;
	const struct profile *prof;
	size_t nprof;
	const struct vtype *types;
	size_t ntypes;
	const char *prefix; /* type names: "NVIDIA " PREFIX SHORT */
};

static const struct family families[] = {
	{ "dc", "*RTX PRO 6000*", "0x2bb5", 98304, 4, 4, prof_dc, ARRAY_SIZE(prof_dc), types_dc,
	  ARRAY_SIZE(types_dc), "RTX Pro 6000 Blackwell " },
	/*
	 * H100 NVL / 94GB: no MIG here (as fnv_family), no memory either;
	 * its time-sliced types
	 */
	{ "", "*H100*NVL*|*H100*94GB*|*H100L*", "0x2321", 0, 0, 0, NULL, 0, types_h100l,
	  ARRAY_SIZE(types_h100l), "" },
	{ "h100-80", "*H100*", "0x2330 0x2331", 81559, 7, 8, prof_h100_80, ARRAY_SIZE(prof_h100_80),
	  types_h100_80, ARRAY_SIZE(types_h100_80), "" },
	{ "a100-80", "*A100*80GB*", "0x20b5 0x20b2", 81920, 7, 8, prof_a100_80,
	  ARRAY_SIZE(prof_a100_80), NULL, 0, "" },
	{ "a100-40", "*A100*", "0x20f1 0x20b0", 40960, 7, 8, prof_a100_40, ARRAY_SIZE(prof_a100_40),
	  NULL, 0, "" },
	{ "a30", "*A30*", "0x20b7", 24576, 4, 4, prof_a30, ARRAY_SIZE(prof_a30), NULL, 0, "" },
	/* no MIG, memory only */
	{ "", "*L40S*", "0x26b9", 49152, 0, 0, NULL, 0, NULL, 0, "" },
};

/* ---- process state -------------------------------------------------------- */

struct nvmlDevice_st {
	char bdf[16]; /* 0000:ca:00.0 */
	const struct family *fam; /* NULL: not modelled */
	unsigned int minor;
	struct nvmlDevice_st *next;
};

struct nvmlComputeInstance_st {
	struct nvmlGpuInstance_st *gi;
};

struct nvmlGpuInstance_st {
	struct nvmlDevice_st *dev;
	unsigned int id, pid, start, size;
	struct nvmlComputeInstance_st ci;
	struct nvmlGpuInstance_st *next;
};

static unsigned int init_count;
static char root[PATH_MAX], st[PATH_MAX];
static struct nvmlDevice_st *devices;
static struct nvmlGpuInstance_st *gi_handles;
static bool kill_pending;

/* one GI of gis-<BDF>: "GI_ID PROFILE_ID NAME START SIZE CI" */
struct gi_row {
	unsigned int id, pid, start, size, ci;
	char name[32];
};

struct gi_state {
	struct gi_row r[MAX_GIS];
	size_t n;
};

/* ---- files ---------------------------------------------------------------- */

static int vpath(char *buf, size_t n, const char *base, const char *fmt, va_list ap)
{
	char rel[PATH_MAX];
	int l = vsnprintf(rel, sizeof(rel), fmt, ap);

	if (l < 0 || (size_t)l >= sizeof(rel))
		return -1;
	l = snprintf(buf, n, "%s/%s", base, rel);
	return l < 0 || (size_t)l >= n ? -1 : 0;
}

/* root/REL and st/REL, printf-style */
__attribute__((format(printf, 3, 4))) static int rpath(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vpath(buf, n, root, fmt, ap);
	va_end(ap);
	return r;
}

__attribute__((format(printf, 3, 4))) static int spath(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vpath(buf, n, st, fmt, ap);
	va_end(ap);
	return r;
}

static char *trim(char *s)
{
	size_t l;

	while (isspace((unsigned char)*s))
		s++;
	l = strlen(s);
	while (l && isspace((unsigned char)s[l - 1]))
		s[--l] = '\0';
	return s;
}

/* the first line of @path, trimmed (fnv_get); -1 when unreadable */
static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	char line[256];
	char *t;

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	t = trim(line);
	snprintf(buf, n, "%s", t);
	return 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	int r = 0;

	if (!f)
		return -1;
	if (fputs(text, f) < 0)
		r = -1;
	if (fclose(f) != 0)
		r = -1;
	return r;
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

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static int rm_rf(const char *path)
{
	if (access(path, F_OK) < 0)
		return 0;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static bool is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* the fakes' lock: flock on st/lock (fnv_root's `exec 9>lock; flock 9`) */
static int lock_take(void)
{
	char p[PATH_MAX];
	int fd;

	if (spath(p, sizeof(p), "lock") < 0)
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

/* a number from st/NAME, @def when unreadable or not a number */
static long st_number(const char *name, long def)
{
	char p[PATH_MAX], v[64], *end;
	long n;

	if (spath(p, sizeof(p), "%s", name) < 0 || read_line(p, v, sizeof(v)) < 0)
		return def;
	n = strtol(v, &end, 10);
	return end == v || *end ? def : n;
}

/*
 * One line in st/calls: "nvml FUNCTION ARGS".  For the changing entry points
 * also the fakes' kill-after fault: the Nth changing call (bash fakes and
 * this library counted together in kill-count) kills this process with
 * SIGKILL once it has done its work (finish()).
 */
__attribute__((format(printf, 2, 3))) static void log_call(bool changing, const char *fmt, ...)
{
	char p[PATH_MAX], line[512];
	va_list ap;
	FILE *f;
	int fd = lock_take();

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (spath(p, sizeof(p), "calls") == 0 && (f = fopen(p, "ae"))) {
		fprintf(f, "nvml %s\n", line);
		fclose(f);
	}
	if (changing) {
		char after[PATH_MAX];
		struct stat sb;

		if (spath(after, sizeof(after), "kill-after") == 0 && stat(after, &sb) == 0 &&
		    sb.st_size > 0) {
			long n = st_number("kill-count", 0) + 1;
			char v[32];

			snprintf(v, sizeof(v), "%ld\n", n);
			if (spath(p, sizeof(p), "kill-count") == 0)
				write_file(p, v);
			if (n == st_number("kill-after", -1))
				kill_pending = true;
		}
	}
	lock_drop(fd);
}

static nvmlReturn_t finish(nvmlReturn_t r)
{
	if (kill_pending)
		kill(getpid(), SIGKILL);
	return r;
}

static const struct {
	const char *name;
	nvmlReturn_t code;
} code_names[] = {
	{ "NVML_SUCCESS", NVML_SUCCESS },
	{ "NVML_ERROR_UNINITIALIZED", NVML_ERROR_UNINITIALIZED },
	{ "NVML_ERROR_INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT },
	{ "NVML_ERROR_NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED },
	{ "NVML_ERROR_NO_PERMISSION", NVML_ERROR_NO_PERMISSION },
	{ "NVML_ERROR_NOT_FOUND", NVML_ERROR_NOT_FOUND },
	{ "NVML_ERROR_INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE },
	{ "NVML_ERROR_DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED },
	{ "NVML_ERROR_FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND },
	{ "NVML_ERROR_IN_USE", NVML_ERROR_IN_USE },
	{ "NVML_ERROR_INSUFFICIENT_RESOURCES", NVML_ERROR_INSUFFICIENT_RESOURCES },
	{ "NVML_ERROR_UNKNOWN", NVML_ERROR_UNKNOWN },
};

/*
 * Fault nvml-fail: lines "FUNCTION RETURN_CODE" (a number or an NVML_*
 * name); FUNCTION then returns that code, every time, before doing anything
 * (after logging).  Sets *r and returns true when @fn is listed.
 */
static bool fault(const char *fn, nvmlReturn_t *r)
{
	char p[PATH_MAX], line[256];
	FILE *f;
	bool hit = false;

	if (!st[0] || spath(p, sizeof(p), "nvml-fail") < 0 || !(f = fopen(p, "re")))
		return false;
	while (!hit && fgets(line, sizeof(line), f)) {
		char name[128], code[64], *end;
		long v;

		if (sscanf(line, "%127s %63s", name, code) != 2 || strcmp(name, fn) != 0)
			continue;
		v = strtol(code, &end, 0);
		if (end != code && !*end) {
			*r = (nvmlReturn_t)v;
			hit = true;
		}
		for (size_t i = 0; !hit && i < ARRAY_SIZE(code_names); i++) {
			if (strcmp(code, code_names[i].name) == 0) {
				*r = code_names[i].code;
				hit = true;
			}
		}
	}
	fclose(f);
	return hit;
}

/* the common prologue: initialised, and no fault for @fn */
#define ENTER(fn)                                                                                  \
	do {                                                                                       \
		nvmlReturn_t fault_r_;                                                             \
		if (!init_count)                                                                   \
			return NVML_ERROR_UNINITIALIZED;                                           \
		if (fault(fn, &fault_r_))                                                          \
			return fault_r_;                                                           \
	} while (0)

/* ---- the host ------------------------------------------------------------- */

/* a value of proc/driver/nvidia/gpus/<BDF>/information (fnv_info) */
static int gpu_info(const char *bdf, const char *key, char *buf, size_t n)
{
	char p[PATH_MAX], line[512];
	FILE *f;
	int r = -1;

	if (rpath(p, sizeof(p), "proc/driver/nvidia/gpus/%s/information", bdf) < 0 ||
	    !(f = fopen(p, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = '\0';
		if (strcmp(line, key) == 0) {
			snprintf(buf, n, "%s", trim(colon + 1));
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

/* fnv_is_gpu: an NVIDIA display controller (class 0300xx/0302xx) that is not a VF */
static bool is_gpu(const char *bdf)
{
	char p[PATH_MAX], v[64];
	struct stat sb;

	if (rpath(p, sizeof(p), "sys/bus/pci/devices/%s", bdf) < 0 || !is_dir(p))
		return false;
	if (rpath(p, sizeof(p), "sys/bus/pci/devices/%s/physfn", bdf) < 0 || lstat(p, &sb) == 0)
		return false;
	if (rpath(p, sizeof(p), "sys/bus/pci/devices/%s/vendor", bdf) < 0 ||
	    read_line(p, v, sizeof(v)) < 0 || strcmp(v, "0x10de") != 0)
		return false;
	if (rpath(p, sizeof(p), "sys/bus/pci/devices/%s/class", bdf) < 0 ||
	    read_line(p, v, sizeof(v)) < 0)
		return false;
	return strlen(v) == 8 && (strncmp(v, "0x0300", 6) == 0 || strncmp(v, "0x0302", 6) == 0);
}

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);

	while (*list) {
		size_t l = strcspn(list, " ");

		if (l == n && strncmp(list, w, n) == 0)
			return true;
		list += l;
		list += *list == ' ';
	}
	return false;
}

static bool matches(const char *patterns, const char *s)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", patterns);
	for (char *save = NULL, *p = strtok_r(buf, "|", &save); p; p = strtok_r(NULL, "|", &save))
		if (fnmatch(p, s, 0) == 0)
			return true;
	return false;
}

/* fnv_family: the model from `information`, else the PCI device ID */
static const struct family *gpu_family(const char *bdf)
{
	char model[256] = "", up[256], p[PATH_MAX], dev[32];
	size_t i;

	if (gpu_info(bdf, "Model", model, sizeof(model)) < 0 || !model[0]) {
		if (rpath(p, sizeof(p), "sys/bus/pci/devices/%s/device", bdf) < 0 ||
		    read_line(p, dev, sizeof(dev)) < 0 || !dev[0])
			return NULL;
		for (i = 0; i < ARRAY_SIZE(families); i++)
			if (has_word(families[i].devices, dev))
				return &families[i];
		return NULL;
	}
	for (i = 0; model[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)toupper((unsigned char)model[i]);
	up[i] = '\0';
	for (i = 0; i < ARRAY_SIZE(families); i++)
		if (families[i].patterns && matches(families[i].patterns, up))
			return &families[i];
	return NULL;
}

static bool has_mig(const struct nvmlDevice_st *d)
{
	return d->fam && d->fam->nprof;
}

static int capdir(const struct nvmlDevice_st *d, char *buf, size_t n)
{
	return rpath(buf, n, "proc/driver/nvidia/capabilities/gpu%u/mig", d->minor);
}

/* fnv_mig_get: current and pending, 1 = Enabled */
static void mig_get(const struct nvmlDevice_st *d, unsigned int *cur, unsigned int *pend)
{
	char p[PATH_MAX], v[64], a[32], b[32];

	if (spath(p, sizeof(p), "mig-%s", d->bdf) == 0 && read_line(p, v, sizeof(v)) == 0 &&
	    sscanf(v, "%31s %31s", a, b) == 2) {
		*cur = strcmp(a, "Enabled") == 0;
		*pend = strcmp(b, "Enabled") == 0;
		return;
	}
	*cur = *pend = capdir(d, p, sizeof(p)) == 0 && is_dir(p);
}

/*
 * gis-<BDF> into @s.  Missing: refused (NVML_ERROR_UNKNOWN) when the
 * capability tree has GIs the fakes did not make (fnv_check_state), else
 * created empty.  Called with the lock held.
 */
static nvmlReturn_t gis_load(const struct nvmlDevice_st *d, struct gi_state *s)
{
	char p[PATH_MAX], line[256];
	FILE *f;

	s->n = 0;
	if (spath(p, sizeof(p), "gis-%s", d->bdf) < 0)
		return NVML_ERROR_UNKNOWN;
	f = fopen(p, "re");
	if (!f) {
		char cd[PATH_MAX];
		DIR *dir;
		struct dirent *e;
		bool foreign = false;

		if (capdir(d, cd, sizeof(cd)) < 0)
			return NVML_ERROR_UNKNOWN;
		if ((dir = opendir(cd))) {
			while ((e = readdir(dir)))
				if (strncmp(e->d_name, "gi", 2) == 0 &&
				    isdigit((unsigned char)e->d_name[2]))
					foreign = true;
			closedir(dir);
		}
		if (foreign) {
			fprintf(stderr,
				"nvml-standin: %s has GPU instances the fake did not create (profiles unknown); run fake-nv-boot on the tree first\n",
				cd);
			return NVML_ERROR_UNKNOWN;
		}
		return write_file(p, "") < 0 ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
	}
	while (fgets(line, sizeof(line), f)) {
		struct gi_row *g = &s->r[s->n];

		if (!trim(line)[0])
			continue;
		if (s->n == MAX_GIS || sscanf(line, "%u %u %31s %u %u %u", &g->id, &g->pid, g->name,
					      &g->start, &g->size, &g->ci) != 6) {
			fclose(f);
			return NVML_ERROR_UNKNOWN;
		}
		s->n++;
	}
	fclose(f);
	return NVML_SUCCESS;
}

/* save_gis of fake-nvidia-smi: write .new, rename */
static nvmlReturn_t gis_save(const struct nvmlDevice_st *d, const struct gi_state *s)
{
	char p[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	int bad = 0;

	if (spath(p, sizeof(p), "gis-%s", d->bdf) < 0 ||
	    spath(tmp, sizeof(tmp), "gis-%s.new", d->bdf) < 0 || !(f = fopen(tmp, "we")))
		return NVML_ERROR_UNKNOWN;
	for (size_t i = 0; i < s->n; i++) {
		const struct gi_row *g = &s->r[i];

		if (fprintf(f, "%u %u %s %u %u %u\n", g->id, g->pid, g->name, g->start, g->size,
			    g->ci) < 0)
			bad = 1;
	}
	if (fclose(f) != 0 || bad || rename(tmp, p) < 0)
		return NVML_ERROR_UNKNOWN;
	return NVML_SUCCESS;
}

static const struct profile *profile_by_id(const struct nvmlDevice_st *d, unsigned int id)
{
	if (!has_mig(d))
		return NULL;
	for (size_t i = 0; i < d->fam->nprof; i++)
		if (d->fam->prof[i].id == id)
			return &d->fam->prof[i];
	return NULL;
}

/* capability files as mig-minors numbers them (fnv_gi_minor, fnv_cap_access) */
static int cap_access(const struct nvmlDevice_st *d, unsigned int gi, bool ci)
{
	char cd[PATH_MAX], dir[PATH_MAX + 16], p[PATH_MAX + 32], text[128];
	unsigned int minor = 3 + 135 * d->minor + 9 * gi + (ci ? 1 : 0);

	if (capdir(d, cd, sizeof(cd)) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/gi%u%s", cd, gi, ci ? "/ci0" : "");
	if (mkdir_p(dir) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/access", dir);
	snprintf(text, sizeof(text),
		 "DeviceFileMinor: %u\nDeviceFileMode: 292\nDeviceFileModify: 1\n", minor);
	return write_file(p, text);
}

/* a live VF of a PF: virtfn<N> -> address, its vGPU (current_vgpu_type) and GI */
struct vf {
	unsigned int n;
	char bdf[NAME_MAX + 1];
	char cur[64]; /* "0": no vGPU */
	char gi[32]; /* "" when gpu_instance_id is missing */
};

static int vf_cmp(const void *a, const void *b)
{
	const struct vf *x = a, *y = b;

	return x->n < y->n ? -1 : x->n > y->n;
}

/* fnv_load_vfs */
static size_t vfs_load(const struct nvmlDevice_st *d, struct vf *vfs, size_t max)
{
	char p[PATH_MAX], link[PATH_MAX], q[PATH_MAX];
	DIR *dir;
	struct dirent *e;
	size_t n = 0;

	if (rpath(p, sizeof(p), "sys/bus/pci/devices/%s", d->bdf) < 0 || !(dir = opendir(p)))
		return 0;
	while ((e = readdir(dir)) && n < max) {
		char *end, *base;
		unsigned long num;
		ssize_t l;
		struct vf *v = &vfs[n];

		if (strncmp(e->d_name, "virtfn", 6) != 0 || !isdigit((unsigned char)e->d_name[6]))
			continue;
		num = strtoul(e->d_name + 6, &end, 10);
		if (*end || snprintf(q, sizeof(q), "%s/%s", p, e->d_name) >= (int)sizeof(q))
			continue;
		l = readlink(q, link, sizeof(link) - 1);
		if (l < 0)
			continue;
		link[l] = '\0';
		base = strrchr(link, '/');
		base = base ? base + 1 : link;
		if (strlen(base) >= sizeof(v->bdf))
			continue;
		v->n = (unsigned int)num;
		memcpy(v->bdf, base, strlen(base) + 1);
		if (rpath(q, sizeof(q), "sys/bus/pci/devices/%s/nvidia/current_vgpu_type", v->bdf) <
			    0 ||
		    read_line(q, v->cur, sizeof(v->cur)) < 0)
			snprintf(v->cur, sizeof(v->cur), "0");
		v->gi[0] = '\0';
		if (strcmp(v->cur, "0") != 0 &&
		    rpath(q, sizeof(q), "sys/bus/pci/devices/%s/nvidia/gpu_instance_id", v->bdf) ==
			    0)
			read_line(q, v->gi, sizeof(v->gi));
		n++;
	}
	closedir(dir);
	qsort(vfs, n, sizeof(*vfs), vf_cmp);
	return n;
}

/* the vGPUs on GI @gi: how many, and the type of the last (numeric order) */
static unsigned int gi_users(const struct vf *vfs, size_t n, unsigned int gi, const char **type)
{
	char id[32];
	unsigned int count = 0;

	snprintf(id, sizeof(id), "%u", gi);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(vfs[i].cur, "0") != 0 && strcmp(vfs[i].gi, id) == 0) {
			count++;
			if (type)
				*type = vfs[i].cur;
		}
	}
	return count;
}

static const struct vtype *vtype_find(unsigned int id, const struct family **fam)
{
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		for (size_t i = 0; i < families[f].ntypes; i++) {
			if (families[f].types[i].id == id) {
				if (fam)
					*fam = &families[f];
				return &families[f].types[i];
			}
		}
	}
	return NULL;
}

/*
 * fnv_refresh_creatable: every live VF's nvidia/creatable_vgpu_types as the
 * driver would write it.  A VF holding a vGPU lists nothing; otherwise, with
 * MIG on, each MIG-backed type that has a GI of its profile where it fits (no
 * vGPU, or vGPUs of the same framebuffer size fewer than its per-GI maximum).
 * Families without a type table keep what the fixture wrote.  Lock held.
 */
static void refresh_creatable(const struct nvmlDevice_st *d)
{
	struct vf vfs[MAX_VFS];
	struct gi_state s;
	const struct vtype *list[64];
	size_t nvf, nl = 0;
	unsigned int cur, pend;
	char text[8192];
	size_t off;

	if (!d->fam || !d->fam->ntypes)
		return;
	mig_get(d, &cur, &pend);
	if (!cur || gis_load(d, &s) != NVML_SUCCESS)
		s.n = 0;
	nvf = vfs_load(d, vfs, MAX_VFS);
	for (size_t t = 0; t < d->fam->ntypes; t++) {
		const struct vtype *vt = &d->fam->types[t];

		if (vt->gi < 0)
			continue;
		for (size_t i = 0; i < s.n; i++) {
			const char *utype = NULL;
			const struct vtype *ut;
			unsigned int users;

			if (s.r[i].pid != (unsigned int)vt->gi)
				continue;
			users = gi_users(vfs, nvf, s.r[i].id, &utype);
			ut = utype ? vtype_find((unsigned int)strtoul(utype, NULL, 10), NULL) :
				     NULL;
			if (users == 0 || (ut && ut->fb_mib == vt->fb_mib && users < vt->per_gi)) {
				list[nl++] = vt;
				break;
			}
		}
	}
	off = (size_t)snprintf(text, sizeof(text), "ID    : vGPU Name\n");
	for (size_t i = 0; i < nl && off < sizeof(text); i++) {
		char id[16];

		snprintf(id, sizeof(id), "%u", list[i]->id);
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%-6s: NVIDIA %s%s\n", id,
					d->fam->prefix, list[i]->name);
	}
	for (size_t i = 0; i < nvf; i++) {
		char p[PATH_MAX], f[PATH_MAX + 32];

		if (rpath(p, sizeof(p), "sys/bus/pci/devices/%s/nvidia", vfs[i].bdf) < 0 ||
		    !is_dir(p))
			continue;
		snprintf(f, sizeof(f), "%s/creatable_vgpu_types", p);
		write_file(f, strcmp(vfs[i].cur, "0") != 0 || nl == 0 ? "" : text);
	}
}

/* ---- handles ------------------------------------------------------------ */

static bool dev_valid(const struct nvmlDevice_st *d)
{
	for (const struct nvmlDevice_st *x = devices; x; x = x->next)
		if (x == d)
			return true;
	return false;
}

static struct nvmlGpuInstance_st *gi_handle(struct nvmlDevice_st *d, const struct gi_row *g)
{
	struct nvmlGpuInstance_st *h;

	for (h = gi_handles; h; h = h->next)
		if (h->dev == d && h->id == g->id && h->pid == g->pid && h->start == g->start)
			return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->dev = d;
	h->id = g->id;
	h->pid = g->pid;
	h->start = g->start;
	h->size = g->size;
	h->ci.gi = h;
	h->next = gi_handles;
	gi_handles = h;
	return h;
}

static bool gi_valid(const struct nvmlGpuInstance_st *gi)
{
	for (const struct nvmlGpuInstance_st *x = gi_handles; x; x = x->next)
		if (x == gi)
			return true;
	return false;
}

/* the row of a GI handle in @s (lock held); NULL when the GI is gone */
static struct gi_row *gi_row_of(const struct nvmlGpuInstance_st *gi, struct gi_state *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].id == gi->id && s->r[i].pid == gi->pid && s->r[i].start == gi->start)
			return &s->r[i];
	return NULL;
}

/* ---- init --------------------------------------------------------------- */

nvmlReturn_t nvmlInit_v2(void)
{
	const char *env = getenv("FAKE_NV_ROOT");
	char p[PATH_MAX], real[PATH_MAX];
	nvmlReturn_t r;

	if (init_count) {
		init_count++;
		log_call(false, "nvmlInit_v2");
		return NVML_SUCCESS;
	}
	if (!env || !*env || !realpath(env, real))
		return NVML_ERROR_DRIVER_NOT_LOADED;
	snprintf(root, sizeof(root), "%s", real);
	if (rpath(p, sizeof(p), "sys/bus/pci/devices") < 0 || !is_dir(p) ||
	    rpath(st, sizeof(st), "var/lib/fake-nvidia") < 0 || mkdir_p(st) < 0) {
		root[0] = st[0] = '\0';
		return NVML_ERROR_DRIVER_NOT_LOADED;
	}
	log_call(false, "nvmlInit_v2");
	if (fault("nvmlInit_v2", &r)) {
		root[0] = st[0] = '\0';
		return r;
	}
	init_count = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	ENTER("nvmlShutdown");
	if (--init_count)
		return NVML_SUCCESS;
	while (gi_handles) {
		struct nvmlGpuInstance_st *n = gi_handles->next;

		free(gi_handles);
		gi_handles = n;
	}
	while (devices) {
		struct nvmlDevice_st *n = devices->next;

		free(devices);
		devices = n;
	}
	root[0] = st[0] = '\0';
	return NVML_SUCCESS;
}

/* nvml's own strings (libnvidia-ml nvmlErrorString) */
const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case 0:
		return "Success";
	case 1:
		return "Uninitialized";
	case 2:
		return "Invalid Argument";
	case 3:
		return "Not Supported";
	case 4:
		return "Insufficient Permissions";
	case 5:
		return "Already Initialized";
	case 6:
		return "Not Found";
	case 7:
		return "Insufficient Size";
	case 8:
		return "Insufficient External Power";
	case 9:
		return "Driver Not Loaded";
	case 10:
		return "Timeout";
	case 11:
		return "Interrupt request issue";
	case 12:
		return "NVML Shared Library Not Found";
	case 13:
		return "Function Not Found";
	case 14:
		return "Corrupted infoROM";
	case 15:
		return "GPU is lost";
	case 16:
		return "GPU requires restart";
	case 17:
		return "The operating system has blocked the request.";
	case 18:
		return "RM has detected an NVML/RM version mismatch.";
	case 19:
		return "In use by another client";
	case 20:
		return "Insufficient Memory";
	case 21:
		return "No data";
	case 22:
		return "The requested vgpu operation is not available on target device, becasue ECC is enabled";
	case 23:
		return "Insufficient Resources";
	case 24:
		return "Setting frequency not supported";
	case 25:
		return "Argument version mismatch";
	case 26:
		return "Deprecated";
	case 27:
		return "Not Ready";
	case 28:
		return "GPU not found";
	case 29:
		return "Invalid state";
	default:
		return "Unknown Error";
	}
}

/* ---- devices ------------------------------------------------------------ */

/* "0000:ca:00.0" / "00000000:CA:00.0", any case -> 0000:ca:00.0 (fnv_norm_bus) */
static bool norm_bus(const char *in, char *out, size_t n)
{
	char b[32];
	size_t l = strlen(in), dl;
	const char *dom;

	if (l >= sizeof(b))
		return false;
	for (size_t i = 0; i <= l; i++)
		b[i] = (char)tolower((unsigned char)in[i]);
	dl = strcspn(b, ":");
	if ((dl != 4 && dl != 8) || (dl == 8 && strncmp(b, "0000", 4) != 0) || l != dl + 8)
		return false;
	for (size_t i = 0; i < l; i++) {
		bool sep = i == dl || i == dl + 3 || i == dl + 6;
		char c = b[i];

		if (sep ? c != (i == dl + 6 ? '.' : ':') : !isxdigit((unsigned char)c))
			return false;
	}
	if (b[l - 1] > '7')
		return false;
	dom = b + dl - 4;
	snprintf(out, n, "%s", dom);
	return true;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *dev)
{
	char bdf[16];
	struct nvmlDevice_st *d;
	struct gi_state s;
	nvmlReturn_t r;
	int fd;

	ENTER("nvmlDeviceGetHandleByPciBusId_v2");
	if (!bus || !dev || !norm_bus(bus, bdf, sizeof(bdf)))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!is_gpu(bdf))
		return NVML_ERROR_NOT_FOUND;
	for (d = devices; d; d = d->next)
		if (strcmp(d->bdf, bdf) == 0)
			break;
	if (!d) {
		char minor[32] = "";

		d = calloc(1, sizeof(*d));
		if (!d)
			return NVML_ERROR_UNKNOWN;
		snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
		d->fam = gpu_family(bdf);
		if (gpu_info(bdf, "Device Minor", minor, sizeof(minor)) == 0)
			d->minor = (unsigned int)strtoul(minor, NULL, 10);
		d->next = devices;
		devices = d;
	}
	/* fnv_check_state, as the fake's resolve() does for every command */
	fd = lock_take();
	r = gis_load(d, &s);
	lock_drop(fd);
	if (r != NVML_SUCCESS)
		return r;
	*dev = d;
	return NVML_SUCCESS;
}

#define DEV_ENTER(fn, dev)                                                                         \
	do {                                                                                       \
		ENTER(fn);                                                                         \
		if (!dev_valid(dev))                                                               \
			return NVML_ERROR_INVALID_ARGUMENT;                                        \
	} while (0)

/* the changing entry points check the fault after logging the call */
#define CHANGE_ENTER()                                                                             \
	do {                                                                                       \
		if (!init_count)                                                                   \
			return NVML_ERROR_UNINITIALIZED;                                           \
	} while (0)

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending)
{
	int fd;

	DEV_ENTER("nvmlDeviceGetMigMode", dev);
	if (!current || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!has_mig(dev))
		return NVML_ERROR_NOT_SUPPORTED;
	fd = lock_take();
	mig_get(dev, current, pending);
	lock_drop(fd);
	return NVML_SUCCESS;
}

/* total from the family; nothing is used (vGPU framebuffers are not counted) */
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
	DEV_ENTER("nvmlDeviceGetMemoryInfo", dev);
	if (!mem)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!dev->fam || !dev->fam->mem_mib)
		return NVML_ERROR_NOT_SUPPORTED;
	mem->total = dev->fam->mem_mib << 20;
	mem->free = mem->total;
	mem->used = 0;
	return NVML_SUCCESS;
}

/* ---- GI profiles and placements ----------------------------------------- */

/* -lgip's memory: a little under the name's size (the name's GB x 1024 - 256 MiB) */
static unsigned long long profile_mem_mib(const struct profile *p)
{
	const char *dot = strchr(p->name, '.');

	return dot ? strtoull(dot + 1, NULL, 10) * 1024 - 256 : 0;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t dev, unsigned int profile,
						  nvmlGpuInstanceProfileInfo_v2_t *info)
{
	const struct profile *p = NULL;
	bool me_all;

	DEV_ENTER("nvmlDeviceGetGpuInstanceProfileInfoV", dev);
	if (!info || info->version != nvmlGpuInstanceProfileInfo_v2 ||
	    profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!has_mig(dev))
		return NVML_ERROR_NOT_SUPPORTED;
	for (size_t i = 0; i < dev->fam->nprof; i++)
		if (dev->fam->prof[i].index == profile)
			p = &dev->fam->prof[i];
	if (!p)
		return NVML_ERROR_NOT_SUPPORTED;
	me_all = strstr(p->name, "+me") != NULL;
	memset((char *)info + sizeof(info->version), 0, sizeof(*info) - sizeof(info->version));
	info->id = p->id;
	info->isP2pSupported = 0;
	info->sliceCount = p->csl;
	info->instanceCount = p->max;
	info->multiprocessorCount = p->sm;
	info->copyEngineCount = p->csl;
	info->decoderCount = me_all ? 4 : p->csl / 2;
	info->encoderCount = me_all ? 1 : 0;
	info->jpegCount = me_all ? 1 : p->csl / 2;
	info->ofaCount = me_all ? 1 : 0;
	info->memorySizeMB = profile_mem_mib(p);
	snprintf(info->name, sizeof(info->name), "MIG %s", p->name);
	return NVML_SUCCESS;
}

/*
 * Every legal placement of the profile, free or taken, as real NVML and
 * `nvidia-smi mig -lgipp` report them; MIG mode may be off.
 */
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t dev, unsigned int profileId,
							   nvmlGpuInstancePlacement_t *placements,
							   unsigned int *count)
{
	const struct profile *p;
	unsigned int n = 0, k = 0;

	DEV_ENTER("nvmlDeviceGetGpuInstancePossiblePlacements_v2", dev);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!has_mig(dev))
		return NVML_ERROR_NOT_SUPPORTED;
	p = profile_by_id(dev, profileId);
	if (!p)
		return NVML_ERROR_NOT_SUPPORTED;
	for (unsigned int s = 0; s < 32; s++)
		n += (p->starts >> s) & 1;
	if (!placements) {
		*count = n;
		return NVML_SUCCESS;
	}
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned int s = 0; s < 32; s++) {
		if ((p->starts >> s) & 1) {
			placements[k].start = s;
			placements[k].size = p->msl;
			k++;
		}
	}
	*count = n;
	return NVML_SUCCESS;
}

/* ---- GPU instances ------------------------------------------------------ */

static int row_cmp(const void *a, const void *b)
{
	const struct gi_row *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * As real NVML: *count is only written (the GIs of that profile ID, by GI
 * ID); @gis must have room for the profile's instanceCount.
 */
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t dev, unsigned int profileId,
				       nvmlGpuInstance_t *gis, unsigned int *count)
{
	const struct profile *p;
	struct gi_state s;
	unsigned int cur, pend, n = 0;
	nvmlReturn_t r;
	int fd;

	DEV_ENTER("nvmlDeviceGetGpuInstances", dev);
	if (!gis || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!has_mig(dev))
		return NVML_ERROR_NOT_SUPPORTED;
	p = profile_by_id(dev, profileId);
	if (!p)
		return NVML_ERROR_INVALID_ARGUMENT;
	fd = lock_take();
	mig_get(dev, &cur, &pend);
	r = cur ? gis_load(dev, &s) : NVML_ERROR_NOT_SUPPORTED;
	lock_drop(fd);
	if (r != NVML_SUCCESS)
		return r;
	qsort(s.r, s.n, sizeof(s.r[0]), row_cmp);
	for (size_t i = 0; i < s.n && n < p->max; i++) {
		if (s.r[i].pid != profileId)
			continue;
		gis[n] = gi_handle(dev, &s.r[i]);
		if (!gis[n])
			return NVML_ERROR_UNKNOWN;
		n++;
	}
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info)
{
	struct gi_state s;
	nvmlReturn_t r;
	int fd;

	ENTER("nvmlGpuInstanceGetInfo");
	if (!gi_valid(gi) || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	fd = lock_take();
	r = gis_load(gi->dev, &s);
	lock_drop(fd);
	if (r != NVML_SUCCESS)
		return r;
	if (!gi_row_of(gi, &s))
		return NVML_ERROR_INVALID_ARGUMENT;
	info->device = gi->dev;
	info->id = gi->id;
	info->profileId = gi->pid;
	info->placement.start = gi->start;
	info->placement.size = gi->size;
	return NVML_SUCCESS;
}

/*
 * Create a GI of profile ID @pid at @start, or (@start NULL) at the lowest
 * legal start whose memory slices are free (the fake's -cgi rule).  As the
 * fake: MIG off NOT_SUPPORTED; the per-profile maximum reached, compute slices
 * exhausted, memory slices taken or an illegal start INSUFFICIENT_RESOURCES;
 * GI ID the smallest unused from 1.
 */
static nvmlReturn_t gi_create(struct nvmlDevice_st *dev, unsigned int pid,
			      const unsigned int *start, nvmlGpuInstance_t *out)
{
	const struct profile *p;
	struct gi_state s;
	struct gi_row *g;
	unsigned int cur, pend, used_c = 0, count = 0, taken = 0, at = 0, id;
	bool found = false;
	nvmlReturn_t r;
	int fd;

	if (!has_mig(dev))
		return NVML_ERROR_NOT_SUPPORTED;
	fd = lock_take();
	mig_get(dev, &cur, &pend);
	if (!cur) {
		r = NVML_ERROR_NOT_SUPPORTED;
		goto out;
	}
	p = profile_by_id(dev, pid);
	if (!p) {
		r = NVML_ERROR_INVALID_ARGUMENT;
		goto out;
	}
	r = gis_load(dev, &s);
	if (r != NVML_SUCCESS)
		goto out;
	for (size_t i = 0; i < s.n; i++) {
		const struct profile *q = profile_by_id(dev, s.r[i].pid);

		used_c += q ? q->csl : 0;
		count += s.r[i].pid == pid;
		for (unsigned int k = s.r[i].start; k < s.r[i].start + s.r[i].size && k < 32; k++)
			taken |= 1u << k;
	}
	r = NVML_ERROR_INSUFFICIENT_RESOURCES;
	if (count >= p->max || used_c + p->csl > dev->fam->compute_slices || s.n == MAX_GIS)
		goto out;
	for (unsigned int k = 0; k < 32 && !found; k++) {
		unsigned int mask = ((1u << p->msl) - 1) << k;

		if (!((p->starts >> k) & 1) || (start && *start != k) || (taken & mask))
			continue;
		at = k;
		found = true;
	}
	if (!found)
		goto out;
	for (id = 1;; id++) {
		bool used = false;

		for (size_t i = 0; i < s.n; i++)
			used |= s.r[i].id == id;
		if (!used)
			break;
	}
	g = &s.r[s.n++];
	memset(g, 0, sizeof(*g));
	g->id = id;
	g->pid = pid;
	g->start = at;
	g->size = p->msl;
	snprintf(g->name, sizeof(g->name), "%s", p->name);
	r = gis_save(dev, &s);
	if (r != NVML_SUCCESS)
		goto out;
	if (cap_access(dev, id, false) < 0)
		r = NVML_ERROR_UNKNOWN;
	refresh_creatable(dev);
	if (r == NVML_SUCCESS) {
		*out = gi_handle(dev, g);
		if (!*out)
			r = NVML_ERROR_UNKNOWN;
	}
out:
	lock_drop(fd);
	return r;
}

#ifndef STANDIN_OLD
nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t dev, unsigned int profileId,
						      const nvmlGpuInstancePlacement_t *placement,
						      nvmlGpuInstance_t *gi)
{
	const struct profile *p;
	nvmlReturn_t r;

	CHANGE_ENTER();
	if (!dev_valid(dev))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!placement || !gi)
		return NVML_ERROR_INVALID_ARGUMENT;
	log_call(true, "nvmlDeviceCreateGpuInstanceWithPlacement %s %u %u", dev->bdf, profileId,
		 placement->start);
	if (fault("nvmlDeviceCreateGpuInstanceWithPlacement", &r))
		return finish(r);
	/* a placement's size is the profile's: anything else is not a placement of it */
	p = profile_by_id(dev, profileId);
	if (p && placement->size != p->msl)
		return finish(NVML_ERROR_INVALID_ARGUMENT);
	return finish(gi_create(dev, profileId, &placement->start, gi));
}
#endif

nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t dev, unsigned int profileId,
					 nvmlGpuInstance_t *gi)
{
	nvmlReturn_t r;

	CHANGE_ENTER();
	if (!dev_valid(dev))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!gi)
		return NVML_ERROR_INVALID_ARGUMENT;
	log_call(true, "nvmlDeviceCreateGpuInstance %s %u", dev->bdf, profileId);
	if (fault("nvmlDeviceCreateGpuInstance", &r))
		return finish(r);
	return finish(gi_create(dev, profileId, NULL, gi));
}

/* the GI of a handle with the lock held: s filled, *row set; INVALID_ARGUMENT when gone */
static nvmlReturn_t gi_locked(const struct nvmlGpuInstance_st *gi, struct gi_state *s,
			      struct gi_row **row)
{
	nvmlReturn_t r = gis_load(gi->dev, s);

	if (r != NVML_SUCCESS)
		return r;
	*row = gi_row_of(gi, s);
	return *row ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

/* the full CI's profile index (and ID) for a GI's compute slices (fake's ci_profile_id) */
static unsigned int full_ci_profile(unsigned int csl)
{
	switch (csl) {
	case 2:
		return NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE;
	case 3:
		return NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE;
	case 4:
		return NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE;
	case 7:
		return NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE;
	default:
		return NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE;
	}
}

/*
 * Only the full CI (the one `-C` and `-cci` without a profile make) is
 * modelled: other CI profiles are NOT_SUPPORTED.
 */
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gi,
							  unsigned int profile,
							  unsigned int engProfile,
							  nvmlComputeInstanceProfileInfo_t *info)
{
	const struct profile *p;
	struct gi_state s;
	struct gi_row *row;
	nvmlReturn_t r;
	int fd;

	ENTER("nvmlGpuInstanceGetComputeInstanceProfileInfo");
	if (!gi_valid(gi) || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	fd = lock_take();
	r = gi_locked(gi, &s, &row);
	lock_drop(fd);
	if (r != NVML_SUCCESS)
		return r;
	p = profile_by_id(gi->dev, gi->pid);
	if (!p || profile != full_ci_profile(p->csl) ||
	    engProfile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof(*info));
	info->id = profile;
	info->sliceCount = p->csl;
	info->instanceCount = 1;
	info->multiprocessorCount = p->sm;
	info->sharedCopyEngineCount = p->csl;
	info->sharedDecoderCount = p->csl / 2;
	info->sharedJpegCount = p->csl / 2;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gi, unsigned int profileId,
						  nvmlComputeInstance_t *ci)
{
	const struct profile *p;
	struct gi_state s;
	struct gi_row *row;
	nvmlReturn_t r;
	int fd;

	CHANGE_ENTER();
	if (!gi_valid(gi) || !ci)
		return NVML_ERROR_INVALID_ARGUMENT;
	log_call(true, "nvmlGpuInstanceCreateComputeInstance %s %u %u", gi->dev->bdf, gi->id,
		 profileId);
	if (fault("nvmlGpuInstanceCreateComputeInstance", &r))
		return finish(r);
	fd = lock_take();
	r = gi_locked(gi, &s, &row);
	if (r != NVML_SUCCESS)
		goto out;
	p = profile_by_id(gi->dev, gi->pid);
	r = NVML_ERROR_NOT_SUPPORTED;
	if (!p || profileId != full_ci_profile(p->csl))
		goto out;
	r = NVML_ERROR_INSUFFICIENT_RESOURCES; /* the full CI is there: no room for another */
	if (row->ci)
		goto out;
	row->ci = 1;
	r = gis_save(gi->dev, &s);
	if (r == NVML_SUCCESS && cap_access(gi->dev, gi->id, true) < 0)
		r = NVML_ERROR_UNKNOWN;
	if (r == NVML_SUCCESS)
		*ci = &gi->ci;
out:
	lock_drop(fd);
	return finish(r);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gi, unsigned int profileId,
						nvmlComputeInstance_t *cis, unsigned int *count)
{
	const struct profile *p;
	struct gi_state s;
	struct gi_row *row;
	nvmlReturn_t r;
	int fd;

	ENTER("nvmlGpuInstanceGetComputeInstances");
	if (!gi_valid(gi) || !cis || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	fd = lock_take();
	r = gi_locked(gi, &s, &row);
	lock_drop(fd);
	if (r != NVML_SUCCESS)
		return r;
	p = profile_by_id(gi->dev, gi->pid);
	*count = 0;
	if (p && profileId == full_ci_profile(p->csl) && row->ci) {
		cis[0] = &gi->ci;
		*count = 1;
	}
	return NVML_SUCCESS;
}

/* IN_USE while a vGPU sits on the GI (as the fake's -dci) */
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci)
{
	struct nvmlGpuInstance_st *gi;
	struct vf vfs[MAX_VFS];
	struct gi_state s;
	struct gi_row *row;
	char cd[PATH_MAX], p[PATH_MAX + 32];
	nvmlReturn_t r;
	int fd;

	CHANGE_ENTER();
	gi = ci ? ci->gi : NULL;
	if (!gi || !gi_valid(gi) || ci != &gi->ci)
		return NVML_ERROR_INVALID_ARGUMENT;
	log_call(true, "nvmlComputeInstanceDestroy %s %u 0", gi->dev->bdf, gi->id);
	if (fault("nvmlComputeInstanceDestroy", &r))
		return finish(r);
	fd = lock_take();
	r = gi_locked(gi, &s, &row);
	if (r != NVML_SUCCESS)
		goto out;
	r = NVML_ERROR_INVALID_ARGUMENT;
	if (!row->ci)
		goto out;
	r = NVML_ERROR_IN_USE;
	if (gi_users(vfs, vfs_load(gi->dev, vfs, MAX_VFS), gi->id, NULL))
		goto out;
	row->ci = 0;
	r = gis_save(gi->dev, &s);
	if (r == NVML_SUCCESS && capdir(gi->dev, cd, sizeof(cd)) == 0) {
		snprintf(p, sizeof(p), "%s/gi%u/ci0", cd, gi->id);
		if (rm_rf(p) < 0)
			r = NVML_ERROR_UNKNOWN;
	}
out:
	lock_drop(fd);
	return finish(r);
}

/*
 * As real NVML and the fake's -dgi: IN_USE while the GI has a CI or a vGPU
 * sits on it (a VF with current_vgpu_type != 0 and gpu_instance_id == GI).
 */
nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gi)
{
	struct vf vfs[MAX_VFS];
	struct gi_state s;
	struct gi_row *row;
	char cd[PATH_MAX], p[PATH_MAX + 16];
	nvmlReturn_t r;
	int fd;

	CHANGE_ENTER();
	if (!gi_valid(gi))
		return NVML_ERROR_INVALID_ARGUMENT;
	log_call(true, "nvmlGpuInstanceDestroy %s %u", gi->dev->bdf, gi->id);
	if (fault("nvmlGpuInstanceDestroy", &r))
		return finish(r);
	fd = lock_take();
	r = gi_locked(gi, &s, &row);
	if (r != NVML_SUCCESS)
		goto out;
	r = NVML_ERROR_IN_USE;
	if (row->ci || gi_users(vfs, vfs_load(gi->dev, vfs, MAX_VFS), gi->id, NULL))
		goto out;
	*row = s.r[--s.n];
	qsort(s.r, s.n, sizeof(s.r[0]), row_cmp);
	r = gis_save(gi->dev, &s);
	if (r == NVML_SUCCESS && capdir(gi->dev, cd, sizeof(cd)) == 0) {
		snprintf(p, sizeof(p), "%s/gi%u", cd, gi->id);
		if (rm_rf(p) < 0)
			r = NVML_ERROR_UNKNOWN;
	}
	refresh_creatable(gi->dev);
out:
	lock_drop(fd);
	return finish(r);
}

/* ---- vGPU types --------------------------------------------------------- */

/*
 * As real NVML: *count in is the room in @ids; too small (or @ids NULL):
 * INSUFFICIENT_SIZE with *count set.  A GPU without a type table here (A30,
 * A100, L40S, ...): NOT_SUPPORTED.
 */
nvmlReturn_t nvmlDeviceGetSupportedVgpus(nvmlDevice_t dev, unsigned int *count,
					 nvmlVgpuTypeId_t *ids)
{
	unsigned int n;

	DEV_ENTER("nvmlDeviceGetSupportedVgpus", dev);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!dev->fam || !dev->fam->ntypes)
		return NVML_ERROR_NOT_SUPPORTED;
	n = (unsigned int)dev->fam->ntypes;
	if (!ids || *count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned int i = 0; i < n; i++)
		ids[i] = dev->fam->types[i].id;
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlVgpuTypeGetName(nvmlVgpuTypeId_t id, char *name, unsigned int *size)
{
	const struct family *f;
	const struct vtype *t;
	char buf[NVML_VGPU_NAME_BUFFER_SIZE];
	size_t l;

	ENTER("nvmlVgpuTypeGetName");
	t = vtype_find(id, &f);
	if (!t || !size)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(buf, sizeof(buf), "NVIDIA %s%s", f->prefix, t->name);
	l = strlen(buf);
	if (!name || *size < l + 1) {
		*size = NVML_VGPU_NAME_BUFFER_SIZE;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memcpy(name, buf, l + 1);
	*size = (unsigned int)l + 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlVgpuTypeGetFramebufferSize(nvmlVgpuTypeId_t id, unsigned long long *bytes)
{
	const struct vtype *t;

	ENTER("nvmlVgpuTypeGetFramebufferSize");
	t = vtype_find(id, NULL);
	if (!t || !bytes)
		return NVML_ERROR_INVALID_ARGUMENT;
	*bytes = (unsigned long long)t->fb_mib << 20;
	return NVML_SUCCESS;
}

/* the equal-size maximum, in either mode (mixed-size: the placements below) */
nvmlReturn_t nvmlVgpuTypeGetMaxInstances(nvmlDevice_t dev, nvmlVgpuTypeId_t id, unsigned int *count)
{
	const struct family *f;
	const struct vtype *t;

	DEV_ENTER("nvmlVgpuTypeGetMaxInstances", dev);
	t = vtype_find(id, &f);
	if (!t || !count || f != dev->fam)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = t->max;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlVgpuTypeGetGpuInstanceProfileId(nvmlVgpuTypeId_t id, unsigned int *profileId)
{
	const struct vtype *t;

	ENTER("nvmlVgpuTypeGetGpuInstanceProfileId");
	t = vtype_find(id, NULL);
	if (!t || !profileId)
		return NVML_ERROR_INVALID_ARGUMENT;
	*profileId = t->gi < 0 ? NVML_INVALID_GPU_INSTANCE_PROFILE_ID : (unsigned int)t->gi;
	return NVML_SUCCESS;
}

#ifndef STANDIN_OLD
/* a time-sliced type: NOT_SUPPORTED (it has no GI) */
nvmlReturn_t nvmlVgpuTypeGetMaxInstancesPerGpuInstance(nvmlVgpuTypeMaxInstance_v1_t *max)
{
	const struct vtype *t;

	ENTER("nvmlVgpuTypeGetMaxInstancesPerGpuInstance");
	if (!max)
		return NVML_ERROR_INVALID_ARGUMENT;
	t = vtype_find(max->vgpuTypeId, NULL);
	if (!t)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (max->version != nvmlVgpuTypeMaxInstance_v1)
		return STANDIN_VERSION_MISMATCH;
	if (t->gi < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	max->maxInstancePerGI = t->per_gi;
	return NVML_SUCCESS;
}

/* hetero-<BDF> reads 1: mixed-size mode (the lock is taken here) */
static bool hetero_on(const struct nvmlDevice_st *dev)
{
	char p[PATH_MAX], v[16];
	bool on;
	int fd = lock_take();

	on = spath(p, sizeof(p), "hetero-%s", dev->bdf) == 0 && read_line(p, v, sizeof(v)) == 0 &&
	     strcmp(v, "1") == 0;
	lock_drop(fd);
	return on;
}

/*
 * Mixed-size mode where the family has a type table, or is a time-sliced-only board with a
 * known framebuffer (L40S: Ada, where vGPU 17.0 brought mixed-size time-sliced vGPUs;
 * vgpu-host.md 5.1 leaves the board list to `Heterogeneous Time-Slice Sizes`)
 */
static bool hetero_supported(const struct family *f)
{
	return f && (f->ntypes || (f->mem_mib && !f->compute_slices));
}

/* hetero-<BDF>: "0" or "1", 0 when missing; GPUs without it: NOT_SUPPORTED */
nvmlReturn_t nvmlDeviceGetVgpuHeterogeneousMode(nvmlDevice_t dev,
						nvmlVgpuHeterogeneousMode_v1_t *mode)
{
	DEV_ENTER("nvmlDeviceGetVgpuHeterogeneousMode", dev);
	if (!mode)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (mode->version != nvmlVgpuHeterogeneousMode_v1)
		return STANDIN_VERSION_MISMATCH;
	if (!hetero_supported(dev->fam))
		return NVML_ERROR_NOT_SUPPORTED;
	mode->mode = hetero_on(dev);
	return NVML_SUCCESS;
}

/*
 * A time-sliced type's placements in the mode asked for (version 2): as many
 * as the mode's maximum (mixed_max in mixed-size mode), each placementSize
 * slots wide on a GPU of as many slots as the smallest type's mixed-size
 * maximum (shaped on `nvidia-smi vgpu -s -v`'s Placement Size and IDs, not
 * copied from a driver).  *count in is the room; too small: INSUFFICIENT_SIZE
 * with *count set.  MIG-backed: NOT_SUPPORTED.
 */
nvmlReturn_t nvmlDeviceGetVgpuTypeSupportedPlacements(nvmlDevice_t dev, nvmlVgpuTypeId_t id,
						      nvmlVgpuPlacementList_v2_t *list)
{
	const struct family *f;
	const struct vtype *t;
	unsigned int n, slots = 0, size;

	DEV_ENTER("nvmlDeviceGetVgpuTypeSupportedPlacements", dev);
	t = vtype_find(id, &f);
	if (!t || !list || f != dev->fam)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (list->version != nvmlVgpuPlacementList_v2)
		return STANDIN_VERSION_MISMATCH;
	if (t->gi >= 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (list->mode > NVML_VGPU_PGPU_HOMOGENEOUS_MODE)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = list->mode == NVML_VGPU_PGPU_HETEROGENEOUS_MODE && t->mixed_max ? t->mixed_max : t->max;
	for (size_t i = 0; i < f->ntypes; i++) {
		unsigned int m = f->types[i].mixed_max ? f->types[i].mixed_max : f->types[i].max;

		if (f->types[i].gi < 0 && m > slots)
			slots = m;
	}
	size = list->mode == NVML_VGPU_PGPU_HOMOGENEOUS_MODE || n >= slots ? 1 : slots / n;
	if (!list->placementIds || list->count < n) {
		list->count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned int i = 0; i < n; i++)
		list->placementIds[i] = i * size;
	list->count = n;
	list->placementSize = size;
	return NVML_SUCCESS;
}

/* NOT_SUPPORTED with MIG mode (current) on, IN_USE while any VF holds a vGPU */
nvmlReturn_t nvmlDeviceSetVgpuHeterogeneousMode(nvmlDevice_t dev,
						const nvmlVgpuHeterogeneousMode_v1_t *mode)
{
	struct vf vfs[MAX_VFS];
	unsigned int cur, pend;
	size_t n;
	char p[PATH_MAX];
	nvmlReturn_t r;
	int fd;

	CHANGE_ENTER();
	if (!dev_valid(dev))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!mode)
		return NVML_ERROR_INVALID_ARGUMENT;
	log_call(true, "nvmlDeviceSetVgpuHeterogeneousMode %s %u", dev->bdf, mode->mode);
	if (fault("nvmlDeviceSetVgpuHeterogeneousMode", &r))
		return finish(r);
	if (mode->version != nvmlVgpuHeterogeneousMode_v1)
		return finish(STANDIN_VERSION_MISMATCH);
	if (mode->mode > 1)
		return finish(NVML_ERROR_INVALID_ARGUMENT);
	if (!hetero_supported(dev->fam))
		return finish(NVML_ERROR_NOT_SUPPORTED);
	fd = lock_take();
	mig_get(dev, &cur, &pend);
	r = NVML_ERROR_NOT_SUPPORTED;
	if (has_mig(dev) && cur)
		goto out;
	r = NVML_ERROR_IN_USE;
	n = vfs_load(dev, vfs, MAX_VFS);
	for (size_t i = 0; i < n; i++)
		if (strcmp(vfs[i].cur, "0") != 0)
			goto out;
	r = NVML_ERROR_UNKNOWN;
	if (spath(p, sizeof(p), "hetero-%s", dev->bdf) == 0 &&
	    write_file(p, mode->mode ? "1\n" : "0\n") == 0)
		r = NVML_SUCCESS;
out:
	lock_drop(fd);
	return finish(r);
}
#endif

/* ---- live migration (#28): ECC, vGPU instances, metadata, compatibility ---- */

/*
 * Settings (all under st/, read under the lock, every call):
 *   ecc-<BDF>        "0"/"1": the current (and pending) ECC mode; missing: 1
 *   nvlinks-<BDF>    the active NVLinks (0-18); missing: 0, every link NOT_SUPPORTED
 *   vgpus-<BDF>      the GPU's active vGPU instances, "INSTANCE VM_UUID TYPE_ID" a line
 *   vgpu-<INSTANCE>  "KEY VALUE" lines: migration 0|1 (vgpuVirtualizationCaps, default 1),
 *                    runtime-state BYTES (default 16 MiB), guest-driver VERSION
 *                    (default 550.54.15)
 *   pgpu-<BDF>       "KEY VALUE" lines: migration 0|1 (pgpuVirtualizationCaps, default 1),
 *                    compat BITS (nvmlGetVgpuCompatibility's answer with this GPU as the
 *                    pGPU: a number or names joined by ',': none cold hibernate sleep live),
 *                    limit CODE (a number or none host-driver guest-driver gpu other)
 */

#define STANDIN_VGPU_META_MAGIC "nvml-standin vgpu "
#define STANDIN_PGPU_META_MAGIC "nvml-standin pgpu "
#define STANDIN_OPAQUE 64

/* the value of KEY in st/FILE ("KEY VALUE" lines); false when not there */
static bool setting(const char *file, const char *key, char *buf, size_t n)
{
	char p[PATH_MAX], line[256];
	bool found = false;
	FILE *f;
	int fd;

	if (spath(p, sizeof(p), "%s", file) < 0)
		return false;
	fd = lock_take();
	f = fopen(p, "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *t = trim(line);
		size_t l = strcspn(t, " \t");

		if (l == strlen(key) && strncmp(t, key, l) == 0) {
			snprintf(buf, n, "%s", trim(t + l));
			found = true;
		}
	}
	if (f)
		fclose(f);
	lock_drop(fd);
	return found;
}

static bool setting_on(const char *file, const char *key, bool def)
{
	char v[32];

	return setting(file, key, v, sizeof(v)) ? strcmp(v, "0") != 0 : def;
}

/* "live,cold" or "9" -> 9; names of nvmlVgpuVmCompatibility_t / LimitCode_t bits */
static unsigned int bits_of(const char *v, const char *const *names, const unsigned int *bits,
			    size_t n)
{
	char buf[128], *save = NULL, *end;
	unsigned long x = strtoul(v, &end, 0);
	unsigned int r = 0;

	if (end != v && !*end)
		return (unsigned int)x;
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
		for (size_t i = 0; i < n; i++)
			if (strcmp(w, names[i]) == 0)
				r |= bits[i];
	return r;
}

/* the root's driver version, as proc/driver/nvidia/version names it ("550.54.16") */
static void host_driver(char *buf, size_t n)
{
	char p[PATH_MAX], line[512];

	snprintf(buf, n, "?");
	if (rpath(p, sizeof(p), "proc/driver/nvidia/version") < 0 ||
	    read_line(p, line, sizeof(line)))
		return;
	for (char *save = NULL, *w = strtok_r(line, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save))
		if (isdigit((unsigned char)w[0]) && strchr(w, '.') && !strchr(w, ':')) {
			snprintf(buf, n, "%s", w);
			return;
		}
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, nvmlEnableState_t *current,
				  nvmlEnableState_t *pending)
{
	char f[64];

	DEV_ENTER("nvmlDeviceGetEccMode", dev);
	if (!current || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!dev->fam)
		return NVML_ERROR_NOT_SUPPORTED;
	snprintf(f, sizeof(f), "ecc-%s", dev->bdf);
	*current = *pending = st_number(f, 1) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

/*
 * nvlinks-<BDF>: how many NVLinks are active (links 0 .. N-1; the rest
 * inactive); missing or 0: a board without NVLink (every link NOT_SUPPORTED,
 * as on a PCIe board)
 */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link,
				      nvmlEnableState_t *isActive)
{
	char f[64];
	long n;

	DEV_ENTER("nvmlDeviceGetNvLinkState", dev);
	if (!isActive || link >= NVML_NVLINK_MAX_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(f, sizeof(f), "nvlinks-%s", dev->bdf);
	n = st_number(f, 0);
	if (n <= 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*isActive = (long)link < n ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

/* one line of a vgpus-<BDF> file */
struct vinst {
	unsigned int id, type;
	char vm[NVML_DEVICE_UUID_BUFFER_SIZE];
	char bdf[16];
};

/* the rows of vgpus-@bdf into @v (at most @max); how many */
static size_t vinst_load(const char *bdf, struct vinst *v, size_t max)
{
	char p[PATH_MAX], line[256];
	size_t n = 0;
	FILE *f;
	int fd;

	if (spath(p, sizeof(p), "vgpus-%s", bdf) < 0)
		return 0;
	fd = lock_take();
	f = fopen(p, "re");
	while (f && n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %79s %u", &v[n].id, v[n].vm, &v[n].type) == 3 && v[n].id) {
			snprintf(v[n].bdf, sizeof(v[n].bdf), "%s", bdf);
			n++;
		}
	}
	if (f)
		fclose(f);
	lock_drop(fd);
	return n;
}

/* instance @id on any GPU (vgpus-* files): NVML_SUCCESS, INVALID_ARGUMENT (0), NOT_FOUND */
static nvmlReturn_t vinst_find(unsigned int id, struct vinst *out)
{
	DIR *d;
	struct dirent *e;
	nvmlReturn_t r = NVML_ERROR_NOT_FOUND;

	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!(d = opendir(st)))
		return NVML_ERROR_NOT_FOUND;
	while (r != NVML_SUCCESS && (e = readdir(d))) {
		struct vinst v[MAX_VFS];
		size_t n;

		if (strncmp(e->d_name, "vgpus-", 6) != 0)
			continue;
		n = vinst_load(e->d_name + 6, v, MAX_VFS);
		for (size_t i = 0; i < n; i++)
			if (v[i].id == id) {
				*out = v[i];
				r = NVML_SUCCESS;
				break;
			}
	}
	closedir(d);
	return r;
}

nvmlReturn_t nvmlDeviceGetActiveVgpus(nvmlDevice_t dev, unsigned int *count,
				      nvmlVgpuInstance_t *instances)
{
	struct vinst v[MAX_VFS];
	size_t n;

	DEV_ENTER("nvmlDeviceGetActiveVgpus", dev);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = vinst_load(dev->bdf, v, MAX_VFS);
	if (*count < n || (!instances && n)) {
		*count = (unsigned int)n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (size_t i = 0; i < n; i++)
		instances[i] = v[i].id;
	*count = (unsigned int)n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlVgpuInstanceGetVmID(nvmlVgpuInstance_t vgpu, char *vmId, unsigned int size,
				     nvmlVgpuVmIdType_t *type)
{
	struct vinst v;
	nvmlReturn_t r;

	ENTER("nvmlVgpuInstanceGetVmID");
	if (!vmId || !type)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = vinst_find(vgpu, &v);
	if (r != NVML_SUCCESS)
		return r;
	if (size < NVML_DEVICE_UUID_BUFFER_SIZE)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(vmId, size, "%s", v.vm);
	*type = NVML_VGPU_VM_ID_UUID;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlVgpuInstanceGetType(nvmlVgpuInstance_t vgpu, nvmlVgpuTypeId_t *id)
{
	struct vinst v;
	nvmlReturn_t r;

	ENTER("nvmlVgpuInstanceGetType");
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = vinst_find(vgpu, &v);
	if (r == NVML_SUCCESS)
		*id = v.type;
	return r;
}

/*
 * The metadata: nvml.h's header, host driver from the root, guest driver and
 * the migration bit from vgpu-<ID>; opaque data "nvml-standin vgpu BDF ID TYPE".
 * A short *bufferSize: INSUFFICIENT_SIZE with the size; a NULL buffer with a
 * size other than 0: INVALID_ARGUMENT (nvml.h).
 */
nvmlReturn_t nvmlVgpuInstanceGetMetadata(nvmlVgpuInstance_t vgpu, nvmlVgpuMetadata_t *meta,
					 unsigned int *bufferSize)
{
	unsigned int need = offsetof(nvmlVgpuMetadata_t, opaqueData) + STANDIN_OPAQUE;
	char f[64], opaque[STANDIN_OPAQUE];
	struct vinst v;
	nvmlReturn_t r;

	ENTER("nvmlVgpuInstanceGetMetadata");
	if (!bufferSize || (!meta && *bufferSize))
		return NVML_ERROR_INVALID_ARGUMENT;
	r = vinst_find(vgpu, &v);
	if (r != NVML_SUCCESS)
		return r;
	if (*bufferSize < need) {
		*bufferSize = need;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memset(meta, 0, need);
	meta->version = 1;
	meta->revision = 1;
	meta->guestInfoState = 1; /* NVML_VGPU_INSTANCE_GUEST_INFO_STATE_INITIALIZED */
	snprintf(f, sizeof(f), "vgpu-%u", v.id);
	if (!setting(f, "guest-driver", meta->guestDriverVersion, sizeof(meta->guestDriverVersion)))
		snprintf(meta->guestDriverVersion, sizeof(meta->guestDriverVersion), "550.54.15");
	host_driver(meta->hostDriverVersion, sizeof(meta->hostDriverVersion));
	meta->vgpuVirtualizationCaps =
		setting_on(f, "migration", true) ? NVML_VGPU_VIRTUALIZATION_CAP_MIGRATION_YES : 0;
	meta->guestVgpuVersion = 0x120001;
	meta->opaqueDataSize = STANDIN_OPAQUE;
	memset(opaque, 0, sizeof(opaque));
	snprintf(opaque, sizeof(opaque), STANDIN_VGPU_META_MAGIC "%s %u %u", v.bdf, v.id, v.type);
	memcpy(meta->opaqueData, opaque, STANDIN_OPAQUE);
	*bufferSize = need;
	return NVML_SUCCESS;
}

/* the GPU's: host driver from the root, the migration bit from pgpu-<BDF>; opaque "... BDF" */
nvmlReturn_t nvmlDeviceGetVgpuMetadata(nvmlDevice_t dev, nvmlVgpuPgpuMetadata_t *meta,
				       unsigned int *bufferSize)
{
	unsigned int need = offsetof(nvmlVgpuPgpuMetadata_t, opaqueData) + STANDIN_OPAQUE;
	char f[64], opaque[STANDIN_OPAQUE];

	DEV_ENTER("nvmlDeviceGetVgpuMetadata", dev);
	if (!bufferSize || (!meta && *bufferSize))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!dev->fam)
		return NVML_ERROR_NOT_SUPPORTED;
	if (*bufferSize < need) {
		*bufferSize = need;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memset(meta, 0, need);
	meta->version = 1;
	meta->revision = 1;
	host_driver(meta->hostDriverVersion, sizeof(meta->hostDriverVersion));
	snprintf(f, sizeof(f), "pgpu-%s", dev->bdf);
	meta->pgpuVirtualizationCaps = setting_on(f, "migration", true) ?
					       NVML_VGPU_PGPU_VIRTUALIZATION_CAP_MIGRATION_YES :
					       0;
	meta->hostSupportedVgpuRange.minVersion = 0x120001;
	meta->hostSupportedVgpuRange.maxVersion = 0x120004;
	meta->opaqueDataSize = STANDIN_OPAQUE;
	memset(opaque, 0, sizeof(opaque));
	snprintf(opaque, sizeof(opaque), STANDIN_PGPU_META_MAGIC "%s", dev->bdf);
	memcpy(meta->opaqueData, opaque, STANDIN_OPAQUE);
	*bufferSize = need;
	return NVML_SUCCESS;
}

/*
 * The answer pgpu-<BDF> sets (compat, limit); unset: every kind of migration
 * when the host drivers are the same and both migration bits are on, else
 * none, limited by the host driver (versions differ) or by "other" (a bit
 * off).  Metadata the stand-in did not write: INVALID_ARGUMENT.
 */
nvmlReturn_t nvmlGetVgpuCompatibility(nvmlVgpuMetadata_t *vgpuMeta,
				      nvmlVgpuPgpuMetadata_t *pgpuMeta,
				      nvmlVgpuPgpuCompatibility_t *compat)
{
	static const char *const cnames[] = { "none", "cold", "hibernate", "sleep", "live" };
	static const unsigned int cbits[] = { 0, 1, 2, 4, 8 };
	static const char *const lnames[] = { "none", "host-driver", "guest-driver", "gpu",
					      "other" };
	static const unsigned int lbits[] = { 0, 1, 2, 4, 0x80000000u };
	char bdf[32] = "", f[64], v[128];
	bool set;

	ENTER("nvmlGetVgpuCompatibility");
	if (!vgpuMeta || !pgpuMeta || !compat ||
	    strncmp(vgpuMeta->opaqueData, STANDIN_VGPU_META_MAGIC,
		    strlen(STANDIN_VGPU_META_MAGIC)) != 0 ||
	    strncmp(pgpuMeta->opaqueData, STANDIN_PGPU_META_MAGIC,
		    strlen(STANDIN_PGPU_META_MAGIC)) != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	sscanf(pgpuMeta->opaqueData + strlen(STANDIN_PGPU_META_MAGIC), "%31s", bdf);
	snprintf(f, sizeof(f), "pgpu-%s", bdf);
	set = setting(f, "compat", v, sizeof(v));
	if (set) {
		compat->vgpuVmCompatibility =
			(nvmlVgpuVmCompatibility_t)bits_of(v, cnames, cbits, ARRAY_SIZE(cnames));
		compat->compatibilityLimitCode =
			setting(f, "limit", v, sizeof(v)) ?
				bits_of(v, lnames, lbits, ARRAY_SIZE(lnames)) :
				0;
		return NVML_SUCCESS;
	}
	compat->vgpuVmCompatibility = 0;
	if (strncmp(vgpuMeta->hostDriverVersion, pgpuMeta->hostDriverVersion,
		    sizeof(pgpuMeta->hostDriverVersion)) != 0)
		compat->compatibilityLimitCode = 0x1; /* HOST_DRIVER */
	else if (!(vgpuMeta->vgpuVirtualizationCaps & NVML_VGPU_VIRTUALIZATION_CAP_MIGRATION_YES) ||
		 !(pgpuMeta->pgpuVirtualizationCaps &
		   NVML_VGPU_PGPU_VIRTUALIZATION_CAP_MIGRATION_YES))
		compat->compatibilityLimitCode = 0x80000000u; /* OTHER */
	else {
		compat->vgpuVmCompatibility = 0xf; /* cold, hibernate, sleep, live */
		compat->compatibilityLimitCode = 0;
	}
	return NVML_SUCCESS;
}

#ifndef STANDIN_OLD
/* runtime-state of vgpu-<ID>, 16 MiB when unset; the ID is looked at before the version */
nvmlReturn_t nvmlVgpuInstanceGetRuntimeStateSize(nvmlVgpuInstance_t vgpu,
						 nvmlVgpuRuntimeState_v1_t *state)
{
	char f[64], v[64], *end;
	struct vinst in;
	nvmlReturn_t r;

	ENTER("nvmlVgpuInstanceGetRuntimeStateSize");
	r = vinst_find(vgpu, &in);
	if (r != NVML_SUCCESS)
		return r;
	if (!state)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (state->version != nvmlVgpuRuntimeState_v1)
		return STANDIN_VERSION_MISMATCH;
	snprintf(f, sizeof(f), "vgpu-%u", in.id);
	state->size = 16ULL << 20;
	if (setting(f, "runtime-state", v, sizeof(v))) {
		unsigned long long x = strtoull(v, &end, 0);

		if (end == v || *end)
			return NVML_ERROR_UNKNOWN;
		state->size = x;
	}
	return NVML_SUCCESS;
}
#endif

#ifndef STANDIN_OLD
/*
 * sched-<BDF>: the GPU's live vGPU scheduler, "KEY VALUE" lines: policy
 * (best-effort, equal-share, fixed-share or NVML's number), timeslice (ms;
 * answered in ns as NVML does), arr 0|1 and avg-factor N (adaptive round
 * robin).  Missing: NOT_SUPPORTED, as a driver without the call answers.
 */
nvmlReturn_t nvmlDeviceGetVgpuSchedulerState(nvmlDevice_t dev, nvmlVgpuSchedulerGetState_t *state)
{
	static const char *const names[] = { "unknown", "best-effort", "equal-share",
					     "fixed-share" };
	char f[64], v[64];
	unsigned int ts = 0;

	DEV_ENTER("nvmlDeviceGetVgpuSchedulerState", dev);
	if (!state)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(f, sizeof(f), "sched-%s", dev->bdf);
	if (!setting(f, "policy", v, sizeof(v)))
		return NVML_ERROR_NOT_SUPPORTED;
	memset(state, 0, sizeof(*state));
	state->schedulerPolicy = (unsigned int)strtoul(v, NULL, 0);
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i]) == 0)
			state->schedulerPolicy = i;
	if (setting(f, "timeslice", v, sizeof(v)))
		ts = (unsigned int)strtoul(v, NULL, 0) * 1000000u;
	state->isEnabledARR = setting_on(f, "arr", false);
	if (state->isEnabledARR) {
		state->schedulerParams.vgpuSchedDataWithARR.avgFactor =
			setting(f, "avg-factor", v, sizeof(v)) ? (unsigned int)strtoul(v, NULL, 0) :
								 33;
		state->schedulerParams.vgpuSchedDataWithARR.timeslice = ts;
	} else {
		state->schedulerParams.vgpuSchedData.timeslice = ts;
	}
	return NVML_SUCCESS;
}
#endif

#ifndef STANDIN_OLD
/*
 * module-<BDF>: the GPU's module ID (an HGX board's slot, Fabric Manager's
 * physical ID; tests/data/hosts/hgx-h100-8 carries them); missing:
 * NOT_SUPPORTED.  Older drivers lack the call (old/).
 */
nvmlReturn_t nvmlDeviceGetModuleId(nvmlDevice_t dev, unsigned int *moduleId)
{
	char f[64];
	long n;

	DEV_ENTER("nvmlDeviceGetModuleId", dev);
	if (!moduleId)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(f, sizeof(f), "module-%s", dev->bdf);
	n = st_number(f, -1);
	if (n < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*moduleId = (unsigned int)n;
	return NVML_SUCCESS;
}
#endif
