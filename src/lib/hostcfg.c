// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: NVIDIA's mig-parted and vgpu-device-manager configuration checked
 * strictly against its schema (see hostcfg.h for the format and the rules):
 * the tree hostcfg-yaml.c reads is checked in one pass, every label, and the
 * selected label's entries are copied out.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "hostcfg-priv.h"
#include "hostcfg.h"
#include "sysfs.h"

#define VGPU_CFG_NAME_MAX 63 /* a MIG or vGPU profile name */
#define VGPU_CFG_LABELS_SHOWN 20 /* in the "no config" message */

struct cfgp {
	struct cfg_doc doc; /* the YAML, read into a tree (hostcfg-yaml.c) */
	/* the result */
	const char *label;
	bool found;
	struct vgpu_hostcfg c;
	size_t cap_entries;
	struct vgpu_strv labels;
};

static const char *const top_keys[] = { "version",	 "mig-configs", "vgpu-configs",
					"start-domains", "scheduler",	NULL };
static const char *const sched_keys[] = { "policy",    "timeslice", "average-factor",
					  "frequency", "devices",   NULL };
static const char *const mig_keys[] = { "devices", "device-filter", "mig-enabled", "mig-devices",
					NULL };
static const char *const vgpu_keys[] = { "devices", "device-filter", "vgpu-devices", NULL };

static const char *S(const struct cfgp *p, const struct node *n)
{
	return p->doc.arena + n->str;
}

/* ---- messages ------------------------------------------------------------- */

/* What a node is, for "must be X, not Y". */
static const char *describe(const struct cfgp *p, const struct node *n, char *buf, size_t len)
{
	if (n->kind == NODE_SEQ)
		return "a list";
	if (n->kind == NODE_MAP)
		return "a mapping";
	if (!*S(p, n))
		return n->is_plain ? "empty" : "an empty string";
	snprintf(buf, len, n->is_plain ? "'%.60s%s'" : "the quoted string \"%.60s%s\"", S(p, n),
		 strlen(S(p, n)) > 60 ? "..." : "");
	return buf;
}

static int type_error(struct cfgp *p, const struct node *n, const char *key, const char *where,
		      const char *expected)
{
	char buf[96];

	return vgpu_error(p->doc.ctx, -EINVAL, "%s:%u: '%s' %s must be %s, not %s", p->doc.file,
			  n->line, key, where, expected, describe(p, n, buf, sizeof(buf)));
}

static int unknown_key(struct cfgp *p, const struct node *k, const char *where,
		       const char *const *keys)
{
	char expected[128] = "";

	for (size_t i = 0; keys[i]; i++) {
		strcat(expected, i ? ", " : "");
		strcat(expected, keys[i]);
	}
	return vgpu_error(p->doc.ctx, -EINVAL, "%s:%u: unknown key '%.100s' %s (expected %s)",
			  p->doc.file, k->line, S(p, k), where, expected);
}

static int key_index(const char *const *keys, const char *k)
{
	for (int i = 0; keys[i]; i++)
		if (strcmp(keys[i], k) == 0)
			return i;
	return -1;
}

/* ---- duplicate keys --------------------------------------------------------- */

static int cmp_keys(const void *a, const void *b, void *data)
{
	const struct cfgp *p = data;
	const struct node *x = *(const struct node *const *)a, *y = *(const struct node *const *)b;
	int c = strcmp(S(p, x), S(p, y));

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* A key twice in one mapping is an error (the Go parsers keep the last one silently). */
static int check_dups(struct cfgp *p, const struct node *m, const char *where)
{
	size_t n = m->n / 2;
	VGPU_AUTOFREE const struct node **keys = NULL;

	if (n < 2)
		return 0;
	keys = vgpu_xcalloc(n, sizeof(*keys));
	for (size_t i = 0; i < n; i++)
		keys[i] = key_at(m, i);
	/* sorted, not compared pairwise: a 10 MB file may hold 100,000 labels */
	qsort_r(keys, n, sizeof(*keys), cmp_keys, p);
	for (size_t i = 1; i < n; i++)
		if (strcmp(S(p, keys[i - 1]), S(p, keys[i])) == 0)
			return vgpu_error(p->doc.ctx, -EINVAL,
					  "%s:%u: duplicate key '%.100s' %s (first at line %u)",
					  p->doc.file, keys[i]->line, S(p, keys[i]), where,
					  keys[i - 1]->line);
	return 0;
}

/* ---- scalars ---------------------------------------------------------------- */

/*
 * A plain decimal integer: an optional '-', digits, no leading zero (YAML 1.1
 * reads "010" as octal; we take neither reading).  Values past nine digits
 * become LONG_MIN/LONG_MAX: out of every range used here.
 */
static bool plain_int(const struct cfgp *p, const struct node *n, long *v)
{
	const char *s = S(p, n), *d = s + (*s == '-');
	size_t len = strlen(d);

	if (n->kind != NODE_SCALAR || !n->is_plain || !len || (d[0] == '0' && len > 1) ||
	    strspn(d, "0123456789") != len)
		return false;
	*v = len > 9 ? (*s == '-' ? LONG_MIN : LONG_MAX) : strtol(s, NULL, 10);
	return true;
}

static int get_count(struct cfgp *p, const struct node *v, const char *key, const char *where,
		     long max, unsigned *out)
{
	char expected[64];
	long n;

	snprintf(expected, sizeof(expected), "an integer from 0 to %ld", max);
	if (!plain_int(p, v, &n))
		return type_error(p, v, key, where, expected);
	if (n < 0 || n > max)
		return vgpu_error(p->doc.ctx, -EINVAL, "%s:%u: '%s' %s is %s, out of 0..%ld",
				  p->doc.file, v->line, key, where, S(p, v), max);
	*out = (unsigned)n;
	return 0;
}

/*
 * A YAML 1.1 boolean, plain (not quoted), in any case: true/false, yes/no,
 * on/off, y/n.  NVIDIA's mig-parted and vgpu-device-manager read their files
 * with a YAML 1.1 parser (go-yaml v2), so "mig-enabled: yes" works there.
 */
static int get_bool(struct cfgp *p, const struct node *v, const char *key, const char *where,
		    int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "y" };
	static const char *const no[] = { "false", "no", "off", "n" };

	for (size_t i = 0; v->kind == NODE_SCALAR && v->is_plain && i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(S(p, v), yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(S(p, v), no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return type_error(p, v, key, where, "true or false");
}

/* "0x20B710DE": 0x and 1 to 8 hex digits, as the example files write PCI ids. */
static bool parse_pci_id(const char *s, uint32_t *out)
{
	size_t n;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	n = strlen(s + 2);
	if (n < 1 || n > 8 || strspn(s + 2, "0123456789abcdefABCDEF") != n)
		return false;
	*out = (uint32_t)strtoul(s + 2, NULL, 16);
	return true;
}

/* A MIG or vGPU profile name: printable ASCII without blanks. */
static bool profile_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > VGPU_CFG_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

/* ---- entries ---------------------------------------------------------------- */

static void entry_clear(struct vgpu_cfg_entry *e)
{
	for (size_t i = 0; i < e->n_mig; i++)
		free(e->mig[i].name);
	for (size_t i = 0; i < e->n_vgpu; i++)
		free(e->vgpu[i].name);
	free(e->indexes);
	free(e->addrs);
	free(e->device_filter);
	free(e->mig);
	free(e->vgpu);
	memset(e, 0, sizeof(*e));
}

#define DEVICES_ARE "all or a list of GPU indexes and PCI addresses"

/* devices: all | [0, 1, "0000:3b:00.0", "3b:00.0"] */
static int get_devices(struct cfgp *p, const struct node *v, const char *where,
		       struct vgpu_cfg_entry *e)
{
	if (v->kind == NODE_SCALAR && strcmp(S(p, v), "all") == 0) {
		e->is_all = true;
		return 0;
	}
	if (v->kind != NODE_SEQ || v->n == 0)
		return type_error(p, v, "devices", where, DEVICES_ARE);
	e->indexes = vgpu_xcalloc(v->n, sizeof(*e->indexes));
	e->addrs = vgpu_xcalloc(v->n, sizeof(*e->addrs));
	for (uint32_t i = 0; i < v->n; i++) {
		const struct node *d = &v->kids[i];
		long idx;

		if (d->kind != NODE_SCALAR)
			return type_error(p, d, "devices", where, DEVICES_ARE);
		if (plain_int(p, d, &idx)) {
			if (idx < 0 || idx > VGPU_CFG_MAX_INDEX)
				return vgpu_error(
					p->doc.ctx, -EINVAL,
					"%s:%u: GPU index %s in 'devices' %s is out of 0..%d",
					p->doc.file, d->line, S(p, d), where, VGPU_CFG_MAX_INDEX);
			e->indexes[e->n_indexes++] = (int)idx;
		} else if (vgpu_bdf_normalize(S(p, d), e->addrs[e->n_addrs]) == 0) {
			e->n_addrs++;
		} else {
			char buf[96];

			return vgpu_error(
				p->doc.ctx, -EINVAL,
				"%s:%u: %s in 'devices' %s is neither a GPU index nor a PCI address such as 0000:3b:00.0",
				p->doc.file, d->line, describe(p, d, buf, sizeof(buf)), where);
		}
	}
	return 0;
}

/* device-filter: "0x20B710DE" | ["0x20B710DE", "0x20B510DE"] */
static int get_filter(struct cfgp *p, const struct node *v, const char *where,
		      struct vgpu_cfg_entry *e)
{
	const struct node *items = v->kind == NODE_SEQ ? v->kids : v;
	size_t n = v->kind == NODE_SEQ ? v->n : 1;

	if (v->kind == NODE_MAP || n == 0)
		return type_error(p, v, "device-filter", where, "a PCI id or a list of PCI ids");
	e->device_filter = vgpu_xcalloc(n, sizeof(*e->device_filter));
	for (size_t i = 0; i < n; i++) {
		if (items[i].kind != NODE_SCALAR ||
		    !parse_pci_id(S(p, &items[i]), &e->device_filter[i]))
			return type_error(p, &items[i], "device-filter", where,
					  "a PCI id such as \"0x20B710DE\" (device, vendor)");
		e->n_filter++;
	}
	return 0;
}

/* mig-devices / vgpu-devices: {NAME: COUNT, ...}, possibly {} */
static int get_counts(struct cfgp *p, const struct node *v, const char *key, const char *where,
		      struct vgpu_cfg_count **out, size_t *n_out)
{
	char inner[320];
	size_t n = v->n / 2;
	int r;

	if (v->kind != NODE_MAP)
		return type_error(p, v, key, where, "a mapping of profile names to counts");
	snprintf(inner, sizeof(inner), "in '%s' %s", key, where);
	r = check_dups(p, v, inner);
	if (r < 0)
		return r;
	*out = vgpu_xcalloc(n ? n : 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		const struct node *k = key_at(v, i);
		struct vgpu_cfg_count *c = &(*out)[i];

		if (!profile_name_ok(S(p, k)))
			return vgpu_error(
				p->doc.ctx, -EINVAL,
				"%s:%u: '%.100s' %s is not a profile name (1 to %d printable characters, no blanks)",
				p->doc.file, k->line, S(p, k), inner, VGPU_CFG_NAME_MAX);
		r = get_count(p, val_at(v, i), S(p, k), inner, VGPU_CFG_MAX_COUNT, &c->count);
		if (r < 0)
			return r;
		c->name = vgpu_xstrdup(S(p, k));
		c->line = k->line;
		(*n_out)++;
	}
	return 0;
}

/* What a complete entry needs, as mig-parted and vgpu-device-manager require it. */
static int check_entry(struct cfgp *p, const struct node *m, const char *where, unsigned seen,
		       const struct vgpu_cfg_entry *e)
{
	const char *missing = NULL;

	if (!(seen & 1u << 0))
		missing = "devices";
	else if (e->section == VGPU_CFG_MIG && !(seen & 1u << 2))
		missing = "mig-enabled";
	else if (e->section == VGPU_CFG_MIG && e->mig_enabled == 1 && !(seen & 1u << 3))
		missing = "mig-devices (mig-enabled is true)";
	else if (e->section == VGPU_CFG_VGPU && !(seen & 1u << 2))
		missing = "vgpu-devices";
	if (missing)
		return vgpu_error(p->doc.ctx, -EINVAL, "%s:%u: no %s %s", p->doc.file, m->line,
				  missing, where);
	if (e->mig_enabled == 0 && e->n_mig)
		return vgpu_error(p->doc.ctx, -EINVAL,
				  "%s:%u: mig-devices %s but mig-enabled is false", p->doc.file,
				  m->line, where);
	return 0;
}

/* One entry of a label's list; @where is "in mig-configs.LABEL[i]". */
static int get_entry(struct cfgp *p, const struct node *m, enum vgpu_cfg_section section,
		     const char *where, struct vgpu_cfg_entry *e)
{
	const char *const *keys = section == VGPU_CFG_MIG ? mig_keys : vgpu_keys;
	unsigned seen = 0;
	int r;

	e->section = section;
	e->line = m->line;
	e->mig_enabled = -1;
	if (m->kind != NODE_MAP) {
		char buf[96];

		return vgpu_error(p->doc.ctx, -EINVAL,
				  "%s:%u: the entry %s must be a mapping, not %s", p->doc.file,
				  m->line, where, describe(p, m, buf, sizeof(buf)));
	}
	r = check_dups(p, m, where);
	for (size_t i = 0; r == 0 && i < m->n / 2; i++) {
		const char *k = S(p, key_at(m, i));
		const struct node *v = val_at(m, i);
		int ki = key_index(keys, k);

		if (ki < 0)
			return unknown_key(p, key_at(m, i), where, keys);
		seen |= 1u << ki;
		if (strcmp(k, "devices") == 0)
			r = get_devices(p, v, where, e);
		else if (strcmp(k, "device-filter") == 0)
			r = get_filter(p, v, where, e);
		else if (strcmp(k, "mig-enabled") == 0)
			r = get_bool(p, v, k, where, &e->mig_enabled);
		else if (strcmp(k, "mig-devices") == 0)
			r = get_counts(p, v, k, where, &e->mig, &e->n_mig);
		else
			r = get_counts(p, v, k, where, &e->vgpu, &e->n_vgpu);
	}
	return r < 0 ? r : check_entry(p, m, where, seen, e);
}

/* ---- labels and the top level ------------------------------------------------ */

static void add_entry(struct cfgp *p, struct vgpu_cfg_entry *e)
{
	if (p->c.n_entries == p->cap_entries) {
		p->cap_entries = p->cap_entries ? 2 * p->cap_entries : 4;
		p->c.entries = vgpu_xreallocarray(p->c.entries, p->cap_entries, sizeof(*e));
	}
	p->c.entries[p->c.n_entries++] = *e;
	memset(e, 0, sizeof(*e));
}

/* A label's key: noted in the list of labels; true when it is the one selected. */
static int get_label_key(struct cfgp *p, const struct node *k, const char *where, bool *selected)
{
	if (!*S(p, k))
		return vgpu_error(p->doc.ctx, -EINVAL, "%s:%u: an empty label %s", p->doc.file,
				  k->line, where);
	vgpu_strv_push(&p->labels, vgpu_xstrdup(S(p, k)));
	*selected = p->label && strcmp(S(p, k), p->label) == 0;
	p->found |= *selected;
	return 0;
}

/* LABEL: [ENTRY, ...] of mig-configs or vgpu-configs. */
static int get_label(struct cfgp *p, const struct node *k, const struct node *list,
		     const char *name, enum vgpu_cfg_section section)
{
	char where[320];
	bool selected;
	int r;

	snprintf(where, sizeof(where), "in %s", name);
	r = get_label_key(p, k, where, &selected);
	if (r < 0)
		return r;
	if (list->kind != NODE_SEQ || list->n == 0)
		return type_error(p, list, S(p, k), where, "a non-empty list of entries");
	for (uint32_t i = 0; i < list->n; i++) {
		struct vgpu_cfg_entry e = { 0 };

		snprintf(where, sizeof(where), "in %s.%.200s[%u]", name, S(p, k), i);
		r = get_entry(p, &list->kids[i], section, where, &e);
		if (r == 0 && selected)
			add_entry(p, &e);
		entry_clear(&e);
		if (r < 0)
			return r;
	}
	return 0;
}

/* mig-configs or vgpu-configs: {LABEL: [ENTRY, ...], ...} */
static int get_section(struct cfgp *p, const struct node *v, const char *name,
		       enum vgpu_cfg_section section)
{
	char where[64];
	int r;

	if (v->kind != NODE_MAP || v->n == 0)
		return type_error(p, v, name, "at the top level",
				  "a mapping of labels to lists of entries");
	snprintf(where, sizeof(where), "in %s", name);
	r = check_dups(p, v, where);
	for (size_t i = 0; r == 0 && i < v->n / 2; i++)
		r = get_label(p, key_at(v, i), val_at(v, i), name, section);
	return r;
}

/* start-domains: {LABEL: [domain name, ...], ...}, vgpuctl's own */
static int get_domains(struct cfgp *p, const struct node *v)
{
	int r;

	if (v->kind != NODE_MAP)
		return type_error(p, v, "start-domains", "at the top level",
				  "a mapping of labels to lists of domain names");
	r = check_dups(p, v, "in start-domains");
	for (size_t i = 0; r == 0 && i < v->n / 2; i++) {
		const struct node *k = key_at(v, i), *list = val_at(v, i);
		bool selected;

		r = get_label_key(p, k, "in start-domains", &selected);
		if (r < 0)
			return r;
		if (list->kind != NODE_SEQ)
			return type_error(p, list, S(p, k), "in start-domains",
					  "a list of domain names");
		for (uint32_t j = 0; j < list->n; j++) {
			const struct node *d = &list->kids[j];
			const char *why = d->kind == NODE_SCALAR ? vgpu_domain_name_check(S(p, d)) :
								   "not a string";

			if (why)
				return vgpu_error(
					p->doc.ctx, -EINVAL,
					"%s:%u: item %u of start-domains.%.200s is not a domain name: %s",
					p->doc.file, d->line, j, S(p, k), why);
		}
		if (!selected || !list->n)
			continue;
		p->c.domains = vgpu_xcalloc(list->n, sizeof(*p->c.domains));
		for (uint32_t j = 0; j < list->n; j++)
			p->c.domains[p->c.n_domains++] = vgpu_xstrdup(S(p, &list->kids[j]));
	}
	return r;
}

/* One SCHED of scheduler.LABEL: {policy, timeslice | average-factor + frequency, devices} */
static int get_sched(struct cfgp *p, const struct node *m, const char *where,
		     struct vgpu_cfg_sched *out)
{
	const struct node *vals[ARRAY_SIZE(sched_keys) - 1] = { 0 };
	struct vgpu_sched *s = &out->s;
	unsigned v;
	uint32_t x;
	int r;

	out->line = m->line;
	if (m->kind != NODE_MAP)
		return type_error(p, m, "entry", where, "a mapping (policy, timeslice, devices)");
	r = check_dups(p, m, where);
	for (size_t i = 0; r == 0 && i < m->n / 2; i++) {
		int ki = key_index(sched_keys, S(p, key_at(m, i)));

		if (ki < 0)
			return unknown_key(p, key_at(m, i), where, sched_keys);
		vals[ki] = val_at(m, i);
	}
	if (r < 0)
		return r;
	if (!vals[0])
		return vgpu_error(p->doc.ctx, -EINVAL, "%s:%u: no 'policy' %s", p->doc.file,
				  m->line, where);
	if (vals[0]->kind != NODE_SCALAR || vgpu_sched_policy_parse(S(p, vals[0]), &s->policy))
		return type_error(p, vals[0], "policy", where,
				  "best-effort, equal-share or fixed-share");
	if (vals[1] && (r = get_count(p, vals[1], "timeslice", where, VGPU_SCHED_TIMESLICE_MAX,
				      &s->timeslice_ms)) < 0)
		return r;
	if (vals[2] &&
	    (r = get_count(p, vals[2], "average-factor", where, VGPU_SCHED_AVG_MAX, &v)) < 0)
		return r;
	s->avg_factor = vals[2] ? v : 0;
	if (vals[3] && (r = get_count(p, vals[3], "frequency", where, VGPU_SCHED_FREQ_MAX, &v)) < 0)
		return r;
	s->frequency_hz = vals[3] ? v : 0;
	s->adaptive = vals[2] || vals[3];
	r = vgpu_sched_encode(s, &x);
	if (r < 0)
		return vgpu_error(
			p->doc.ctx, -EINVAL,
			"%s:%u: no such scheduler %s: best effort takes no time slice, a time slice (1-%u ms) and adaptive round robin (average-factor 0-%u with frequency %u-%u Hz) exclude each other",
			p->doc.file, m->line, where, VGPU_SCHED_TIMESLICE_MAX, VGPU_SCHED_AVG_MAX,
			VGPU_SCHED_FREQ_MIN, VGPU_SCHED_FREQ_MAX);
	if (vals[4]) {
		struct vgpu_cfg_entry e = { 0 };

		r = get_devices(p, vals[4], where, &e);
		if (r == 0 && e.n_indexes)
			r = vgpu_error(
				p->doc.ctx, -EINVAL,
				"%s:%u: GPU index %d in 'devices' %s: the scheduler is set per PCI address (0000:3b:00.0), which does not move",
				p->doc.file, vals[4]->line, e.indexes[0], where);
		if (r == 0 && !e.is_all) {
			out->addrs = vgpu_steal_ptr(&e.addrs);
			out->n_addrs = e.n_addrs;
		}
		entry_clear(&e);
	}
	return r;
}

/* scheduler: {LABEL: [SCHED, ...], ...}, vgpuctl's own */
static int get_scheduler(struct cfgp *p, const struct node *v)
{
	char where[320];
	int r;

	if (v->kind != NODE_MAP)
		return type_error(p, v, "scheduler", "at the top level",
				  "a mapping of labels to lists of scheduler settings");
	r = check_dups(p, v, "in scheduler");
	for (size_t i = 0; r == 0 && i < v->n / 2; i++) {
		const struct node *k = key_at(v, i), *list = val_at(v, i);
		VGPU_AUTOFREE struct vgpu_cfg_sched *e = NULL;
		bool selected, global = false;

		r = get_label_key(p, k, "in scheduler", &selected);
		if (r < 0)
			return r;
		if (list->kind != NODE_SEQ || list->n == 0)
			return type_error(p, list, S(p, k), "in scheduler",
					  "a non-empty list of scheduler settings");
		e = vgpu_xcalloc(list->n, sizeof(*e));
		for (uint32_t j = 0; r == 0 && j < list->n; j++) {
			snprintf(where, sizeof(where), "in scheduler.%.200s[%u]", S(p, k), j);
			r = get_sched(p, &list->kids[j], where, &e[j]);
			if (r == 0 && !e[j].n_addrs && global)
				r = vgpu_error(p->doc.ctx, -EINVAL,
					       "%s:%u: a second setting for every GPU %s",
					       p->doc.file, e[j].line, where);
			global |= r == 0 && !e[j].n_addrs;
			/* a GPU named twice: which one wins would be the file's order */
			for (uint32_t q = 0; r == 0 && q <= j; q++)
				for (size_t a = 0; r == 0 && a < e[q].n_addrs; a++)
					for (size_t b = 0; r == 0 && b < e[j].n_addrs; b++)
						if ((q != j || a < b) &&
						    strcmp(e[q].addrs[a], e[j].addrs[b]) == 0)
							r = vgpu_error(
								p->doc.ctx, -EINVAL,
								"%s:%u: GPU %s has a scheduler setting twice %s",
								p->doc.file, e[j].line,
								e[j].addrs[b], where);
		}
		if (r == 0 && selected) {
			p->c.sched = vgpu_steal_ptr(&e);
			p->c.n_sched = list->n;
		} else {
			for (uint32_t j = 0; j < list->n; j++)
				free(e[j].addrs);
		}
	}
	return r;
}

static int get_version(struct cfgp *p, const struct node *v)
{
	if (v->kind != NODE_SCALAR)
		return type_error(p, v, "version", "at the top level", "v1");
	if (strcmp(S(p, v), "v1") != 0)
		return vgpu_error(p->doc.ctx, -EINVAL,
				  "%s:%u: unsupported version '%.60s' (expected v1)", p->doc.file,
				  v->line, S(p, v));
	return 0;
}

/*
 * The top level.  Known keys are checked first, then the sections in a fixed
 * order (mig-configs before vgpu-configs) whatever their order in the file:
 * the entries come out in the order `apply` uses them (MIG mode first).
 */
static int get_top(struct cfgp *p, const struct node *root)
{
	const struct node *vals[ARRAY_SIZE(top_keys) - 1] = { 0 };
	char buf[96];
	int r;

	if (root->kind != NODE_MAP)
		return vgpu_error(
			p->doc.ctx, -EINVAL,
			"%s:%u: the configuration must be a mapping (version, mig-configs, vgpu-configs), not %s",
			p->doc.file, root->line, describe(p, root, buf, sizeof(buf)));
	r = check_dups(p, root, "at the top level");
	for (size_t i = 0; r == 0 && i < root->n / 2; i++) {
		int ki = key_index(top_keys, S(p, key_at(root, i)));

		if (ki < 0)
			return unknown_key(p, key_at(root, i), "at the top level", top_keys);
		vals[ki] = val_at(root, i);
	}
	if (r == 0 && !vals[0])
		return vgpu_error(p->doc.ctx, -EINVAL, "%s:%u: no 'version: v1'", p->doc.file,
				  root->line);
	if (r == 0)
		r = get_version(p, vals[0]);
	if (r == 0 && !vals[1] && !vals[2])
		return vgpu_error(p->doc.ctx, -EINVAL,
				  "%s:%u: neither mig-configs nor vgpu-configs", p->doc.file,
				  root->line);
	if (r == 0 && vals[1])
		r = get_section(p, vals[1], "mig-configs", VGPU_CFG_MIG);
	if (r == 0 && vals[2])
		r = get_section(p, vals[2], "vgpu-configs", VGPU_CFG_VGPU);
	if (r == 0 && vals[3])
		r = get_domains(p, vals[3]);
	if (r == 0 && vals[4])
		r = get_scheduler(p, vals[4]);
	return r;
}

/* "no config 'foo' in FILE; labels: a, b, c" (the first VGPU_CFG_LABELS_SHOWN) */
static int no_label(struct cfgp *p)
{
	size_t shown = p->labels.n < VGPU_CFG_LABELS_SHOWN ? p->labels.n : VGPU_CFG_LABELS_SHOWN;
	VGPU_AUTOFREE char *list = vgpu_xstrdup("");

	for (size_t i = 0; i < shown; i++) {
		char *more = vgpu_asprintf("%s%s%.100s", list, i ? ", " : "", p->labels.items[i]);

		free(list);
		list = more;
	}
	if (p->labels.n > shown) {
		char *more = vgpu_asprintf("%s, ... (%zu more)", list, p->labels.n - shown);

		free(list);
		list = more;
	}
	return vgpu_error(p->doc.ctx, -EINVAL, "no config '%s' in %s; labels: %s", p->label,
			  p->doc.file, list);
}

/* ---- the API ---------------------------------------------------------------- */

void vgpu_hostcfg_clear(struct vgpu_hostcfg *c)
{
	for (size_t i = 0; i < c->n_entries; i++)
		entry_clear(&c->entries[i]);
	for (size_t i = 0; i < c->n_domains; i++)
		free(c->domains[i]);
	for (size_t i = 0; i < c->n_labels; i++)
		free(c->labels[i]);
	for (size_t i = 0; i < c->n_sched; i++)
		free(c->sched[i].addrs);
	free(c->sched);
	free(c->entries);
	free(c->domains);
	free(c->labels);
	free(c->file);
	free(c->label);
	memset(c, 0, sizeof(*c));
}

int vgpu_hostcfg_parse(struct vgpu_ctx *ctx, const char *name, const char *buf, size_t len,
		       const char *label, struct vgpu_hostcfg *out)
{
	struct cfgp p = {
		.doc = { .ctx = ctx,
			 .file = name ? name : "(config)",
			 .buf = buf,
			 .len = len,
			 .max_depth = VGPU_CFG_MAX_DEPTH },
		.label = label,
	};
	struct node root = { 0 };
	int r;

	if (len > VGPU_CFG_MAX_BYTES)
		return vgpu_error(ctx, -EFBIG, "'%s' is larger than %u bytes", p.doc.file,
				  VGPU_CFG_MAX_BYTES);
	r = cfg_read_tree(&p.doc, &root);
	if (r == 0)
		r = get_top(&p, &root);
	cfg_node_free(&root);
	free(p.doc.arena);
	vgpu_strv_uniq(&p.labels);
	if (r == 0 && label && !p.found)
		r = no_label(&p);
	if (r < 0) {
		vgpu_hostcfg_clear(&p.c);
		vgpu_strv_clear(&p.labels);
		return r;
	}
	p.c.labels = p.labels.items;
	p.c.n_labels = p.labels.n;
	p.c.file = vgpu_xstrdup(p.doc.file);
	p.c.label = label ? vgpu_xstrdup(label) : NULL;
	*out = p.c;
	return 0;
}

int vgpu_hostcfg_load(struct vgpu_ctx *ctx, const char *path, const char *label,
		      struct vgpu_hostcfg *out)
{
	VGPU_AUTOFREE char *buf = NULL;
	size_t len = 0;
	int r = vgpu_file_read(ctx, path, VGPU_CFG_MAX_BYTES, &buf, &len);

	if (r < 0)
		return r;
	return vgpu_hostcfg_parse(ctx, path, buf, len, label, out);
}
