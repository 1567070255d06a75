// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * orphans-host.c - the evidence about each vGPU read from the host, and the
 * reaper (see orphans-host.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "diagnose.h"
#include "live.h"
#include "model.h"
#include "nvml.h"
#include "orphans-host.h"
#include "read-host.h"
#include "read-live.h"
#include "release.h"
#include "sysfs-lock.h"
#include "sysfs.h"
#include "vgpus.h"

#define MDEV_DEV "sys/bus/mdev/devices/%s"
#define PCI_DEV "sys/bus/pci/devices/%s"

/* The device files a user of the vGPU holds: its VFIO group and its VFIO cdev. */
struct held_paths {
	char group[64];
	char cdev[96];
};

static void device_paths(const struct vgpu_sysdir *root, const struct vgpu_orow *o,
			 struct held_paths *p)
{
	const char *dir = o->mdev[0] ? MDEV_DEV : PCI_DEV;
	const char *id = o->mdev[0] ? o->mdev : o->parent;
	char rel[VGPU_PATH_MAX], group[32];
	VGPU_AUTOSTRV vdevs = { 0 };

	p->group[0] = p->cdev[0] = '\0';
	snprintf(rel, sizeof(rel), dir, id);
	if (vgpu_sysfs_link_basename(root, group, sizeof(group), "%s/iommu_group", rel) == 0)
		snprintf(p->group, sizeof(p->group), "/dev/vfio/%s", group);
	if (vgpu_sysfs_list_dir(root, &vdevs, "%s/vfio-dev", rel) == 0 && vdevs.n &&
	    strncmp(vdevs.items[0], "vfio", 4) == 0)
		snprintf(p->cdev, sizeof(p->cdev), "/dev/vfio/devices/%.60s", vdevs.items[0]);
}

/*
 * Is proc mounted with hidepid (proc/mounts), so that a user other than root
 * does not see every process?  No such file (a fixture tree): no.
 */
static bool hidepid(const struct vgpu_sysdir *root)
{
	char *text = NULL, *line, *save = NULL;
	size_t len;
	bool hidden = false;

	if (vgpu_sysfs_read_file(root, 1 << 20, &text, &len, "proc/mounts") < 0)
		return false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char dev[64], dir[256], type[32], opts[512];
		const char *h;

		if (sscanf(line, "%63s %255s %31s %511s", dev, dir, type, opts) != 4 ||
		    strcmp(type, "proc") != 0 || strcmp(dir, "/proc") != 0)
			continue;
		h = strstr(opts, "hidepid=");
		hidden = h && strncmp(h + 8, "0", 1) != 0 && strncmp(h + 8, "off", 3) != 0;
	}
	free(text);
	return hidden;
}

/*
 * A link target as a path below the host root: "/dev/vfio/34" as it is, and, under a root
 * other than "/" (where the host's own proc/ is mounted), "ROOT/dev/vfio/34", the path a
 * process that opened the file below the root holds, without ROOT.
 */
static const char *below_root(const char *target, const char *root_abs)
{
	size_t len = strlen(root_abs);

	if (len > 1 && strncmp(target, root_abs, len) == 0 && target[len] == '/')
		return target + len;
	return target;
}

/*
 * Who holds each row's device files open: one pass over ROOT/proc/<pid>/fd.
 * Return: false when some process's open files cannot be read (not root):
 * the absence of a holder is then not known.
 */
static bool find_holders(struct vgpu_sysfs *fs, struct vgpu_orow *rows, size_t n)
{
	VGPU_AUTOSTRV pids = { 0 };
	struct vgpu_sysdir root;
	struct held_paths *paths;
	char root_abs[PATH_MAX];
	bool whole = true;

	if (!realpath(vgpu_sysfs_root(fs), root_abs))
		snprintf(root_abs, sizeof(root_abs), "%s", vgpu_sysfs_root(fs));
	vgpu_sysdir_root(fs, &root);
	if (vgpu_sysfs_list_dir(&root, &pids, "proc") < 0)
		return false;
	/* another user's processes are hidden from us: their absence proves nothing */
	if (geteuid() != 0 && hidepid(&root))
		whole = false;
	paths = vgpu_xcalloc(n ? n : 1, sizeof(*paths));
	for (size_t k = 0; k < n; k++)
		device_paths(&root, &rows[k], &paths[k]);
	for (size_t i = 0; i < pids.n; i++) {
		VGPU_AUTOSTRV fds = { 0 };
		VGPU_AUTOSYSDIR fd_dir = { .fd = -1 };
		const char *pid = pids.items[i];
		int err;

		if (strspn(pid, "0123456789") != strlen(pid))
			continue;
		/* the fd directory opened once: each link is one readlinkat() */
		err = vgpu_sysdir_open_at(&root, &fd_dir, "proc/%s/fd", pid);
		if (err == 0)
			err = vgpu_sysfs_list_dir(&fd_dir, &fds, ".");
		if (err == -EACCES || err == -EPERM)
			whole = false;
		for (size_t j = 0; err == 0 && j < fds.n; j++) {
			char link[PATH_MAX];
			const char *target;

			if (vgpu_sysfs_readlink(&fd_dir, link, sizeof(link), "%s", fds.items[j]) <
			    0)
				continue;
			target = below_root(link, root_abs);
			for (size_t k = 0; k < n; k++)
				if ((paths[k].group[0] && strcmp(target, paths[k].group) == 0) ||
				    (paths[k].cdev[0] && strcmp(target, paths[k].cdev) == 0))
					rows[k].ev.holder = atoi(pid);
		}
	}
	free(paths);
	return whole;
}

/* Seconds since the vGPU was made: its device's (or VF's type file's) newest time. */
static long long age_of(const struct vgpu_sysdir *root, const struct vgpu_orow *o)
{
	struct stat st;
	long long t, now = (long long)time(NULL);
	int err = o->mdev[0] ? vgpu_sysfs_stat(root, &st, MDEV_DEV, o->mdev) :
			       vgpu_sysfs_stat(root, &st, PCI_DEV "/nvidia/current_vgpu_type",
					       o->parent);

	if (err < 0)
		return -1;
	t = st.st_mtime > st.st_ctime ? st.st_mtime : st.st_ctime;
	return now > t ? now - t : 0;
}

/* The wedged marker's name: the mdev UUID or the VF's address. */
static const char *wedged_key(const struct vgpu_orow *o)
{
	return o->mdev[0] ? o->mdev : o->parent;
}

static bool is_wedged(const struct vgpu_sysdir *root, const struct vgpu_orow *o)
{
	struct stat st;

	return vgpu_sysfs_stat(root, &st, VGPU_WEDGED_DIR "/%s", wedged_key(o)) == 0;
}

/*
 * The catalogue's rows (data/catalogue.tsv) whose line says one vGPU is wedged: its
 * teardown never finished, and starting it again fails until the VF or GPU is reset.
 *  - erestartsys-open ("ERESTARTSYS received during open"): a previous open or teardown of
 *    the vGPU never finished, QEMU killed mid-teardown (DualCoder/vgpu_unlock#110);
 *  - rminit-timeout ("RmInitAdapter failed! (0x22:0x65:"): the VF was wedged by a SIGKILL
 *    to QEMU while the vGPU was initialising; its guest driver loops.
 * Not rminit-failed (other codes): a GPU that could not initialise at all, not one vGPU
 * left half torn down; nor start-failed-timeout (a busy manager: the next start may work).
 */
static const char *const wedge_rows[] = { "erestartsys-open", "rminit-timeout" };

/* The kernel log's wedge lines, read once per scan (diagnose's reader), and its latest time. */
struct kern_log {
	struct vgpu_diag d; /* the lines the catalogue knows; only wedge rows are kept */
	long long last; /* the latest time of a line read, 0: none known */
};

/* A clear point: "time SECONDS", the latest time its wedge lines had when cleared. */
#define CLEARED "%s/.cleared-%s" /* VGPU_WEDGED_DIR, the marker's name */

static bool wedge_row(const struct vgpu_cat_row *row)
{
	for (size_t k = 0; k < ARRAY_SIZE(wedge_rows); k++)
		if (!strcmp(row->id, wedge_rows[k]))
			return true;
	return false;
}

/*
 * Read the kernel log once: its wedge lines, whatever vGPU they name (matched per vGPU
 * after).  Without a catalogue there are none (@ctx is warned).
 */
static void kern_log_read(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			  const struct vgpu_catalogue *cat, struct kern_log *lg)
{
	struct vgpu_diag_query q = { .now = (long long)time(NULL) };
	size_t w = 0;

	memset(lg, 0, sizeof(*lg));
	if (!cat) {
		vgpu_warn(ctx, "no message catalogue: the kernel log's wedge lines are not read");
		return;
	}
	vgpu_diag_kernel(fs, cat, &q, &lg->d);
	for (size_t i = 0; i < lg->d.n; i++) {
		struct vgpu_diag_entry *e = &lg->d.v[i];

		if (e->when > lg->last)
			lg->last = e->when;
		if (!wedge_row(e->row)) {
			free(e->text);
			continue;
		}
		lg->d.v[w++] = *e;
	}
	lg->d.n = w;
}

static void kern_log_clear(struct kern_log *lg)
{
	vgpu_diag_clear(&lg->d);
}

/* Does @line name @id: the mdev UUID (any case), or the address whole or without its domain? */
static bool line_names(const char *line, size_t len, const char *id)
{
	const char *short_id = strlen(id) == 12 && id[4] == ':' ? id + 5 : NULL;
	size_t n = strlen(id);

	for (size_t i = 0; i + (short_id ? 7 : n) <= len; i++) {
		if (i + n <= len && strncasecmp(line + i, id, n) == 0)
			return true;
		/* "3b:00.7" not inside a longer hex word ("0000:3b:00.7" was tried above) */
		if (short_id && strncasecmp(line + i, short_id, 7) == 0 &&
		    (i == 0 || !isxdigit((unsigned char)line[i - 1])) &&
		    (i + 7 == len || !isxdigit((unsigned char)line[i + 7])))
			return true;
	}
	return false;
}

/*
 * Does the kernel log have a wedge line that names @o, after the admin last cleared it
 * (a line of no known time does not count then: it cannot be told to be later)?
 */
static bool log_wedged(const struct vgpu_sysdir *root, const struct kern_log *lg,
		       const struct vgpu_orow *o)
{
	const char *id = wedged_key(o);
	bool cleared = false;
	long long from = 0;
	struct stat st;
	char text[64];

	if (!lg->d.n)
		return false;
	if (vgpu_sysfs_read_str(root, text, sizeof(text), CLEARED, VGPU_WEDGED_DIR, id) == 0) {
		cleared = true;
		/* an older vgpuctl's point ("INODE OFFSET"): when it was written */
		if (sscanf(text, "time %lld", &from) != 1 &&
		    vgpu_sysfs_stat(root, &st, CLEARED, VGPU_WEDGED_DIR, id) == 0)
			from = (long long)st.st_mtime;
	}
	for (size_t i = 0; i < lg->d.n; i++) {
		const struct vgpu_diag_entry *e = &lg->d.v[i];

		if (cleared && !(e->when > from))
			continue;
		if (line_names(e->text, strlen(e->text), id))
			return true;
	}
	return false;
}

/* What the domains say about @o. */
static void domain_evidence(struct vgpu_orow *o, const struct vgpu_odom *d, size_t nd)
{
	for (size_t i = 0; i < nd; i++) {
		const struct vgpu_strv *names = o->mdev[0] ? &d[i].mdevs : &d[i].vfs;
		const char *id = o->mdev[0] ? o->mdev : o->parent;
		bool named = false;

		for (size_t j = 0; j < names->n && !named; j++)
			named = strcmp(names->items[j], id) == 0;
		if (!named)
			continue;
		if (o->ev.record && strcmp(d[i].uuid, o->rec.domain_uuid) == 0) {
			o->ev.record_domain_names = true;
		} else {
			o->ev.other_domain_names = true;
			snprintf(o->ev.domain, sizeof(o->ev.domain), "%s", d[i].name);
		}
		if (!o->ev.domain[0])
			snprintf(o->ev.domain, sizeof(o->ev.domain), "%s", d[i].name);
	}
}

/* One row per vGPU on the host, with what the model and the records say. */
static size_t host_rows(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_rows *rows,
			struct vgpu_orow *out)
{
	long long now = (long long)time(NULL);
	size_t n = 0;

	(void)ctx;
	(void)fs;
	for (size_t i = 0; i < rows->n; i++) {
		const struct vgpu_row *r = &rows->v[i];
		struct vgpu_orow *o = &out[n];

		memset(o, 0, sizeof(*o));
		/* a record whose vGPU is there (as recorded, or something else in its place) */
		if (r->rec && (r->state == VGPU_STATE_ACTIVE || r->state == VGPU_STATE_CONFLICT)) {
			o->rec = *r->rec;
			o->ev.record = true;
			o->ev.conflict = r->state == VGPU_STATE_CONFLICT;
			o->ev.incoming = r->rec->state == VGPU_RECORD_INCOMING &&
					 !vgpu_record_expired(r->rec, now);
			snprintf(o->key, sizeof(o->key), "%s", r->key);
			snprintf(o->rec_domain, sizeof(o->rec_domain), "%s", r->rec->domain);
		} else if (r->orphan && r->parent) {
			const struct vgpu_parent *p = r->parent;

			snprintf(o->rec.gpu, sizeof(o->rec.gpu), "%s", vgpu_row_gpu(r));
			snprintf(o->rec.parent, sizeof(o->rec.parent), "%s", p->addr);
			o->rec.iface = p->iface;
			o->rec.type_id = p->current_type;
			snprintf(o->rec.mdev_uuid, sizeof(o->rec.mdev_uuid), "%s",
				 r->orphan->mdev ? r->orphan->mdev : "");
			o->ev.config = r->state == VGPU_STATE_CONFIG;
		} else {
			continue;
		}
		snprintf(o->gpu, sizeof(o->gpu), "%s", o->rec.gpu);
		snprintf(o->parent, sizeof(o->parent), "%s", o->rec.parent);
		snprintf(o->mdev, sizeof(o->mdev), "%s", o->rec.mdev_uuid);
		o->iface = o->rec.iface;
		o->type_id = o->rec.type_id;
		n++;
	}
	return n;
}

/* What a scan is given besides the host: the domains already read, NVML, the grace. */
struct scan_in {
	const struct vgpu_odom *doms;
	size_t nd;
	bool domains; /* they could be read */
	struct vgpu_nvml *nv; /* NULL: no NVML */
	const struct vgpu_catalogue *cat; /* the kernel log's wedge rows; NULL: none */
	long long grace_s;
};

#define NVML_INSTANCES_MAX 64

/*
 * NVML's active vGPU instances on each GPU, tied to the rows: an instance whose VM ID is the
 * UUID of a row's record's domain (and of its type) is that row's; one of a type that only one
 * untied row of its GPU holds is that row's; else every untied row of its type may be its
 * (nvml_maybe: never stale nor an orphan).
 */
static void nvml_evidence(struct vgpu_nvml *nv, struct vgpu_orow *o, size_t k)
{
	for (size_t g = 0; nv && g < k; g++) {
		struct vgpu_nvml_vgpu inst[NVML_INSTANCES_MAX];
		bool seen = false;
		int ni;

		for (size_t j = 0; j < g && !seen; j++)
			seen = strcmp(o[j].gpu, o[g].gpu) == 0;
		if (seen ||
		    (ni = vgpu_nvml_active_vgpus(nv, o[g].gpu, inst, NVML_INSTANCES_MAX)) < 0)
			continue;
		for (size_t i = g; i < k; i++)
			if (strcmp(o[i].gpu, o[g].gpu) == 0)
				o[i].ev.nvml_known = true;
		/* by the record's domain first */
		for (int t = 0; t < ni; t++)
			for (size_t i = g; i < k && inst[t].vm[0]; i++)
				if (strcmp(o[i].gpu, o[g].gpu) == 0 && !o[i].ev.nvml_vm[0] &&
				    o[i].ev.record && inst[t].vm_is_uuid &&
				    strcasecmp(inst[t].vm, o[i].rec.domain_uuid) == 0 &&
				    (!inst[t].type_id || inst[t].type_id == o[i].type_id)) {
					snprintf(o[i].ev.nvml_vm, sizeof(o[i].ev.nvml_vm), "%s",
						 o[i].rec.domain_uuid);
					inst[t].vm[0] = '\0'; /* tied */
				}
		/* then by its type, where only one untied row could hold it */
		for (int t = 0; t < ni; t++) {
			size_t cand = k, n_cand = 0;

			if (!inst[t].vm[0])
				continue;
			for (size_t i = g; i < k; i++)
				if (strcmp(o[i].gpu, o[g].gpu) == 0 && !o[i].ev.nvml_vm[0] &&
				    (!inst[t].type_id || inst[t].type_id == o[i].type_id)) {
					cand = i;
					n_cand++;
				}
			if (n_cand == 1) {
				snprintf(o[cand].ev.nvml_vm, sizeof(o[cand].ev.nvml_vm), "%.36s",
					 inst[t].vm);
				continue;
			}
			for (size_t i = g; i < k; i++)
				if (strcmp(o[i].gpu, o[g].gpu) == 0 && !o[i].ev.nvml_vm[0] &&
				    (!inst[t].type_id || inst[t].type_id == o[i].type_id))
					o[i].ev.nvml_maybe = true;
		}
	}
}

/* The rows of @m and @recs with their evidence. */
static void evidence_rows(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
			  const struct vgpu_records *recs, const struct scan_in *in,
			  struct vgpu_orow **out, size_t *n)
{
	struct vgpu_rows rows = { 0 };
	size_t k;
	struct vgpu_sysdir root;
	struct vgpu_orow *o;
	struct kern_log lg;
	bool holders;

	vgpu_rows_read(ctx, fs, m, recs, NULL, 0, true, &rows);
	o = vgpu_xcalloc(rows.n ? rows.n : 1, sizeof(*o));
	k = host_rows(ctx, fs, &rows, o);
	vgpu_rows_clear(&rows);
	holders = find_holders(fs, o, k);
	vgpu_sysdir_root(fs, &root);
	kern_log_read(ctx, fs, in->cat, &lg);
	nvml_evidence(in->nv, o, k);
	for (size_t i = 0; i < k; i++) {
		o[i].ev.domains_known = in->domains;
		o[i].ev.holders_known = holders;
		o[i].ev.age_s = age_of(&root, &o[i]);
		o[i].ev.wedged_log = log_wedged(&root, &lg, &o[i]);
		o[i].ev.wedged = o[i].ev.wedged_log || is_wedged(&root, &o[i]);
		if (in->domains)
			domain_evidence(&o[i], in->doms, in->nd);
		o[i].cls = vgpu_oclass_of(&o[i].ev, in->grace_s);
	}
	kern_log_clear(&lg);
	*out = o;
	*n = k;
}

/* The host's rows with their evidence. */
static int scan_rows(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct scan_in *in,
		     struct vgpu_orow **out, size_t *n)
{
	VGPU_AUTOPTR(model) m = NULL;
	VGPU_AUTORECORDS recs = { 0 };
	int err = vgpu_host_read(ctx, fs, VGPU_READ_TYPES, &m, &recs);

	if (err < 0)
		return err;
	evidence_rows(ctx, fs, m, &recs, in, out, n);
	return 0;
}

void vgpu_orphans_count(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_model *m,
			const struct vgpu_records *recs, const struct vgpu_catalogue *cat,
			long long count[VGPU_OCLASS_N])
{
	struct vgpu_orow *o = NULL;
	size_t n = 0;

	struct scan_in in = { .cat = cat, .grace_s = VGPU_ORPHAN_GRACE_S };

	memset(count, 0, VGPU_OCLASS_N * sizeof(*count));
	evidence_rows(ctx, fs, m, recs, &in, &o, &n);
	for (size_t i = 0; i < n; i++) {
		const struct vgpu_evidence *e = &o[i].ev;
		enum vgpu_oclass c = o[i].cls;

		/* held for a migration: the domain may have arrived (owned), but either way kept */
		if (c == VGPU_OCLASS_UNKNOWN && e->record && e->incoming && e->holders_known)
			c = VGPU_OCLASS_INCOMING;
		count[c]++;
	}
	free(o);
}

/* The domains from @src (NULL: none): false, with a message in @dctx, when they cannot be. */
static bool read_domains(const struct vgpu_odom_source *src, struct vgpu_ctx *dctx,
			 struct vgpu_odom **doms, size_t *nd)
{
	*doms = NULL;
	*nd = 0;
	return src && src->read(dctx, src->arg, doms, nd) == 0;
}

int vgpu_orphans_scan(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
		      const struct vgpu_odom_source *src, struct vgpu_nvml *nv,
		      const struct vgpu_catalogue *cat, long long grace_s, struct vgpu_orow **out,
		      size_t *n)
{
	struct vgpu_odom *doms;
	struct scan_in in = { .nv = nv, .cat = cat, .grace_s = grace_s };
	struct vgpu_ctx dctx;
	int err;

	/* a domain that cannot be read leaves the domain evidence unknown: fail closed */
	vgpu_ctx_init(&dctx, NULL, NULL);
	in.domains = read_domains(src, &dctx, &doms, &in.nd);
	in.doms = doms;
	if (src && !in.domains)
		vgpu_warn(ctx, "the domains that name vGPUs are not known: %s",
			  vgpu_ctx_error(&dctx));
	vgpu_ctx_clear(&dctx);
	err = scan_rows(ctx, fs, &in, out, n);
	vgpu_odoms_free(doms, in.nd);
	return err;
}

/* VGPU_WEDGED_DIR and the directories above it, where they are not yet. */
static void wedged_dir_make(struct vgpu_sysfs *fs)
{
	static const char *const dirs[] = { "var", "var/lib", "var/lib/vgpuctl", VGPU_WEDGED_DIR };
	char path[VGPU_PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", vgpu_sysfs_root(fs), dirs[i]);
		(void)mkdir(path, 0755);
	}
}

/* Leave a marker: a later plan or assign skips the parent until an admin clears it. */
static void mark_wedged(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_orow *o)
{
	char path[VGPU_PATH_MAX];
	const char *root = vgpu_sysfs_root(fs);
	FILE *f;

	wedged_dir_make(fs);
	snprintf(path, sizeof(path), "%s/%s/%s", root, VGPU_WEDGED_DIR, wedged_key(o));
	f = fopen(path, "we");
	if (!f) {
		vgpu_warn(ctx, "cannot mark %s wedged: %s: %s", wedged_key(o), path,
			  strerror(errno));
		return;
	}
	fprintf(f, "parent=%s\nmdev_uuid=%s\n", o->parent, o->mdev);
	fclose(f);
}

static bool wanted(enum vgpu_oclass c, unsigned what)
{
	return (c == VGPU_OCLASS_ORPHAN && (what & VGPU_REAP_ORPHANS)) ||
	       (c == VGPU_OCLASS_STALE && (what & VGPU_REAP_STALE));
}

/* The vGPU in messages: "mdev UUID on PARENT" or "VF BDF". */
static const char *name_of(const struct vgpu_orow *o, char *buf, size_t len)
{
	if (o->mdev[0])
		snprintf(buf, len, "mdev %s on %s", o->mdev, o->parent);
	else
		snprintf(buf, len, "VF %s", o->parent);
	return buf;
}

/*
 * The record file of @o's vGPU as it is now: 1 and @rec when there, 0 when not, -EBADMSG
 * when it cannot be read (then it is there all the same: it claims the vGPU).
 */
static int record_now(struct vgpu_sysfs *fs, const struct vgpu_orow *o, struct vgpu_record *rec)
{
	char key[VGPU_RECORD_KEY_LEN], *text = NULL;
	struct vgpu_sysdir root;
	struct vgpu_ctx quiet;
	int err;

	vgpu_record_key(&o->rec, key);
	vgpu_sysdir_root(fs, &root);
	err = vgpu_sysfs_read_file(&root, 1 << 16, &text, NULL, VGPU_RECORDS_DIR "/%s", key);
	if (err == -ENOENT)
		return 0;
	vgpu_ctx_init(&quiet, NULL, NULL);
	if (err == 0)
		err = vgpu_record_parse(&quiet, text, key, rec);
	vgpu_ctx_clear(&quiet);
	free(text);
	return err < 0 ? -EBADMSG : 1;
}

/* Two records claim the same vGPU for the same domain, state and type. */
static bool same_claim(const struct vgpu_record *a, const struct vgpu_record *b)
{
	return strcmp(a->domain_uuid, b->domain_uuid) == 0 && a->state == b->state &&
	       a->deadline == b->deadline && a->type_id == b->type_id &&
	       strcmp(a->mdev_uuid, b->mdev_uuid) == 0;
}

/*
 * Collect @o's own evidence again, right before its write: its record file, the vGPU itself,
 * its wedged marker, its age, and the processes holding its device files (every process's
 * open files, matched against its paths only).  The domain evidence is the listing's (no
 * libvirt call under the locks): a domain that starts using it meanwhile opens its device
 * files, which the holders show.  @o->rec is what the free needs.
 * Return: NULL when it may be freed, else why it is left (static text or @why).
 */
static const char *recheck(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_orow *o,
			   unsigned what, long long grace_s, char *why, size_t len)
{
	struct vgpu_record rec;
	struct vgpu_live_state st;
	struct vgpu_sysdir root;
	int r = record_now(fs, o, &rec);

	if (r < 0 || (r == 1) != o->ev.record || (r == 1 && !same_claim(&rec, &o->rec)))
		return "its owner record changed";
	if (vgpu_live_query(ctx, fs, &o->rec, &st) < 0) {
		snprintf(why, len, "%s", vgpu_ctx_error(ctx));
		return why;
	}
	if (!st.exists)
		return "it is gone";
	/* an mdev without a record: the type it holds now is what the free needs */
	if (!o->ev.record && o->mdev[0] && st.type_id)
		o->rec.type_id = st.type_id;
	if (!vgpu_live_as_recorded(&st, &o->rec))
		return "it changed (another type or parent)";
	vgpu_sysdir_root(fs, &root);
	o->ev.wedged = o->ev.wedged || is_wedged(&root, o);
	o->ev.age_s = age_of(&root, o);
	o->ev.holder = 0;
	o->ev.holders_known = find_holders(fs, o, 1);
	if (!o->ev.holders_known)
		return "the processes' open files cannot all be read now";
	o->cls = vgpu_oclass_of(&o->ev, grace_s);
	if (!wanted(o->cls, what)) {
		snprintf(why, len, "it is %s now", vgpu_oclass_str(o->cls));
		return why;
	}
	return NULL;
}

/* Free one candidate, its own evidence collected again first.  1: freed, 0: left, -errno. */
static int reap_one(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct vgpu_orow *cand,
		    unsigned what, long long grace_s, bool dry_run)
{
	struct vgpu_orow now = *cand, *o = &now;
	char nm[VGPU_UUID_LEN + VGPU_BDF_LEN + 16], why[256];
	const char *left = NULL;
	bool freed = false;
	int gpu_fd = -1, err = 0;

	/* the GPU's lock first (the hook's starts take it), then the evidence, then the write */
	if (!dry_run)
		err = vgpu_sysfs_lock_gpu(ctx, fs, cand->gpu, VGPU_ASSIGN_LOCK_WAIT_MS, &gpu_fd);
	if (err < 0)
		goto out;
	left = recheck(ctx, fs, o, what, grace_s, why, sizeof(why));
	if (left) {
		vgpu_log(ctx, LOG_NOTICE, "left %s: %s", name_of(cand, nm, sizeof(nm)), left);
		goto out;
	}
	if (dry_run) {
		vgpu_log(ctx, LOG_NOTICE, "would free %s %s", vgpu_oclass_str(o->cls),
			 name_of(o, nm, sizeof(nm)));
		freed = true;
		goto out;
	}
	err = vgpu_live_destroy(ctx, fs, &o->rec, &freed);
	if ((err == -EBUSY || err == -ESTALE) && !freed) {
		vgpu_log(ctx, LOG_NOTICE, "left %s: %s", name_of(o, nm, sizeof(nm)),
			 vgpu_ctx_error(ctx));
		err = 0;
	} else if (err < 0) {
		mark_wedged(ctx, fs, o);
		vgpu_log(ctx, LOG_ERR, "%s is wedged: %s", name_of(o, nm, sizeof(nm)),
			 vgpu_ctx_error(ctx));
		err = vgpu_error(ctx, -EIO, "%s did not clear; marked wedged",
				 name_of(o, nm, sizeof(nm)));
		freed = false;
	} else {
		if (o->ev.record)
			err = vgpu_record_remove(ctx, fs, o->key);
		if (freed)
			vgpu_log(ctx, LOG_NOTICE, "freed %s %s", vgpu_oclass_str(o->cls),
				 name_of(o, nm, sizeof(nm)));
	}
out:
	if (gpu_fd >= 0)
		close(gpu_fd);
	return err < 0 ? err : freed;
}

/*
 * The vgpu_params notes of the domains in @uuids (sorted here, each once)
 * whose last record went: as release does; a failure is a warning.
 */
static void forget_params(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_strv *uuids)
{
	vgpu_strv_sort(uuids);
	for (size_t i = 0; i < uuids->n; i++) {
		struct vgpu_ctx sub;

		if (i && strcmp(uuids->items[i], uuids->items[i - 1]) == 0)
			continue;
		vgpu_ctx_init(&sub, NULL, NULL);
		if (vgpu_live_params_forget(&sub, fs, uuids->items[i]) < 0)
			vgpu_warn(ctx, "%s", vgpu_ctx_error(&sub));
		vgpu_ctx_clear(&sub);
	}
}

int vgpu_orphans_reap(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
		      const struct vgpu_odom_source *src, struct vgpu_nvml *nv,
		      const struct vgpu_catalogue *cat, unsigned what, long long grace_s,
		      bool dry_run, size_t *freed)
{
	struct vgpu_orow *rows = NULL;
	struct vgpu_odom *doms;
	struct scan_in in = { .nv = nv, .cat = cat, .grace_s = grace_s };
	VGPU_AUTOSTRV gone = { 0 }; /* the domains whose records were removed */
	struct vgpu_ctx dctx;
	size_t n = 0;
	int err, ret = 0;

	*freed = 0;
	/* the domains (libvirt calls), NVML and the whole host's evidence once, before any lock */
	vgpu_ctx_init(&dctx, NULL, NULL);
	in.domains = read_domains(src, &dctx, &doms, &in.nd);
	in.doms = doms;
	if (!in.domains)
		err = vgpu_error(ctx, -EACCES,
				 "the domains that name vGPUs are not known%s%s: nothing freed",
				 src ? ": " : "", src ? vgpu_ctx_error(&dctx) : "");
	else
		err = scan_rows(ctx, fs, &in, &rows, &n);
	vgpu_ctx_clear(&dctx);
	vgpu_odoms_free(doms, in.nd);
	for (size_t i = 0; err == 0 && i < n; i++)
		if (!rows[i].ev.holders_known)
			err = vgpu_error(
				ctx, -EACCES,
				"the processes' open files cannot all be read (not root, or proc mounted with hidepid): nothing freed");
	if (err == 0)
		err = vgpu_sysfs_lock(ctx, fs, VGPU_ASSIGN_LOCK_WAIT_MS);
	if (err < 0) {
		free(rows);
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		struct vgpu_sysdir root;
		char nm[VGPU_UUID_LEN + VGPU_BDF_LEN + 16];
		int r;

		vgpu_sysdir_root(fs, &root);
		/* a wedge line in the kernel log: a marker, so plan and assign skip it too */
		if (rows[i].ev.wedged_log && !dry_run && !is_wedged(&root, &rows[i])) {
			mark_wedged(ctx, fs, &rows[i]);
			vgpu_log(ctx, LOG_NOTICE, "marked %s wedged: the kernel log says so",
				 name_of(&rows[i], nm, sizeof(nm)));
		}
		if (!wanted(rows[i].cls, what))
			continue;
		r = reap_one(ctx, fs, &rows[i], what, grace_s, dry_run);
		if (r > 0)
			(*freed)++;
		else if (r < 0 && !ret)
			ret = r;
		if (r > 0 && !dry_run && rows[i].ev.record && rows[i].rec.domain_uuid[0])
			vgpu_strv_push(&gone, vgpu_xstrdup(rows[i].rec.domain_uuid));
	}
	forget_params(ctx, fs, &gone);
	free(rows);
	vgpu_sysfs_unlock(fs);
	return ret;
}

/*
 * Note the kernel log's latest time for @id (now, or a later line's: a kernel record's time
 * is its boot time's, a second off at most): its wedge lines so far no longer count.
 */
static int note_cleared(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, const struct kern_log *lg,
			const char *id)
{
	long long now = (long long)time(NULL);
	char path[VGPU_PATH_MAX];
	FILE *f;

	wedged_dir_make(fs);
	snprintf(path, sizeof(path), "%s/" CLEARED, vgpu_sysfs_root(fs), VGPU_WEDGED_DIR, id);
	f = fopen(path, "we");
	if (!f)
		return vgpu_error(ctx, -errno, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "time %lld\n", lg->last > now ? lg->last : now);
	if (fclose(f) != 0)
		return vgpu_error(ctx, -EIO, "cannot write %s", path);
	return 0;
}

int vgpu_orphans_clear_wedged(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs,
			      const struct vgpu_catalogue *cat, const char *id)
{
	VGPU_AUTOSTRV names = { 0 }, ids = { 0 };
	char want[VGPU_UUID_LEN], path[VGPU_PATH_MAX];
	struct vgpu_orow o = { 0 };
	struct vgpu_sysdir root;
	struct kern_log lg;
	bool bdf = false;
	int err;

	if (vgpu_uuid_normalize(id, want))
		snprintf(o.mdev, sizeof(o.mdev), "%s", want);
	else if (vgpu_bdf_normalize(id, o.parent) == 0)
		bdf = snprintf(want, sizeof(want), "%s", o.parent) > 0;
	else
		return vgpu_error(ctx, -EINVAL, "'%s' is neither an mdev UUID nor a PCI address",
				  id);
	err = vgpu_sysfs_lock(ctx, fs, VGPU_ASSIGN_LOCK_WAIT_MS);
	if (err < 0)
		return err;
	vgpu_sysdir_root(fs, &root);
	/* the markers that name it: its own, and for an address every mdev's on it */
	(void)vgpu_sysfs_list_dir(&root, &names, VGPU_WEDGED_DIR);
	for (size_t i = 0; i < names.n; i++) {
		const char *nm = names.items[i];
		char text[128] = "", parent[VGPU_BDF_LEN] = "";

		if (nm[0] == '.')
			continue;
		if (bdf &&
		    vgpu_sysfs_read_str(&root, text, sizeof(text), VGPU_WEDGED_DIR "/%s", nm) ==
			    0 &&
		    strncmp(text, "parent=", 7) == 0) {
			text[strcspn(text, "\n")] = '\0';
			(void)vgpu_bdf_normalize(text + 7, parent);
		}
		if (strcasecmp(nm, want) == 0 || (bdf && strcmp(parent, want) == 0))
			vgpu_strv_push(&ids, vgpu_xstrdup(nm));
	}
	kern_log_read(ctx, fs, cat, &lg);
	if (!ids.n && !log_wedged(&root, &lg, &o))
		err = vgpu_error(ctx, -ENOENT, "nothing marks %s wedged", want);
	for (size_t i = 0; err == 0 && i < ids.n; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", vgpu_sysfs_root(fs), VGPU_WEDGED_DIR,
			 ids.items[i]);
		if (unlink(path) < 0)
			err = vgpu_error(ctx, -errno, "cannot clear the wedged marker %s: %s", path,
					 strerror(errno));
		else
			vgpu_log(ctx, LOG_NOTICE, "cleared the wedged marker of %s", ids.items[i]);
		if (err == 0 && strcasecmp(ids.items[i], want) != 0)
			err = note_cleared(ctx, fs, &lg, ids.items[i]);
	}
	if (err == 0)
		err = note_cleared(ctx, fs, &lg, want);
	kern_log_clear(&lg);
	vgpu_sysfs_unlock(fs);
	return err;
}
