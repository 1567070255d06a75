// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NVIDIA PCI functions: physical functions (GPUs) and their vGPU parents
 * (SR-IOV VFs through the PF's virtfn<N> links, or the PF itself), found
 * through sys/bus/pci/devices.
 *
 * Files the kernel always provides for a PCI function (vendor, device,
 * class, local_cpulist, virtfn<N>) are named in one warning when damaged.
 * Legitimately optional ones are absent in silence: numa_node (kernels
 * without NUMA), driver (unbound), iommu_group (no IOMMU), physfn (not a
 * VF), sriov_* (not SR-IOV capable), the NVIDIA driver's proc files (driver
 * not loaded).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "read-priv.h"

/* An optional link's basename as a number (iommu_group): -1 when absent. */
static int read_link_num(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *rel)
{
	char base[64];
	long v;
	int r = vgpu_sysfs_link_basename(d, base, sizeof(base), "%s", rel);

	if (r == -ENOENT)
		return -1;
	if (r == 0)
		r = vgpu_parse_long(base, &v);
	if (r == 0 && (v < 0 || v > 0x7fffffff))
		r = -VGPU_ERANGE_VALUE;
	if (r < 0) {
		vgpu_warn_file(ctx, d, rel, r, NULL);
		return -1;
	}
	return (int)v;
}

/* numa_node: "-1" is legal (unknown), absent on kernels without NUMA. */
static int read_numa_node(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d)
{
	long v;
	int r = vgpu_sysfs_read_long(d, &v, -1, VGPU_MAX_NUMA_NODE, "numa_node");

	if (r == -ENOENT)
		return -1;
	if (r < 0) {
		vgpu_warn_file(ctx, d, "numa_node", r, NULL);
		return -1;
	}
	return (int)v;
}

static int read_optional_count(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, const char *attr)
{
	long v;
	int r = vgpu_sysfs_read_long(d, &v, 0, VGPU_MAX_SRIOV_VFS, "%s", attr);

	if (r == -ENOENT)
		return -1;
	if (r < 0) {
		vgpu_warn_file(ctx, d, attr, r, NULL);
		return -1;
	}
	return (int)v;
}

/*
 * proc/driver/nvidia/gpus/<BDF>/@name, read whole (at most @max bytes): the
 * text (caller frees), or NULL when it is not there or could not be read (a
 * warning naming the file).  @root comes back for the caller's warnings.
 */
static char *read_gpu_proc(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_gpu *g,
			   const char *name, size_t max, struct vgpu_sysdir *root, char rel[128])
{
	char *text = NULL;
	int r;

	vgpu_sysdir_root(fs, root);
	snprintf(rel, 128, "proc/driver/nvidia/gpus/%s/%s", g->addr, name);
	r = vgpu_sysfs_read_file(root, max, &text, NULL, "%s", rel);
	if (r < 0 && r != -ENOENT)
		vgpu_warn_file(ctx, root, rel, r, NULL);
	return r < 0 ? NULL : text;
}

/* proc/driver/nvidia/gpus/<BDF>/information: "Key:<tabs> value" lines. */
static void read_driver_info(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g)
{
	struct vgpu_sysdir root;
	char rel[128];
	VGPU_AUTOFREE char *text = read_gpu_proc(ctx, fs, g, "information", 1 << 16, &root, rel);
	char *line, *save = NULL;

	if (!text)
		return;
	if (!strstr(text, "Model:"))
		vgpu_warn_file_why(ctx, &root, rel, "no 'Model:' line", NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		char *key, *val;
		long v;

		if (!colon)
			continue;
		*colon = '\0';
		key = vgpu_strip(line);
		val = vgpu_strip(colon + 1);
		if (strcmp(key, "Model") == 0 && *val) {
			free(g->model);
			g->model = vgpu_xstrdup(val);
		} else if (strcmp(key, "Device Minor") == 0 && vgpu_parse_long(val, &v) == 0 &&
			   v >= 0 && v < 65536) {
			g->minor = (int)v;
		}
	}
}

/*
 * proc/driver/nvidia/gpus/<BDF>/numa_status: on coherent platforms (Grace,
 * POWER9) the GPU's memory is a NUMA node without CPUs, "Node: N" (absent
 * elsewhere; "Node: -1" when not onlined).
 */
static void read_numa_status(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g)
{
	struct vgpu_sysdir root;
	char rel[128];
	VGPU_AUTOFREE char *text = read_gpu_proc(ctx, fs, g, "numa_status", 1 << 12, &root, rel);
	char *line, *save = NULL;

	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		long v;

		if (!colon)
			continue;
		*colon = '\0';
		if (strcmp(vgpu_strip(line), "Node") == 0 &&
		    vgpu_parse_long(vgpu_strip(colon + 1), &v) == 0 && v >= 0 && v < VGPU_MAX_CPUS)
			g->mem_node = (int)v;
	}
}

/* GPU instances: one gi<N> directory per existing GI under the capability tree. */
static void read_mig_instances(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_gpu *g)
{
	VGPU_AUTOSTRV ents = { 0 };
	struct vgpu_sysdir root;
	char rel[128];
	int count = 0, r;

	g->mig_instances = -1;
	if (g->minor < 0)
		return;
	vgpu_sysdir_root(fs, &root);
	snprintf(rel, sizeof(rel), "proc/driver/nvidia/capabilities/gpu%d/mig", g->minor);
	r = vgpu_sysfs_list_dir(&root, &ents, "%s", rel);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		vgpu_warn_file(ctx, &root, rel, r, NULL);
		return;
	}
	for (size_t i = 0; i < ents.n; i++) {
		long id;

		if (strncmp(ents.items[i], "gi", 2) != 0 || ents.items[i][2] < '0' ||
		    ents.items[i][2] > '9' || vgpu_parse_long(ents.items[i] + 2, &id) < 0 ||
		    id > 0xffff)
			continue;
		if (g->n_gis >= VGPU_GIS_MAX) {
			vgpu_log(ctx, LOG_WARNING,
				 "%s: more than %d GPU instances; the rest are ignored", rel,
				 VGPU_GIS_MAX);
			break;
		}
		vgpu_gpu_add_gi(g, (int)id, NULL, -1);
		count++;
	}
	g->mig_instances = count;
}

/*
 * Which vGPU interface a parent offers: nvidia/current_vgpu_type (vendor
 * VFIO), a mdev_supported_types directory (mdev), or none.  Something in
 * the way of either (a loop, a file where a directory belongs) is damage.
 */
static enum vgpu_iface parent_iface(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d)
{
	struct stat st;
	char show[VGPU_SHOW_LEN];
	int r = vgpu_sysfs_stat(d, &st, "nvidia/current_vgpu_type");

	if (r == 0)
		return VGPU_IFACE_VENDOR_VFIO;
	if (r != -ENOENT && r != -ENOTDIR)
		vgpu_warn_file(ctx, d, "nvidia/current_vgpu_type", r, NULL);
	r = vgpu_sysfs_stat(d, &st, "mdev_supported_types");
	if (r == 0 && S_ISDIR(st.st_mode))
		return VGPU_IFACE_MDEV;
	if (r == 0)
		vgpu_warn(ctx, "'%s' is not a directory; not a vGPU parent",
			  VGPU_SHOW(d, "mdev_supported_types", show));
	else if (r != -ENOENT)
		vgpu_warn_file(ctx, d, "mdev_supported_types", r, "; not a vGPU parent");
	return VGPU_IFACE_NONE;
}

static void read_parent(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, struct vgpu_gpu *g,
			struct vgpu_parent *p)
{
	int node = read_numa_node(ctx, d);

	p->numa_node = node >= 0 ? node : g->numa_node;
	p->iommu_group = read_link_num(ctx, d, "iommu_group");
	p->iface = parent_iface(ctx, d);
	if (g->iface == VGPU_IFACE_NONE)
		g->iface = p->iface;
}

static void read_vfs(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_sysdir *pf,
		     struct vgpu_gpu *g)
{
	VGPU_AUTOSTRV ents = { 0 };
	char show[VGPU_SHOW_LEN];
	int r = vgpu_sysfs_list_dir(pf, &ents, "%s", "");

	if (r < 0) {
		vgpu_warn(ctx, "cannot list '%s': %s; its VFs are not listed",
			  VGPU_SHOW(pf, "", show), vgpu_strerror(r));
		return;
	}
	for (size_t i = 0; i < ents.n; i++) {
		VGPU_AUTOSYSDIR vd = { .fd = -1 };
		char vfaddr[VGPU_BDF_LEN], base[64];
		long idx;

		if (strncmp(ents.items[i], "virtfn", 6) != 0 ||
		    vgpu_parse_long(ents.items[i] + 6, &idx) < 0 || idx < 0 ||
		    idx > VGPU_MAX_SRIOV_VFS)
			continue;
		r = vgpu_sysfs_link_basename(pf, base, sizeof(base), "%s", ents.items[i]);
		if (r == 0 && vgpu_bdf_normalize(base, vfaddr) < 0)
			r = -EINVAL;
		if (r < 0) {
			vgpu_warn(ctx, "cannot read link '%s': %s; skipped",
				  VGPU_SHOW(pf, ents.items[i], show),
				  r == -EINVAL ? "not a PCI address" : vgpu_strerror(r));
			continue;
		}
		r = vgpu_sysdir_open(fs, &vd, "sys/bus/pci/devices/%s", vfaddr);
		if (r < 0) {
			vgpu_warn(ctx, "dangling link '%s' (VF %s does not exist); skipped",
				  VGPU_SHOW(pf, ents.items[i], show), vfaddr);
			continue;
		}
		read_parent(ctx, &vd, g, vgpu_gpu_add_parent(g, vfaddr, (int)idx));
	}
}

/* The driver link: "../../../bus/pci/drivers/<name>"; anything else is damage. */
static int read_driver(const struct vgpu_sysdir *d, char *buf, size_t len)
{
	char target[VGPU_PATH_MAX];
	const char *base, *dir;
	int r = vgpu_sysfs_readlink(d, target, sizeof(target), "driver");

	if (r < 0)
		return r;
	base = strrchr(target, '/');
	if (!base || base == target)
		return -EINVAL;
	for (dir = base - 1; dir > target && dir[-1] != '/'; dir--)
		;
	if ((size_t)(base - dir) != 7 || strncmp(dir, "drivers", 7) != 0 || !base[1] ||
	    !vgpu_utf8_valid(base + 1) || strlen(base + 1) >= len)
		return -EINVAL;
	strcpy(buf, base + 1);
	return 0;
}

/*
 * subsystem_vendor, subsystem_device: the board, which the device ID alone does not name
 * (an H100 PCIe 80 GB and a board of another maker share 0x2331); a live migration needs
 * the same one on both hosts.  Missing: unknown, quietly (a tree written by hand).
 */
static void read_subsystem(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, struct vgpu_gpu *g)
{
	unsigned long v, s;
	const char *f = "subsystem_vendor";
	int r = vgpu_sysfs_read_hex(d, &v, 0xffff, "%s", f);

	if (r == 0) {
		f = "subsystem_device";
		r = vgpu_sysfs_read_hex(d, &s, 0xffff, "%s", f);
	}
	if (r == 0)
		g->subsystem = (uint32_t)(v << 16 | s);
	else if (r != -ENOENT)
		vgpu_warn_file(ctx, d, f, r, "; board unknown");
}

static void read_gpu(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_sysdir *d,
		     struct vgpu_gpu *g)
{
	char buf[256];
	struct stat st;
	int r;

	g->numa_node = read_numa_node(ctx, d);
	read_subsystem(ctx, d, g);
	r = vgpu_sysfs_read_cpulist(d, &g->cpus, "local_cpulist");
	if (r == 0 && vgpu_cpuset_empty(&g->cpus))
		r = -ENODATA;
	g->has_cpus = r == 0;
	if (r < 0) /* the kernel gives every PCI function one */
		vgpu_warn_file_why(ctx, d, "local_cpulist",
				   r == -ENODATA ? "empty" : vgpu_strerror(r), NULL);
	r = read_driver(d, buf, sizeof(buf));
	if (r == 0)
		g->driver = vgpu_xstrdup(buf);
	else if (r != -ENOENT)
		vgpu_warn_file(ctx, d, "driver", r, "; driver unknown");
	g->iommu_group = read_link_num(ctx, d, "iommu_group");
	g->sriov_total_vfs = read_optional_count(ctx, d, "sriov_totalvfs");
	g->sriov_num_vfs = read_optional_count(ctx, d, "sriov_numvfs");
	read_driver_info(ctx, fs, g);
	read_numa_status(ctx, fs, g);
	if (!g->model) {
		const char *m = vgpu_model_for_device(g->device_id);

		g->model = m ? vgpu_xstrdup(m) :
			       vgpu_asprintf("NVIDIA [10de:%04x]", (unsigned)g->device_id);
	}
	read_mig_instances(ctx, fs, g);

	/* Legacy (non-SR-IOV) GPUs are their own mdev parent (vGPU UG 17.0 2.10.8.1). */
	r = vgpu_sysfs_stat(d, &st, "mdev_supported_types");
	if (r == 0 && S_ISDIR(st.st_mode)) {
		struct vgpu_parent *pf = vgpu_gpu_add_parent(g, g->addr, -1);

		pf->iommu_group = g->iommu_group;
		pf->iface = g->iface = VGPU_IFACE_MDEV;
		return;
	}
	if (r == 0 || (r < 0 && r != -ENOENT))
		parent_iface(ctx, d); /* says what is wrong with it */
	if (g->sriov_num_vfs > 0)
		read_vfs(ctx, fs, d, g);
}

/* A display controller of NVIDIA that is not a VF: a GPU. Warns on damage. */
static bool is_nvidia_gpu(struct vgpu_ctx *ctx, const struct vgpu_sysdir *d, uint16_t *device)
{
	unsigned long vendor, cls, dev;
	struct stat st;
	int r;

	/* VFs are reached through their PF; one lstat rules them out */
	r = vgpu_sysfs_lstat(d, &st, "physfn");
	if (r == 0)
		return false;
	if (r != -ENOENT)
		vgpu_warn_file(ctx, d, "physfn", r, NULL);
	r = vgpu_sysfs_read_hex(d, &vendor, 0xffff, "vendor");
	if (r < 0) {
		vgpu_warn_file(ctx, d, "vendor", r, "; device skipped");
		return false;
	}
	if (vendor != VGPU_PCI_VENDOR_NVIDIA)
		return false;
	/* display controllers 0x0300 (VGA) and 0x0302 (3D), as sriov-manage selects */
	r = vgpu_sysfs_read_hex(d, &cls, 0xffffff, "class");
	if (r < 0) {
		vgpu_warn_file(ctx, d, "class", r, "; device skipped");
		return false;
	}
	if ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302)
		return false;
	r = vgpu_sysfs_read_hex(d, &dev, 0xffff, "device");
	if (r < 0) {
		vgpu_warn_file(ctx, d, "device", r, "; skipped");
		return false;
	}
	*device = (uint16_t)dev;
	return true;
}

static int cmp_addr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vgpu_read_gpus(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_model *m)
{
	VGPU_AUTOSTRV ents = { 0 };
	struct vgpu_sysdir root;
	char show[VGPU_SHOW_LEN];
	int r;

	vgpu_sysdir_root(fs, &root);
	r = vgpu_sysfs_list_dir(&root, &ents, "sys/bus/pci/devices");
	if (r == -ENOENT) {
		/* a tree without a PCI bus (a topology dump): say so, list no GPUs */
		vgpu_warn(ctx, "'%s' does not exist; no GPUs listed",
			  VGPU_SHOW(&root, "sys/bus/pci/devices", show));
		return 0;
	}
	if (r < 0)
		return vgpu_error(ctx, r, "cannot list '%s': %s",
				  VGPU_SHOW(&root, "sys/bus/pci/devices", show), vgpu_strerror(r));
	/*
	 * Addresses are fixed-width lower-case hex: byte order is bus order.
	 * The listing's version order is not ("0000:18:00.0" after "0000:9a:00.0"),
	 * and GPU indexes in configs ("devices: [0]") follow this order.
	 */
	if (ents.n > 1)
		qsort(ents.items, ents.n, sizeof(*ents.items), cmp_addr);
	for (size_t i = 0; i < ents.n; i++) {
		VGPU_AUTOSYSDIR d = { .fd = -1 };
		char addr[VGPU_BDF_LEN];
		uint16_t device;

		if (vgpu_bdf_normalize(ents.items[i], addr) < 0 ||
		    strcmp(addr, ents.items[i]) != 0) {
			vgpu_warn(ctx, "'%s/%s' is not a PCI address; skipped",
				  VGPU_SHOW(&root, "sys/bus/pci/devices", show), ents.items[i]);
			continue;
		}
		r = vgpu_sysdir_open(fs, &d, "sys/bus/pci/devices/%s", addr);
		if (r < 0) {
			vgpu_warn(ctx, "cannot open '%s/%s': %s; device skipped",
				  VGPU_SHOW(&root, "sys/bus/pci/devices", show), addr,
				  vgpu_strerror(r));
			continue;
		}
		if (is_nvidia_gpu(ctx, &d, &device))
			read_gpu(ctx, fs, &d, vgpu_model_add_gpu(m, addr, device));
	}
	return 0;
}
