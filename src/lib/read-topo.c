// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NUMA and CPU topology: nodes with their CPUs, memory and 1 GiB hugepages
 * (sys/devices/system/node) and thread-sibling sets
 * (sys/devices/system/cpu/cpu<N>/topology).
 *
 * Real machines differ (util-linux's and hwloc's dumps): old kernels lack
 * cpu/online and node/online, some list node CPUs only as a cpumap mask or
 * siblings only as a thread_siblings mask.  Each fact is taken from the
 * first file that has it; a damaged file is named in a warning.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "read-priv.h"
#include "read-topo.h"

#define NODE_DIR "sys/devices/system/node"
#define CPU_DIR "sys/devices/system/cpu"

/* A number ending in digits only: "node12" -> 12, "cpu7" -> 7. */
static int numbered(const char *name, const char *prefix)
{
	size_t l = strlen(prefix);
	long v;

	if (strncmp(name, prefix, l) != 0 || !isdigit((unsigned char)name[l]) ||
	    vgpu_parse_long(name + l, &v) < 0 || v < 0 || v >= VGPU_MAX_CPUS)
		return -1;
	return (int)v;
}

/*
 * A non-empty cpulist from @rel: true when it has one.  Absent is silent (old
 * kernels lack cpu/online and node/online); damaged or empty is named.
 */
static bool read_list_or_warn(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root, const char *rel,
			      struct vgpu_cpuset *out)
{
	int r = vgpu_sysfs_read_cpulist(root, out, "%s", rel);

	if (r == 0 && !vgpu_cpuset_empty(out))
		return true;
	if (r != -ENOENT)
		vgpu_warn_file_why(ctx, root, rel, r ? vgpu_strerror(r) : "empty", NULL);
	return false;
}

/* Online CPUs: cpu/online, else cpu/present, else the cpu<N> directories. */
static int read_online(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root,
		       struct vgpu_cpuset *online)
{
	VGPU_AUTOSTRV ents = { 0 };
	char show[VGPU_SHOW_LEN];
	int r;

	if (read_list_or_warn(ctx, root, CPU_DIR "/online", online) ||
	    read_list_or_warn(ctx, root, CPU_DIR "/present", online))
		return 0;
	r = vgpu_sysfs_list_dir(root, &ents, CPU_DIR);
	if (r < 0)
		return vgpu_error(ctx, r, "cannot list '%s': %s", VGPU_SHOW(root, CPU_DIR, show),
				  vgpu_strerror(r));
	vgpu_cpuset_zero(online);
	for (size_t i = 0; i < ents.n; i++) {
		int c = numbered(ents.items[i], "cpu");
		char rel[64];
		long on = 1;

		if (c < 0)
			continue;
		/* cpuN/online exists only for hot-pluggable CPUs: absent means online */
		snprintf(rel, sizeof(rel), CPU_DIR "/cpu%d/online", c);
		r = vgpu_sysfs_read_long(root, &on, 0, 1, "%s", rel);
		if (r < 0 && r != -ENOENT)
			vgpu_warn_file(ctx, root, rel, r, "; CPU taken as online");
		if (on)
			vgpu_cpuset_set(online, (unsigned)c);
	}
	if (vgpu_cpuset_empty(online))
		return vgpu_error(ctx, -ENOENT, "no CPUs found below '%s'",
				  VGPU_SHOW(root, CPU_DIR, show));
	return 0;
}

/* Node ids: node/online, else the node<N> directories, else one node 0 (no NUMA). */
static int read_node_ids(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root,
			 struct vgpu_cpuset *ids, bool *numa)
{
	VGPU_AUTOSTRV ents = { 0 };
	char show[VGPU_SHOW_LEN];
	int r;

	*numa = true;
	if (read_list_or_warn(ctx, root, NODE_DIR "/online", ids))
		return 0;
	vgpu_cpuset_zero(ids);
	r = vgpu_sysfs_list_dir(root, &ents, NODE_DIR);
	if (r < 0 && r != -ENOENT)
		return vgpu_error(ctx, r, "cannot list '%s': %s", VGPU_SHOW(root, NODE_DIR, show),
				  vgpu_strerror(r));
	for (size_t i = 0; i < ents.n; i++) {
		int n = numbered(ents.items[i], "node");

		if (n >= 0 && n <= VGPU_MAX_NUMA_NODE)
			vgpu_cpuset_set(ids, (unsigned)n);
	}
	if (vgpu_cpuset_empty(ids)) {
		/* kernels without NUMA: one implicit node holding every CPU */
		vgpu_cpuset_set(ids, 0);
		*numa = false;
	}
	return 0;
}

/* "Node 0 MemTotal:       263856484 kB": 0 when unknown (warned). */
static uint64_t read_memtotal(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root, int node)
{
	VGPU_AUTOFREE char *text = NULL;
	char rel[64];
	const char *p;
	char *end;
	unsigned long long v;
	int r;

	snprintf(rel, sizeof(rel), NODE_DIR "/node%d/meminfo", node);
	r = vgpu_sysfs_read_file(root, 1 << 16, &text, NULL, "%s", rel);
	if (r < 0) {
		vgpu_warn_file(ctx, root, rel, r, NULL);
		return 0;
	}
	p = strstr(text, "MemTotal:");
	if (!p) {
		vgpu_warn_file_why(ctx, root, rel, "no MemTotal line", NULL);
		return 0;
	}
	p += 9;
	while (*p == ' ' || *p == '\t')
		p++;
	errno = 0;
	v = isdigit((unsigned char)*p) ? strtoull(p, &end, 10) : 0;
	if (!isdigit((unsigned char)*p) || errno || v > VGPU_MAX_MEM_KIB ||
	    strncmp(vgpu_strip(end), "kB", 2) != 0) {
		vgpu_warn_file_why(ctx, root, rel, "MemTotal is not a size in kB", NULL);
		return 0;
	}
	return v;
}

static long read_hugepages(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root, int node,
			   const char *what)
{
	char rel[128];
	long v;
	int r;

	snprintf(rel, sizeof(rel), NODE_DIR "/node%d/hugepages/hugepages-1048576kB/%s", node, what);
	r = vgpu_sysfs_read_long(root, &v, 0, VGPU_MAX_HUGEPAGES, "%s", rel);
	if (r == 0)
		return v;
	if (r != -ENOENT) /* absent: no 1 GiB page support */
		vgpu_warn_file(ctx, root, rel, r, NULL);
	return -1;
}

/* A node's CPUs: nodeN/cpulist, else nodeN/cpumap. */
static int read_node_cpus(const struct vgpu_sysdir *root, int node, struct vgpu_cpuset *cpus,
			  const char **file)
{
	int r = vgpu_sysfs_read_cpulist(root, cpus, NODE_DIR "/node%d/cpulist", node);

	*file = "cpulist";
	if (r == -ENOENT) {
		int m = vgpu_sysfs_read_cpumask(root, cpus, NODE_DIR "/node%d/cpumap", node);

		if (m != -ENOENT) {
			*file = "cpumap";
			r = m;
		}
	}
	return r;
}

static int read_nodes(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root, struct vgpu_topology *t)
{
	struct vgpu_cpuset ids, seen;
	bool numa;
	int r = read_node_ids(ctx, root, &ids, &numa);

	if (r < 0)
		return r;
	t->nodes = vgpu_xcalloc(vgpu_cpuset_count(&ids), sizeof(*t->nodes));
	vgpu_cpuset_zero(&seen);
	for (int c = vgpu_cpuset_next(&ids, 0); c >= 0;
	     c = vgpu_cpuset_next(&ids, (unsigned)c + 1)) {
		struct vgpu_node *n = &t->nodes[t->n_nodes++];
		const char *file = "cpulist";
		char rel[64], show[VGPU_SHOW_LEN];

		n->id = c;
		r = numa ? read_node_cpus(root, c, &n->cpus, &file) : -ENOENT;
		snprintf(rel, sizeof(rel), NODE_DIR "/node%d/%s", c, file);
		if (r == -ENOENT && vgpu_cpuset_count(&ids) == 1) {
			n->cpus = t->online;
		} else if (r < 0) {
			vgpu_warn_file(ctx, root, rel, r, NULL);
			vgpu_cpuset_zero(&n->cpus);
		}
		vgpu_cpuset_and(&n->cpus, &t->online);
		if (vgpu_cpuset_intersects(&n->cpus, &seen)) {
			vgpu_warn(
				ctx,
				"'%s' lists CPUs an earlier node already has; they stay with that node",
				VGPU_SHOW(root, rel, show));
			vgpu_cpuset_andnot(&n->cpus, &seen);
		}
		vgpu_cpuset_or(&seen, &n->cpus);
		n->mem_total_kib = numa ? read_memtotal(ctx, root, c) : 0;
		n->hugepages_1g_total = read_hugepages(ctx, root, c, "nr_hugepages");
		n->hugepages_1g_free = read_hugepages(ctx, root, c, "free_hugepages");
	}
	return 0;
}

/* A CPU's thread siblings: thread_siblings_list, else the thread_siblings mask. */
static int read_siblings(const struct vgpu_sysdir *root, int c, struct vgpu_cpuset *sib, char *rel,
			 size_t len)
{
	int r;

	snprintf(rel, len, CPU_DIR "/cpu%d/topology/thread_siblings_list", c);
	r = vgpu_sysfs_read_cpulist(root, sib, "%s", rel);
	if (r == -ENOENT) {
		char mrel[128];
		int m;

		snprintf(mrel, sizeof(mrel), CPU_DIR "/cpu%d/topology/thread_siblings", c);
		m = vgpu_sysfs_read_cpumask(root, sib, "%s", mrel);
		if (m != -ENOENT) {
			snprintf(rel, len, "%s", mrel);
			r = m;
		}
	}
	return r;
}

/* core_of[cpu] = the lowest online CPU of its thread-sibling set; next_thread links them. */
static void read_cores(struct vgpu_ctx *ctx, const struct vgpu_sysdir *root,
		       struct vgpu_topology *t)
{
	for (int c = vgpu_cpuset_next(&t->online, 0); c >= 0;
	     c = vgpu_cpuset_next(&t->online, (unsigned)c + 1))
		t->n_cpus = (unsigned)c + 1;
	t->core_of = vgpu_xmalloc((t->n_cpus ? t->n_cpus : 1) * sizeof(*t->core_of));
	for (unsigned i = 0; i < t->n_cpus; i++)
		t->core_of[i] = -1;
	for (int c = vgpu_cpuset_next(&t->online, 0); c >= 0;
	     c = vgpu_cpuset_next(&t->online, (unsigned)c + 1)) {
		struct vgpu_cpuset sib;
		char rel[128], show[VGPU_SHOW_LEN];
		int r, first;

		if (t->core_of[c] >= 0)
			continue; /* already placed with an earlier sibling */
		r = read_siblings(root, c, &sib, rel, sizeof(rel));
		if (r < 0 || !vgpu_cpuset_has(&sib, (unsigned)c)) {
			if (r != -ENOENT)
				vgpu_warn(ctx,
					  "cannot read '%s': %s; CPU %d treated as its own core",
					  VGPU_SHOW(root, rel, show),
					  r < 0 ? vgpu_strerror(r) : "does not list the CPU itself",
					  c);
			vgpu_cpuset_zero(&sib);
			vgpu_cpuset_set(&sib, (unsigned)c);
		}
		vgpu_cpuset_and(&sib, &t->online);
		first = vgpu_cpuset_next(&sib, 0);
		for (int s = first; s >= 0; s = vgpu_cpuset_next(&sib, (unsigned)s + 1))
			if ((unsigned)s < t->n_cpus && t->core_of[s] < 0)
				t->core_of[s] = first;
	}
}

int vgpu_model_read_topology(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_topology *out)
{
	struct vgpu_topology t = { 0 };
	struct vgpu_sysdir root;
	int r;

	vgpu_sysdir_root(fs, &root);
	r = read_online(ctx, &root, &t.online);
	if (r == 0)
		r = read_nodes(ctx, &root, &t);
	if (r < 0) {
		vgpu_topology_clear(&t);
		return r;
	}
	read_cores(ctx, &root, &t);
	vgpu_topology_clear(out);
	*out = t;
	return 0;
}
