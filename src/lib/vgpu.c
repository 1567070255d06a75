// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vGPU types and instances on both host interfaces:
 *  - mdev: <parent>/mdev_supported_types/nvidia-<N>/{name,description,
 *    available_instances,device_api}, instances under sys/bus/mdev/devices;
 *  - vendor VFIO: <VF>/nvidia/{creatable_vgpu_types,current_vgpu_type}.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "vgpu-priv.h"

int vgpu_scan_types(struct vgpu_host *h, struct vgpu_gpu *g);
int vgpu_scan_instances(struct vgpu_host *h);

long vgpu_description_max_instance(const char *desc)
{
	const char *p = desc;

	/* "num_heads=4, frl_config=60, framebuffer=2048M, ..., max_instance=4" */
	while ((p = strstr(p, "max_instance="))) {
		if (p == desc || p[-1] == ' ' || p[-1] == ',' || p[-1] == '\n') {
			char *end;
			long v = strtol(p + 13, &end, 10);

			if (end != p + 13 && v >= 0)
				return v;
			return -1;
		}
		p += 13;
	}
	return -1;
}

/*
 * creatable_vgpu_types: an optional "ID : vGPU Name" header, then "ID : name"
 * lines; tolerate tabs and blank lines, report anything else through bad_line.
 */
int vgpu_parse_creatable(const char *text, unsigned **ids_out, char ***names_out, size_t *n_out,
			 void (*bad_line)(void *data, unsigned lineno, const char *line),
			 void *data)
{
	unsigned *ids = NULL;
	char **names = NULL;
	size_t n = 0;
	unsigned lineno = 0;
	const char *p = text;

	while (*p) {
		size_t l = strcspn(p, "\n");
		char line[512];
		char *s, *colon, *end, *name;
		unsigned long id;

		lineno++;
		if (l >= sizeof(line)) {
			/* reported, never silently cut to a different name */
			snprintf(line, sizeof(line), "%.40s...", p);
			p += l + (p[l] == '\n');
			if (bad_line)
				bad_line(data, lineno, line);
			continue;
		}
		snprintf(line, sizeof(line), "%.*s", (int)l, p);
		p += l + (p[l] == '\n');
		s = vgpu_strip(line);
		if (!*s)
			continue;
		colon = strchr(s, ':');
		if (colon && !isdigit((unsigned char)*s) && lineno == 1)
			continue; /* header: "ID    : vGPU Name" */
		errno = 0;
		id = strtoul(s, &end, 10);
		if (!colon || end == s || errno || id == 0 || id > 0xffffffu ||
		    *vgpu_strip(end) != ':' || end > colon) {
			if (bad_line)
				bad_line(data, lineno, s);
			continue;
		}
		name = vgpu_strip(colon + 1);
		if (!*name) {
			if (bad_line)
				bad_line(data, lineno, s);
			continue;
		}
		{
			unsigned *ni = realloc(ids, (n + 1) * sizeof(*ni));
			char **nn;

			if (!ni)
				goto oom;
			ids = ni;
			nn = realloc(names, (n + 1) * sizeof(*nn));
			if (!nn)
				goto oom;
			names = nn;
			names[n] = strdup(name);
			if (!names[n])
				goto oom;
			ids[n++] = (unsigned)id;
		}
	}
	*ids_out = ids;
	*names_out = names;
	*n_out = n;
	return 0;
oom:
	free(ids);
	vgpu_strv_free(names, n);
	return -ENOMEM;
}

/* Binary search in the sorted catalogue; *pos gets the insertion point. */
static struct vgpu_type *catalog_find(const struct vgpu_gpu *g, unsigned id, size_t *pos)
{
	size_t lo = 0, hi = g->n_types;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->types[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return lo < g->n_types && g->types[lo]->id == id ? g->types[lo] : NULL;
}

const struct vgpu_type *vgpu_gpu_find_type(const struct vgpu_gpu *g, unsigned id)
{
	return catalog_find(g, id, NULL);
}

const struct vgpu_type *vgpu_host_find_type(const struct vgpu_host *h, const struct vgpu_gpu *g,
					    unsigned id)
{
	const struct vgpu_type *t = catalog_find(g, id, NULL);

	for (size_t i = 0; !t && i < h->n_gpus; i++)
		if (h->gpus[i].device_id == g->device_id)
			t = catalog_find(&h->gpus[i], id, NULL);
	return t;
}

static void classify(struct vgpu_host *h, struct vgpu_type *t, const char *where)
{
	char show[1024];

	if (vgpu_type_parse(t->name, &t->info) < 0)
		vgpu_warn(h,
			  "'%s': type name '%s' is outside NVIDIA's naming grammar; "
			  "listed with backing 'unknown'",
			  vgpu_path_show(h, where, show, sizeof(show)), t->name);
}

static struct vgpu_type *catalog_add(struct vgpu_gpu *g, unsigned id, char *name)
{
	struct vgpu_type **nt, *t;
	size_t pos;

	catalog_find(g, id, &pos);
	nt = realloc(g->types, (g->n_types + 1) * sizeof(*nt));
	if (!nt)
		return NULL;
	g->types = nt;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	memmove(&g->types[pos + 1], &g->types[pos], (g->n_types - pos) * sizeof(*nt));
	g->types[pos] = t;
	g->n_types++;
	t->id = id;
	t->name = name;
	t->max_instances = -1;
	return t;
}

static int vf_add_type(struct vgpu_vf *vf, const struct vgpu_type *t, long available)
{
	struct vgpu_parent_type *n = realloc(vf->types, (vf->n_types + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	vf->types = n;
	vf->types[vf->n_types].type = t;
	vf->types[vf->n_types++].available = available;
	return 0;
}

static int parse_mdev_type_dir(const char *dir, unsigned *id)
{
	long v;

	if (strncmp(dir, "nvidia-", 7) != 0 || vgpu_parse_long(dir + 7, &v) < 0 || v <= 0)
		return -EINVAL;
	*id = (unsigned)v;
	return 0;
}

/*
 * A type id names the same type on every VF of a GPU (one driver type
 * table), so name, description and device_api are read once per GPU and
 * only available_instances per parent: that keeps a full listing near three
 * syscalls per (VF, type).
 */
static int scan_mdev_parent(struct vgpu_host *h, struct vgpu_vf *vf)
{
	struct vgpu_gpu *g = vf->gpu;
	char base[128], rel[512], show[1024];
	char **ents = NULL;
	size_t n = 0;
	VGPU_AUTOCLOSE int dfd = -1;
	int r;

	snprintf(base, sizeof(base), "sys/bus/pci/devices/%s/mdev_supported_types", vf->addr);
	r = vgpu_list_dir_at(h, base, &ents, &n, &dfd);
	if (r < 0) {
		vgpu_warn(h, "cannot list '%s': %s", vgpu_path_show(h, base, show, sizeof(show)),
			  strerror(-r));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct vgpu_type *t;
		char buf[1024];
		unsigned id;
		long avail;

		if (parse_mdev_type_dir(ents[i], &id) < 0) {
			snprintf(rel, sizeof(rel), "%s/%s", base, ents[i]);
			vgpu_warn(h, "'%s' is not an NVIDIA type directory (nvidia-<N>); skipped",
				  vgpu_path_show(h, rel, show, sizeof(show)));
			continue;
		}
		t = catalog_find(g, id, NULL);
		if (!t) {
			snprintf(rel, sizeof(rel), "%s/%s/name", base, ents[i]);
			r = vgpu_read_str(h, rel, buf, sizeof(buf));
			if (r < 0 || !*vgpu_strip(buf)) {
				vgpu_warn(h, "cannot read '%s': %s; type skipped",
					  vgpu_path_show(h, rel, show, sizeof(show)),
					  r < 0 ? strerror(-r) : "empty");
				continue;
			}
			t = catalog_add(g, id, vgpu_xstrdup(vgpu_strip(buf)));
			if (!t)
				goto oom;
			classify(h, t, rel);
			snprintf(rel, sizeof(rel), "%s/%s/description", base, ents[i]);
			if (vgpu_read_str(h, rel, buf, sizeof(buf)) == 0) {
				/* descriptions may carry newlines; normalise them */
				for (char *c = buf; *c; c++)
					if (*c == '\n')
						*c = ' ';
				t->description = vgpu_xstrdup(vgpu_strip(buf));
				t->max_instances = vgpu_description_max_instance(t->description);
			}
			snprintf(rel, sizeof(rel), "%s/%s/device_api", base, ents[i]);
			if (vgpu_read_str(h, rel, buf, sizeof(buf)) == 0)
				t->device_api = vgpu_xstrdup(vgpu_strip(buf));
		}
		/* relative to the types directory: a two-component path walk per type */
		snprintf(rel, sizeof(rel), "%s/available_instances", ents[i]);
		r = vgpu_read_str_at(dfd, rel, buf, sizeof(buf));
		if (r == 0)
			r = vgpu_parse_long(buf, &avail);
		if (r < 0 || avail < 0) {
			snprintf(rel, sizeof(rel), "%s/%s/available_instances", base, ents[i]);
			vgpu_warn(h, "cannot read '%s': %s; type skipped",
				  vgpu_path_show(h, rel, show, sizeof(show)),
				  r == -EINVAL || r >= 0 ? "not a count" : strerror(-r));
			continue;
		}
		if (vf_add_type(vf, t, avail) < 0)
			goto oom;
	}
	vgpu_strv_free(ents, n);
	return 0;
oom:
	vgpu_strv_free(ents, n);
	return vgpu_set_error(h, -ENOMEM, "out of memory");
}

struct bad_line_ctx {
	struct vgpu_host *h;
	const char *path;
};

static void creatable_bad_line(void *data, unsigned lineno, const char *line)
{
	struct bad_line_ctx *c = data;
	char show[1024];

	vgpu_warn(c->h, "'%s' line %u: cannot parse '%s'; skipped",
		  vgpu_path_show(c->h, c->path, show, sizeof(show)), lineno, line);
}

struct creatable {
	unsigned *ids;
	char **names;
	size_t n;
};

static int read_vfio_parent(struct vgpu_host *h, struct vgpu_vf *vf, struct creatable *c)
{
	struct vgpu_gpu *g = vf->gpu;
	VGPU_AUTOFREE char *text = NULL;
	char rel[256], show[1024], buf[64];
	long cur;
	int r;

	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/nvidia/current_vgpu_type", vf->addr);
	r = vgpu_read_str(h, rel, buf, sizeof(buf));
	if (r == 0)
		r = vgpu_parse_long(buf, &cur);
	if (r < 0 || cur < 0) {
		vgpu_warn(h, "cannot read '%s': %s; VF state unknown",
			  vgpu_path_show(h, rel, show, sizeof(show)),
			  r == -EINVAL || r == 0 ? "not a type id" : strerror(-r));
		vf->state_unknown = true;
	} else {
		vf->current_type = (unsigned)cur;
		vf->in_use = cur != 0;
	}
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/nvidia/creatable_vgpu_types", vf->addr);
	r = vgpu_read_file(h, rel, &text, NULL);
	if (r < 0) {
		vgpu_warn(h, "cannot read '%s': %s", vgpu_path_show(h, rel, show, sizeof(show)),
			  strerror(-r));
		return 0;
	}
	struct bad_line_ctx ctx = { h, rel };

	r = vgpu_parse_creatable(text, &c->ids, &c->names, &c->n, creatable_bad_line, &ctx);
	if (r < 0)
		return vgpu_set_error(h, r, "out of memory");
	for (size_t i = 0; i < c->n; i++) {
		struct vgpu_type *t = catalog_find(g, c->ids[i], NULL);

		if (t)
			continue;
		t = catalog_add(g, c->ids[i], c->names[i]);
		if (!t)
			return vgpu_set_error(h, -ENOMEM, "out of memory");
		c->names[i] = NULL; /* moved into the catalogue */
		classify(h, t, rel);
	}
	return 0;
}

/*
 * creatable_vgpu_types is capacity-dependent, not a catalogue: the GPU's
 * catalogue is the union over its VFs, and a VF offers a type now (1) when
 * its own list names it, else 0.
 */
static int scan_vfio_gpu(struct vgpu_host *h, struct vgpu_gpu *g)
{
	struct creatable *cs = calloc(g->n_vfs ? g->n_vfs : 1, sizeof(*cs));
	int r = 0;

	if (!cs)
		return vgpu_set_error(h, -ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_vfs && r == 0; i++)
		if (g->vfs[i].iface == VGPU_IFACE_VENDOR_VFIO)
			r = read_vfio_parent(h, &g->vfs[i], &cs[i]);
	for (size_t i = 0; i < g->n_vfs && r == 0; i++) {
		struct vgpu_vf *vf = &g->vfs[i];

		if (vf->iface != VGPU_IFACE_VENDOR_VFIO)
			continue;
		for (size_t k = 0; k < g->n_types && r == 0; k++) {
			long avail = 0;

			for (size_t j = 0; j < cs[i].n; j++)
				if (cs[i].ids[j] == g->types[k]->id)
					avail = 1;
			r = vf_add_type(vf, g->types[k], avail);
		}
	}
	for (size_t i = 0; i < g->n_vfs; i++) {
		free(cs[i].ids);
		vgpu_strv_free(cs[i].names, cs[i].n);
	}
	free(cs);
	return r < 0 ? vgpu_set_error(h, r, "out of memory") : 0;
}

int vgpu_scan_types(struct vgpu_host *h, struct vgpu_gpu *g)
{
	int r = 0;

	if (g->iface == VGPU_IFACE_VENDOR_VFIO)
		return scan_vfio_gpu(h, g);
	for (size_t i = 0; i < g->n_vfs && r == 0; i++)
		if (g->vfs[i].iface == VGPU_IFACE_MDEV)
			r = scan_mdev_parent(h, &g->vfs[i]);
	return r;
}

static struct vgpu_vf *find_parent(struct vgpu_host *h, const char *addr)
{
	for (size_t i = 0; i < h->n_gpus; i++)
		for (size_t j = 0; j < h->gpus[i].n_vfs; j++)
			if (strcmp(h->gpus[i].vfs[j].addr, addr) == 0)
				return &h->gpus[i].vfs[j];
	return NULL;
}

/*
 * mdev instances: sys/bus/mdev/devices/<UUID> -> .../<parent BDF>/<UUID>,
 * with mdev_type -> ../mdev_supported_types/nvidia-<N>.
 */
int vgpu_scan_instances(struct vgpu_host *h)
{
	char **ents = NULL;
	size_t n = 0;
	bool any_mdev = false;
	int r;

	for (size_t i = 0; i < h->n_gpus; i++)
		any_mdev |= h->gpus[i].iface == VGPU_IFACE_MDEV;
	if (!any_mdev)
		return 0;
	r = vgpu_list_dir(h, "sys/bus/mdev/devices", &ents, &n);
	if (r < 0)
		return 0; /* no mdev bus: no instances */
	for (size_t i = 0; i < n; i++) {
		char rel[256], target[1024], base[64], show[1024];
		char *slash;
		struct vgpu_vf *vf;
		char **nu;
		unsigned id = 0;

		snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s", ents[i]);
		if (vgpu_readlink(h, rel, target, sizeof(target)) < 0)
			continue;
		slash = strrchr(target, '/');
		if (!slash)
			continue;
		*slash = '\0';
		slash = strrchr(target, '/');
		vf = find_parent(h, slash ? slash + 1 : target);
		if (!vf)
			continue; /* an mdev of another vendor's parent */
		snprintf(rel, sizeof(rel), "sys/bus/mdev/devices/%s/mdev_type", ents[i]);
		if (vgpu_link_basename(h, rel, base, sizeof(base)) < 0 ||
		    parse_mdev_type_dir(base, &id) < 0)
			vgpu_warn(h, "cannot read link '%s'; type of mdev %s unknown",
				  vgpu_path_show(h, rel, show, sizeof(show)), ents[i]);
		nu = realloc(vf->mdev_uuids, (vf->n_mdev + 1) * sizeof(*nu));
		if (!nu) {
			vgpu_strv_free(ents, n);
			return vgpu_set_error(h, -ENOMEM, "out of memory");
		}
		vf->mdev_uuids = nu;
		vf->mdev_uuids[vf->n_mdev++] = vgpu_xstrdup(ents[i]);
		vf->in_use = true;
		if (!vf->current_type)
			vf->current_type = id;
	}
	vgpu_strv_free(ents, n);
	return 0;
}
