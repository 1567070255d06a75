// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl hook DOMAIN OPERATION SUB-OPERATION EXTRA: the libvirt qemu hook
 * (/etc/libvirt/hooks/qemu.d/50-vgpuctl, a link to vgpuctl); the part that
 * runs once cmd_hook() (hook-filter.c, no libxml2) found records for the domain.
 *
 * prepare begin: every vGPU the owner records give this domain exists with
 * its type, created where missing (after a reboot, or --per-start).
 * release end: --per-start vGPUs are freed; the others stay until release.
 * Anything else, or a domain without records: exit 0 at once, reading
 * nothing.  Never calls libvirt (the daemon waits for us: a deadlock),
 * never writes to stdout (libvirt parses it for migrate/restore), and the
 * domain XML on stdin is untrusted (size cap, no entities, no network).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "cmd-xml.h"
#include "live.h"
#include "txn.h"
#include "records.h"

/* a hook waiting here holds up a VM start: wait less than assign does */
#define HOOK_LOCK_WAIT_MS 10000

struct hook {
	struct cli *c;
	const char *domain, *op;
	char uuid[VGPU_UUID_LEN];
	struct vgpu_records recs;
	struct vgpu_txn txn;
	struct vgpu_strv created; /* record keys of the vGPUs this prepare created */
};

/*
 * A start that fails after prepare ends in release without started (the
 * daemon calls stopped and release on every failure path).  prepare notes
 * what it created in run/vgpuctl/prepared/DOMAIN; started drops the note;
 * a release that finds it frees exactly those vGPUs.  run/ is empty after
 * a reboot, as the vGPUs are.
 */
#define PREPARED_DIR CLI_PREPARED_DIR

/* Errors and warnings: stderr (libvirt shows it to whoever started the VM) and syslog. */
static void hook_log(void *data, int priority, const char *msg)
{
	struct cli *c = data;

	syslog(priority, "%s", msg);
	if (priority <= LOG_WARNING)
		fprintf(c->err, "vgpuctl: warning: %s\n", msg);
}

static int hook_fail(struct hook *h)
{
	const char *msg = vgpu_ctx_error(&h->c->ctx);

	syslog(LOG_ERR, "%s %s: %s", h->op, h->domain, msg);
	cli_error(h->c, "%s %s: %s", h->op, h->domain, msg);
	return EXIT_FAILURE;
}

/* The domain's UUID from the XML on stdin: bounded read, hardened parser. */
static int read_stdin_uuid(struct hook *h)
{
	struct vgpu_ctx *ctx = &h->c->ctx;
	size_t cap = VGPU_XML_MAX_SIZE + 1, len = 0;
	VGPU_AUTOFREE char *buf = vgpu_xmalloc(cap);
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	VGPU_AUTOFREE char *uuid = NULL;

	while (len < cap) {
		ssize_t n = read(STDIN_FILENO, buf + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return vgpu_error(ctx, -errno, "cannot read the domain XML on stdin: %s",
					  strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (vgpu_domain_parse(ctx, buf, len, "the domain XML on stdin", &doc) < 0)
		return -EINVAL;
	uuid = vgpu_domain_field(doc, "uuid");
	if (!uuid || !vgpu_uuid_normalize(uuid, h->uuid))
		return vgpu_error(ctx, -EINVAL, "the domain XML on stdin has no usable <uuid>");
	return 0;
}

static bool owned(const struct hook *h, const struct vgpu_record *r)
{
	return strcmp(r->domain_uuid, h->uuid) == 0;
}

/*
 * mdev: the hostdev names only the UUID, so when the recorded parent is
 * taken by someone else the vGPU may move to another free parent of the
 * same GPU that offers the type; the record follows.  NULL when none.
 */
static const struct vgpu_parent *other_parent(const struct vgpu_model *m,
					      const struct vgpu_record *r)
{
	const struct vgpu_gpu *g = vgpu_model_find_gpu(m, r->gpu);

	for (size_t i = 0; g && i < g->n_parents; i++) {
		const struct vgpu_parent *p = &g->parents[i];

		if (p->in_use || p->n_reserved || p->state_unknown || p->index < 0)
			continue;
		for (size_t k = 0; k < p->n_types; k++)
			if (p->types[k].type->id == r->type_id && p->types[k].available > 0)
				return p;
	}
	return NULL;
}

/* The recorded parent holds a vGPU that is not this one: move, or say who holds it. */
static int relocate_mdev(struct hook *h, const struct vgpu_record *r)
{
	struct cli *c = h->c;
	const struct vgpu_parent *p;
	struct vgpu_record moved;
	int e;

	e = cli_read_host(c, VGPU_READ_TYPES);
	if (e)
		return vgpu_error(&c->ctx, -EIO, "cannot read the host to move mdev %s",
				  r->mdev_uuid);
	p = other_parent(c->model, r);
	if (!p)
		return vgpu_error(&c->ctx, -EBUSY,
				  "%s (mdev %s): parent %s is taken and no other VF of GPU %s "
				  "offers type %u now",
				  r->profile, r->mdev_uuid, r->parent, r->gpu, r->type_id);
	moved = *r;
	snprintf(moved.parent, sizeof(moved.parent), "%s", p->addr);
	e = vgpu_txn_record_drop(&h->txn, r);
	if (e == 0)
		e = vgpu_txn_record_put(&h->txn, &moved, NULL);
	if (e == 0)
		e = vgpu_txn_create(&h->txn, &moved);
	if (e == 0) {
		char key[VGPU_RECORD_KEY_LEN];

		vgpu_record_key(&moved, key);
		vgpu_strv_push(&h->created, vgpu_xstrdup(key));
		vgpu_log(&c->ctx, LOG_NOTICE, "mdev %s of '%s' moved from %s to %s", r->mdev_uuid,
			 h->domain, r->parent, p->addr);
	}
	return e;
}

/* Who holds @parent, for the message: another domain's record, or nobody we know. */
static int held_by_other(struct hook *h, const struct vgpu_record *r)
{
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *o = &h->recs.v[i];

		if (!owned(h, o) && strcmp(o->parent, r->parent) == 0)
			return vgpu_error(&h->c->ctx, -EBUSY,
					  "VF %s of %s is held by domain '%s' (%s)", r->parent,
					  r->profile, o->domain, o->domain_uuid);
	}
	return 0;
}

static int prepare_one(struct hook *h, const struct vgpu_record *r)
{
	struct vgpu_ctx *ctx = &h->c->ctx;
	struct vgpu_live_state st;
	char key[VGPU_RECORD_KEY_LEN];
	int e;

	e = vgpu_live_query(ctx, h->c->fs, r, &st);
	if (e < 0)
		return e;
	if (vgpu_live_as_recorded(&st, r))
		return 0; /* there already: the normal case */
	e = held_by_other(h, r);
	if (e < 0 && r->iface == VGPU_IFACE_MDEV)
		return relocate_mdev(h, r);
	if (e < 0)
		return e;
	e = vgpu_txn_create(&h->txn, r);
	if (e == 0) {
		vgpu_record_key(r, key);
		vgpu_strv_push(&h->created, vgpu_xstrdup(key));
		return 0;
	}
	/* the parent cannot take it (a vGPU nobody recorded is there): an mdev may move */
	if (r->iface == VGPU_IFACE_MDEV && (e == -EIO || e == -EUSERS || e == -EBUSY))
		return relocate_mdev(h, r);
	if (e == -EBUSY || e == -EPERM) /* vendor VFIO names the VF in the hostdev: no move */
		vgpu_error_append(ctx, "the domain cannot start");
	return e;
}

/* The note of what prepare created; its undo removes it again. */
static int undo_note(struct vgpu_ctx *ctx, void *data)
{
	struct hook *h = *(struct hook **)data;
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	int e = vgpu_sysdir_open(h->c->fs, &d, PREPARED_DIR);

	if (e == 0)
		e = vgpu_sysfs_unlink(&d, h->domain);
	if (e < 0 && e != -ENOENT)
		return vgpu_error(ctx, e, "cannot remove %s/%s: %s", PREPARED_DIR, h->domain,
				  vgpu_strerror(e));
	return 0;
}

static int write_note(struct hook *h)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *text = NULL;
	struct hook **data;
	int e;

	if (!h->created.n)
		return 0;
	for (size_t i = 0; i < h->created.n; i++)
		vgpu_append(&text, "%s\n", h->created.items[i]);
	e = vgpu_sysfs_mkdirs(h->c->fs, &d, PREPARED_DIR);
	if (e == 0)
		e = vgpu_sysfs_replace(&d, h->domain, text, strlen(text));
	if (e < 0)
		return vgpu_error(&h->c->ctx, e, "cannot write %s/%s: %s", PREPARED_DIR, h->domain,
				  vgpu_strerror(e));
	data = vgpu_xmalloc(sizeof(*data));
	*data = h;
	vgpu_txn_push(&h->txn, undo_note, data, "note what prepare created");
	return 0;
}

static int hook_prepare(struct hook *h)
{
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];
		int e;

		if (!owned(h, r))
			continue;
		e = prepare_one(h, r);
		if (e < 0)
			return e;
	}
	return write_note(h);
}

/* The keys a failed start's prepare created (none when it started or created nothing). */
static void read_note(struct hook *h, struct vgpu_strv *keys)
{
	VGPU_AUTOSYSDIR d = { .fd = -1 };
	VGPU_AUTOFREE char *text = NULL;
	char *save = NULL;
	size_t len;

	if (vgpu_sysdir_open(h->c->fs, &d, PREPARED_DIR) < 0 ||
	    vgpu_sysfs_read_file(&d, 64 * 1024, &text, &len, "%s", h->domain) < 0)
		return;
	for (char *k = strtok_r(text, "\n", &save); k; k = strtok_r(NULL, "\n", &save))
		vgpu_strv_push(keys, vgpu_xstrdup(k));
	vgpu_sysfs_unlink(&d, h->domain);
}

static bool listed(const struct vgpu_strv *keys, const struct vgpu_record *r)
{
	char key[VGPU_RECORD_KEY_LEN];

	vgpu_record_key(r, key);
	for (size_t i = 0; i < keys->n; i++)
		if (strcmp(keys->items[i], key) == 0)
			return true;
	return false;
}

/*
 * Per-start vGPUs go at each stop, and after a failed start what its prepare
 * created; the records (the reservations, the assignments) stay.
 */
static int hook_release(struct hook *h)
{
	VGPU_AUTOSTRV failed_start = { 0 };

	read_note(h, &failed_start);
	for (size_t i = 0; i < h->recs.n; i++) {
		const struct vgpu_record *r = &h->recs.v[i];
		int e;

		if (!owned(h, r) ||
		    (r->lifetime != VGPU_LIFETIME_PER_START && !listed(&failed_start, r)))
			continue;
		e = vgpu_txn_destroy(&h->txn, r);
		if (e < 0)
			return e;
	}
	return 0;
}

static int hook_run(struct hook *h)
{
	struct cli *c = h->c;
	int e;

	/* cmd_hook (the core) opened the host and saw records naming the domain */
	if (read_stdin_uuid(h) < 0 || vgpu_sysfs_lock(&c->ctx, c->fs, HOOK_LOCK_WAIT_MS) < 0)
		return hook_fail(h);
	/* under the lock: another run may have changed them since */
	if (vgpu_records_read(&c->ctx, c->fs, &h->recs) < 0)
		return hook_fail(h);
	vgpu_txn_init(&h->txn, &c->ctx, c->fs, false);
	e = strcmp(h->op, "prepare") == 0 ? hook_prepare(h) : hook_release(h);
	if (e < 0) {
		vgpu_txn_rollback(&h->txn);
		return hook_fail(h);
	}
	vgpu_txn_commit(&h->txn);
	return 0;
}

int cmd_hook_live(struct cli *c, int argc, char **argv)
{
	struct hook h = { .c = c, .domain = argv[1], .op = argv[2] };
	int r;

	(void)argc;
	openlog("vgpuctl", LOG_PID, LOG_DAEMON);
	c->ctx.log_fn = hook_log;
	c->ctx.log_data = c;
	r = hook_run(&h);
	vgpu_records_clear(&h.recs);
	vgpu_strv_clear(&h.created);
	closelog();
	return r;
}
