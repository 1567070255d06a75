// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NVIDIA PCI functions: physical functions (GPUs) and their SR-IOV VFs,
 * found through sys/bus/pci/devices and the PF's virtfn<N> links.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "vgpu-priv.h"

#define PCI_VENDOR_NVIDIA 0x10de

int vgpu_scan_types(struct vgpu_host *h, struct vgpu_gpu *g);
int vgpu_scan_instances(struct vgpu_host *h);

static void vf_clear(struct vgpu_vf *vf)
{
	vgpu_strv_free(vf->mdev_uuids, vf->n_mdev);
	free(vf->types);
}

static void gpu_clear(struct vgpu_gpu *g)
{
	free(g->model);
	free(g->driver);
	for (size_t i = 0; i < g->n_vfs; i++)
		vf_clear(&g->vfs[i]);
	free(g->vfs);
	for (size_t i = 0; i < g->n_types; i++) {
		free(g->types[i]->name);
		free(g->types[i]->description);
		free(g->types[i]->device_api);
		free(g->types[i]);
	}
	free(g->types);
}

void vgpu_host_free(struct vgpu_host *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_gpus; i++)
		gpu_clear(&h->gpus[i]);
	free(h->gpus);
	vgpu_topology_clear(&h->topo);
	if (h->rootfd >= 0)
		close(h->rootfd);
	free(h->root);
	free(h);
}

void vgpu_host_set_warn(struct vgpu_host *h, vgpu_warn_fn fn, void *data)
{
	h->warn = fn;
	h->warn_data = data;
}

/* An optional link's basename as a number (iommu_group): -1 when absent. */
static int read_link_num(struct vgpu_host *h, const char *rel)
{
	char base[64];
	long v;

	if (vgpu_link_basename(h, rel, base, sizeof(base)) < 0 || vgpu_parse_long(base, &v) < 0)
		return -1;
	return (int)v;
}

/* numa_node: "-1" is legal (unknown); anything unparsable is warned about. */
static int read_numa_node(struct vgpu_host *h, const char *dev)
{
	char rel[256], show[1024];
	long v;
	int r;

	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/numa_node", dev);
	r = vgpu_read_long(h, rel, &v);
	if (r == -ENOENT)
		return -1;
	if (r < 0 || v < -1 || v > 1023) {
		vgpu_warn(h, "cannot read '%s': %s", vgpu_path_show(h, rel, show, sizeof(show)),
			  r < 0 ? strerror(-r) : "value out of range");
		return -1;
	}
	return (int)v;
}

static int read_optional_count(struct vgpu_host *h, const char *dev, const char *attr)
{
	char rel[256], show[1024];
	long v;
	int r;

	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/%s", dev, attr);
	r = vgpu_read_long(h, rel, &v);
	if (r == -ENOENT)
		return -1;
	if (r < 0 || v < 0) {
		vgpu_warn(h, "cannot read '%s': %s", vgpu_path_show(h, rel, show, sizeof(show)),
			  r < 0 ? strerror(-r) : "negative value");
		return -1;
	}
	return (int)v;
}

/* proc/driver/nvidia/gpus/<BDF>/information: "Key:<tabs> value" lines. */
static void read_driver_info(struct vgpu_host *h, struct vgpu_gpu *g)
{
	VGPU_AUTOFREE char *text = NULL;
	char rel[128];
	char *line, *save = NULL;

	snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s/information", g->addr);
	if (vgpu_read_file(h, rel, &text, NULL) < 0)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		char *val;
		long v;

		if (!colon)
			continue;
		*colon = '\0';
		val = vgpu_strip(colon + 1);
		if (strcmp(vgpu_strip(line), "Model") == 0 && *val) {
			free(g->model);
			g->model = vgpu_xstrdup(val);
		} else if (strcmp(vgpu_strip(line), "Device Minor") == 0 &&
			   vgpu_parse_long(val, &v) == 0 && v >= 0) {
			g->minor = (int)v;
		}
	}
}

/* GPU instances: one gi<N> directory per existing GI under the capability tree. */
static void read_mig_instances(struct vgpu_host *h, struct vgpu_gpu *g)
{
	char rel[128];
	char **ents = NULL;
	size_t n = 0;
	int count = 0;

	g->mig_instances = -1;
	if (g->minor < 0)
		return;
	snprintf(rel, sizeof(rel), "proc/driver/nvidia/capabilities/gpu%d/mig", g->minor);
	if (vgpu_list_dir(h, rel, &ents, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (strncmp(ents[i], "gi", 2) == 0 && ents[i][2] >= '0' && ents[i][2] <= '9')
			count++;
	vgpu_strv_free(ents, n);
	g->mig_instances = count;
}

static enum vgpu_iface parent_iface(struct vgpu_host *h, const char *dev)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/nvidia/current_vgpu_type", dev);
	if (vgpu_exists(h, rel))
		return VGPU_IFACE_VENDOR_VFIO;
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/mdev_supported_types", dev);
	if (vgpu_is_dir(h, rel))
		return VGPU_IFACE_MDEV;
	return VGPU_IFACE_NONE;
}

static struct vgpu_vf *add_parent(struct vgpu_gpu *g, const char *addr, int index)
{
	struct vgpu_vf *nv = realloc(g->vfs, (g->n_vfs + 1) * sizeof(*nv));
	struct vgpu_vf *vf;

	if (!nv)
		return NULL;
	g->vfs = nv;
	vf = &g->vfs[g->n_vfs++];
	memset(vf, 0, sizeof(*vf));
	snprintf(vf->addr, sizeof(vf->addr), "%s", addr);
	vf->index = index;
	return vf;
}

static int scan_vfs(struct vgpu_host *h, struct vgpu_gpu *g)
{
	char **ents = NULL;
	size_t n = 0;
	char rel[256], show[1024];
	int r;

	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", g->addr);
	r = vgpu_list_dir(h, rel, &ents, &n);
	if (r < 0)
		return vgpu_set_error(h, r, "cannot list '%s': %s",
				      vgpu_path_show(h, rel, show, sizeof(show)), strerror(-r));
	for (size_t i = 0; i < n; i++) {
		char vfaddr[VGPU_BDF_LEN], link[256], base[64];
		struct vgpu_vf *vf;
		long idx;

		if (strncmp(ents[i], "virtfn", 6) != 0 || vgpu_parse_long(ents[i] + 6, &idx) < 0)
			continue;
		snprintf(link, sizeof(link), "sys/bus/pci/devices/%s/%s", g->addr, ents[i]);
		r = vgpu_link_basename(h, link, base, sizeof(base));
		if (r < 0 || vgpu_bdf_normalize(base, vfaddr) < 0) {
			vgpu_warn(h, "cannot read link '%s': %s",
				  vgpu_path_show(h, link, show, sizeof(show)),
				  r < 0 ? strerror(-r) : "not a PCI address");
			continue;
		}
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/%s/", g->addr, ents[i]);
		if (!vgpu_is_dir(h, rel)) {
			vgpu_warn(h, "dangling link '%s' (VF %s does not exist); skipped",
				  vgpu_path_show(h, link, show, sizeof(show)), vfaddr);
			continue;
		}
		vf = add_parent(g, vfaddr, (int)idx);
		if (!vf) {
			vgpu_strv_free(ents, n);
			return vgpu_set_error(h, -ENOMEM, "out of memory");
		}
		vf->gpu = g;
		vf->numa_node = read_numa_node(h, vfaddr);
		if (vf->numa_node < 0)
			vf->numa_node = g->numa_node;
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/iommu_group", vfaddr);
		vf->iommu_group = read_link_num(h, rel);
		vf->iface = parent_iface(h, vfaddr);
		if (g->iface == VGPU_IFACE_NONE)
			g->iface = vf->iface;
	}
	vgpu_strv_free(ents, n);
	return 0;
}

static int scan_gpu(struct vgpu_host *h, struct vgpu_gpu *g, const char *addr, uint16_t device)
{
	char rel[256], buf[128];

	snprintf(g->addr, sizeof(g->addr), "%s", addr);
	g->vendor_id = PCI_VENDOR_NVIDIA;
	g->device_id = device;
	g->minor = -1;
	g->numa_node = read_numa_node(h, addr);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/local_cpulist", addr);
	g->has_cpus = vgpu_read_cpulist(h, rel, &g->cpus) == 0;
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/driver", addr);
	if (vgpu_link_basename(h, rel, buf, sizeof(buf)) == 0)
		g->driver = vgpu_xstrdup(buf);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/iommu_group", addr);
	g->iommu_group = read_link_num(h, rel);
	g->sriov_total_vfs = read_optional_count(h, addr, "sriov_totalvfs");
	g->sriov_num_vfs = read_optional_count(h, addr, "sriov_numvfs");
	read_driver_info(h, g);
	if (!g->model) {
		const char *m = vgpu_model_for_device(device);

		g->model = m ? vgpu_xstrdup(m) : vgpu_asprintf("NVIDIA [10de:%04x]", device);
	}
	read_mig_instances(h, g);

	/* Legacy (non-SR-IOV) GPUs are their own mdev parent (vGPU UG 17.0 2.10.8.1). */
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/mdev_supported_types", addr);
	if (vgpu_is_dir(h, rel)) {
		struct vgpu_vf *pf = add_parent(g, addr, -1);

		if (!pf)
			return vgpu_set_error(h, -ENOMEM, "out of memory");
		pf->gpu = g;
		pf->numa_node = g->numa_node;
		pf->iommu_group = g->iommu_group;
		pf->iface = g->iface = VGPU_IFACE_MDEV;
		return 0;
	}
	if (g->sriov_num_vfs > 0)
		return scan_vfs(h, g);
	return 0;
}

/*
 * numa_node -1 is normal on single-node hosts.  On a multi-node host derive
 * the node from local_cpulist (reference section 9.1) and say so.
 */
static void resolve_numa(struct vgpu_host *h, struct vgpu_gpu *g)
{
	const struct vgpu_topology *t = &h->topo;
	char rel[256], show[1024];
	int found = -1, hits = 0;

	if (g->numa_node >= 0 || !t->n_nodes)
		return;
	if (t->n_nodes == 1) {
		g->numa_node = t->nodes[0].id;
	} else {
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/numa_node", g->addr);
		for (size_t i = 0; g->has_cpus && i < t->n_nodes; i++) {
			if (vgpu_cpuset_subset(&g->cpus, &t->nodes[i].cpus) &&
			    !vgpu_cpuset_empty(&g->cpus)) {
				found = t->nodes[i].id;
				hits++;
			}
		}
		if (hits == 1) {
			vgpu_warn(h,
				  "'%s' is -1 on a %zu-node host; using node %d from local_cpulist",
				  vgpu_path_show(h, rel, show, sizeof(show)), t->n_nodes, found);
			g->numa_node = found;
		} else {
			vgpu_warn(h,
				  "'%s' is -1 on a %zu-node host and local_cpulist spans nodes; "
				  "NUMA node unknown",
				  vgpu_path_show(h, rel, show, sizeof(show)), t->n_nodes);
			return;
		}
	}
	for (size_t i = 0; i < g->n_vfs; i++)
		if (g->vfs[i].numa_node < 0)
			g->vfs[i].numa_node = g->numa_node;
}

int vgpu_host_scan(struct vgpu_host *h, bool want_types)
{
	char **ents = NULL;
	size_t n = 0;
	char show[1024];
	int r;

	if (h->scanned)
		return 0;
	r = vgpu_list_dir(h, "sys/bus/pci/devices", &ents, &n);
	if (r == -ENOENT) {
		n = 0; /* no PCI bus: a host without GPUs */
	} else if (r < 0) {
		return vgpu_set_error(h, r, "cannot list '%s': %s",
				      vgpu_path_show(h, "sys/bus/pci/devices", show, sizeof(show)),
				      strerror(-r));
	}
	for (size_t i = 0; i < n; i++) {
		char rel[256], addr[VGPU_BDF_LEN], tmp[8];
		unsigned long vendor, cls, device;
		struct vgpu_gpu *ng;

		if (vgpu_bdf_normalize(ents[i], addr) < 0)
			continue;
		/* VFs are reached through their PF; one readlink rules them out. */
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/physfn", ents[i]);
		if (vgpu_readlink(h, rel, tmp, sizeof(tmp)) != -ENOENT)
			continue;
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/vendor", ents[i]);
		if (vgpu_read_hex(h, rel, &vendor) < 0 || vendor != PCI_VENDOR_NVIDIA)
			continue;
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/class", ents[i]);
		/* display controllers 0x0300 (VGA) and 0x0302 (3D), as sriov-manage selects */
		if (vgpu_read_hex(h, rel, &cls) < 0 ||
		    ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302))
			continue;
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/device", ents[i]);
		r = vgpu_read_hex(h, rel, &device);
		if (r < 0 || device > 0xffff) {
			vgpu_warn(h, "cannot read '%s': %s; skipped",
				  vgpu_path_show(h, rel, show, sizeof(show)),
				  r < 0 ? strerror(-r) : "not a device id");
			continue;
		}
		ng = realloc(h->gpus, (h->n_gpus + 1) * sizeof(*ng));
		if (!ng) {
			r = vgpu_set_error(h, -ENOMEM, "out of memory");
			goto out;
		}
		h->gpus = ng;
		memset(&h->gpus[h->n_gpus], 0, sizeof(*ng));
		r = scan_gpu(h, &h->gpus[h->n_gpus++], addr, (uint16_t)device);
		if (r < 0)
			goto out;
	}
	/* GPU parents point into h->gpus: fix them up after the last realloc. */
	for (size_t i = 0; i < h->n_gpus; i++)
		for (size_t j = 0; j < h->gpus[i].n_vfs; j++)
			h->gpus[i].vfs[j].gpu = &h->gpus[i];
	for (size_t i = 0; i < h->n_gpus; i++) {
		if (h->gpus[i].numa_node < 0) {
			r = vgpu_host_read_topology(h);
			if (r < 0)
				goto out;
			resolve_numa(h, &h->gpus[i]);
		}
	}
	r = vgpu_scan_instances(h);
	if (r < 0)
		goto out;
	for (size_t i = 0; want_types && i < h->n_gpus; i++) {
		r = vgpu_scan_types(h, &h->gpus[i]);
		if (r < 0)
			goto out;
	}
	h->scanned = true;
	r = 0;
out:
	vgpu_strv_free(ents, n);
	return r;
}

const struct vgpu_gpu *vgpu_host_gpus(const struct vgpu_host *h, size_t *n)
{
	*n = h->n_gpus;
	return h->gpus;
}

const struct vgpu_gpu *vgpu_host_find_gpu(const struct vgpu_host *h, const char *bdf)
{
	char addr[VGPU_BDF_LEN];

	if (vgpu_bdf_normalize(bdf, addr) < 0)
		return NULL;
	for (size_t i = 0; i < h->n_gpus; i++)
		if (strcmp(h->gpus[i].addr, addr) == 0)
			return &h->gpus[i];
	return NULL;
}

const struct vgpu_vf *vgpu_host_find_vf(const struct vgpu_host *h, const char *bdf)
{
	char addr[VGPU_BDF_LEN];

	if (vgpu_bdf_normalize(bdf, addr) < 0)
		return NULL;
	for (size_t i = 0; i < h->n_gpus; i++)
		for (size_t j = 0; j < h->gpus[i].n_vfs; j++)
			if (strcmp(h->gpus[i].vfs[j].addr, addr) == 0)
				return &h->gpus[i].vfs[j];
	return NULL;
}

const char *vgpu_vf_state_str(const struct vgpu_vf *vf)
{
	if (vf->state_unknown)
		return "unknown";
	return vf->in_use ? "in-use" : "free";
}
