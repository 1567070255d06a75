// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NUMA and CPU topology: online nodes with their CPUs, memory and 1 GiB
 * hugepages (sys/devices/system/node), and thread-sibling sets
 * (sys/devices/system/cpu/cpu<N>/topology/thread_siblings_list).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "vgpu-priv.h"

void vgpu_topology_clear(struct vgpu_topology *t)
{
	free(t->nodes);
	free(t->core_of);
	memset(t, 0, sizeof(*t));
}

static uint64_t read_memtotal(struct vgpu_host *h, int node)
{
	VGPU_AUTOFREE char *text = NULL;
	char rel[128];
	const char *p;

	snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/meminfo", node);
	if (vgpu_read_file(h, rel, &text, NULL) < 0)
		return 0;
	/* "Node 0 MemTotal:       263856484 kB" */
	p = strstr(text, "MemTotal:");
	return p ? strtoull(p + 9, NULL, 10) : 0;
}

static long read_hugepages(struct vgpu_host *h, int node, const char *what)
{
	char rel[160];
	long v;

	snprintf(rel, sizeof(rel),
		 "sys/devices/system/node/node%d/hugepages/hugepages-1048576kB/%s", node, what);
	return vgpu_read_long(h, rel, &v) == 0 ? v : -1;
}

int vgpu_host_read_topology(struct vgpu_host *h)
{
	struct vgpu_topology t;
	struct vgpu_cpuset nodes;
	char show[1024];
	int r, c;

	if (h->have_topo)
		return 0;
	memset(&t, 0, sizeof(t));
	r = vgpu_read_cpulist(h, "sys/devices/system/node/online", &nodes);
	if (r == -ENOENT) {
		/* kernels without NUMA: one implicit node holding every CPU */
		vgpu_cpuset_zero(&nodes);
		vgpu_cpuset_set(&nodes, 0);
	} else if (r < 0) {
		return vgpu_set_error(h, r, "cannot read '%s': %s",
				      vgpu_path_show(h, "sys/devices/system/node/online", show,
						     sizeof(show)),
				      strerror(-r));
	}
	r = vgpu_read_cpulist(h, "sys/devices/system/cpu/online", &t.online);
	if (r < 0)
		r = vgpu_read_cpulist(h, "sys/devices/system/cpu/present", &t.online);
	if (r < 0)
		return vgpu_set_error(h, r, "cannot read '%s': %s",
				      vgpu_path_show(h, "sys/devices/system/cpu/online", show,
						     sizeof(show)),
				      strerror(-r));
	t.nodes = calloc(vgpu_cpuset_count(&nodes), sizeof(*t.nodes));
	if (!t.nodes)
		return vgpu_set_error(h, -ENOMEM, "out of memory");
	for (c = vgpu_cpuset_next(&nodes, 0); c >= 0;
	     c = vgpu_cpuset_next(&nodes, (unsigned)c + 1)) {
		struct vgpu_node *n = &t.nodes[t.n_nodes++];
		char rel[128];

		n->id = c;
		snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/cpulist", c);
		r = vgpu_read_cpulist(h, rel, &n->cpus);
		if (r == -ENOENT && vgpu_cpuset_count(&nodes) == 1) {
			n->cpus = t.online;
		} else if (r < 0) {
			vgpu_warn(h, "cannot read '%s': %s",
				  vgpu_path_show(h, rel, show, sizeof(show)), strerror(-r));
			vgpu_cpuset_zero(&n->cpus);
		}
		vgpu_cpuset_and(&n->cpus, &t.online);
		n->mem_total_kib = read_memtotal(h, c);
		n->hugepages_1g_total = read_hugepages(h, c, "nr_hugepages");
		n->hugepages_1g_free = read_hugepages(h, c, "free_hugepages");
	}
	/* thread siblings: map each CPU to the lowest CPU of its core */
	for (c = vgpu_cpuset_next(&t.online, 0); c >= 0;
	     c = vgpu_cpuset_next(&t.online, (unsigned)c + 1))
		t.n_cpus = (unsigned)c + 1;
	t.core_of = malloc((t.n_cpus ? t.n_cpus : 1) * sizeof(*t.core_of));
	if (!t.core_of) {
		vgpu_topology_clear(&t);
		return vgpu_set_error(h, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < t.n_cpus; i++)
		t.core_of[i] = -1;
	for (c = vgpu_cpuset_next(&t.online, 0); c >= 0;
	     c = vgpu_cpuset_next(&t.online, (unsigned)c + 1)) {
		struct vgpu_cpuset sib;
		char rel[128];
		int first;

		if (t.core_of[c] >= 0)
			continue; /* already placed with an earlier sibling */
		snprintf(rel, sizeof(rel),
			 "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		r = vgpu_read_cpulist(h, rel, &sib);
		if (r < 0 || !vgpu_cpuset_has(&sib, (unsigned)c)) {
			if (r != -ENOENT)
				vgpu_warn(h, "cannot read '%s': %s; CPU %d treated as its own core",
					  vgpu_path_show(h, rel, show, sizeof(show)),
					  r < 0 ? strerror(-r) : "does not list the CPU itself", c);
			vgpu_cpuset_zero(&sib);
			vgpu_cpuset_set(&sib, (unsigned)c);
		}
		vgpu_cpuset_and(&sib, &t.online);
		first = vgpu_cpuset_next(&sib, 0);
		for (int s = first; s >= 0; s = vgpu_cpuset_next(&sib, (unsigned)s + 1))
			if ((unsigned)s < t.n_cpus && t.core_of[s] < 0)
				t.core_of[s] = first;
	}
	h->topo = t;
	h->have_topo = true;
	return 0;
}

const struct vgpu_topology *vgpu_host_topology(const struct vgpu_host *h)
{
	return h->have_topo ? &h->topo : NULL;
}

void vgpu_topology_core_cpus(const struct vgpu_topology *t, int core, struct vgpu_cpuset *out)
{
	vgpu_cpuset_zero(out);
	for (unsigned s = (unsigned)core; s < t->n_cpus; s++)
		if (t->core_of[s] == core)
			vgpu_cpuset_set(out, s);
}

const struct vgpu_node *vgpu_topology_node(const struct vgpu_topology *t, int id)
{
	for (size_t i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].id == id)
			return &t->nodes[i];
	return NULL;
}
