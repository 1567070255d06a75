// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * migrate-check.c - the checks of a live migration of a vGPU domain: the
 * source's manifest against the target's offer (pure: no I/O).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "cpuset.h"
#include "ctx.h"
#include "migrate-check.h"
#include "records.h"

unsigned long vgpu_mig_version_parse(const char *s)
{
	unsigned long part[3] = { 0, 0, 0 };
	char *end;

	if (!s || *s < '0' || *s > '9')
		return 0;
	for (int i = 0; i < 3; i++) {
		part[i] = strtoul(s, &end, 10);
		if (end == s || (i > 0 && part[i] > 999) || part[0] > 999999)
			return 0;
		if (*end != '.' || end[1] < '0' || end[1] > '9')
			break;
		s = end + 1;
	}
	return part[0] * 1000000 + part[1] * 1000 + part[2];
}

const char *vgpu_mig_status_name(enum vgpu_mig_status s)
{
	switch (s) {
	case VGPU_MIG_PASS:
		return "PASS";
	case VGPU_MIG_WARN:
		return "WARN";
	case VGPU_MIG_FAIL:
		return "FAIL";
	case VGPU_MIG_UNKNOWN:
		break;
	}
	return "UNKNOWN";
}

/* "8.6.0" from 8006000; "?" for 0 (unknown).  Into @buf. */
static const char *ver(unsigned long v, char *buf, size_t len)
{
	if (!v)
		return "?";
	snprintf(buf, len, "%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
	return buf;
}

/* Add one answer; @next_fmt formats the next step. */
static void add(struct vgpu_mig_results *r, const char *id, enum vgpu_mig_status st,
		const char *what, const char *source, const char *target, const char *next_fmt, ...)
	__attribute__((format(printf, 7, 8)));
static void add(struct vgpu_mig_results *r, const char *id, enum vgpu_mig_status st,
		const char *what, const char *source, const char *target, const char *next_fmt, ...)
{
	struct vgpu_mig_result *x;
	va_list ap;

	r->items = vgpu_xreallocarray(r->items, r->n + 1, sizeof(*r->items));
	x = &r->items[r->n++];
	x->id = id;
	x->status = st;
	x->what = vgpu_xstrdup(what);
	x->source = vgpu_xstrdup(source ? source : "-"); /* NULL: an empty per-vGPU list */
	x->target = vgpu_xstrdup(target ? target : "-");
	va_start(ap, next_fmt);
	x->next = vgpu_vasprintf(next_fmt, ap);
	va_end(ap);
}

/*
 * One vGPU's comparison into a check's status: a difference FAILs; a value
 * either end does not know makes it UNKNOWN unless something already failed.
 */
static void fold(enum vgpu_mig_status *st, bool known, bool same)
{
	if (!known) {
		if (*st != VGPU_MIG_FAIL)
			*st = VGPU_MIG_UNKNOWN;
	} else if (!same) {
		*st = VGPU_MIG_FAIL;
	}
}

static bool has_iface(const struct vgpu_mig_host *h, enum vgpu_iface iface)
{
	for (size_t i = 0; i < h->n_vgpus; i++)
		if (h->vgpus[i].iface == iface)
			return true;
	return false;
}

/* The target's board for source vGPU @i, or NULL when it offers none. */
static const struct vgpu_mig_vgpu *slot(const struct vgpu_mig_host *dst, size_t i)
{
	if (!dst || i >= dst->n_vgpus || !dst->reasons || dst->reasons[i] != VGPU_CAP_OK)
		return NULL;
	return &dst->vgpus[i];
}

/* One end's versions against the minimums: FAIL, UNKNOWN or PASS; @why names the first short one.
 */
static enum vgpu_mig_status engine_of(const struct vgpu_mig_host *h, char **why)
{
	unsigned long kmin = has_iface(h, VGPU_IFACE_VENDOR_VFIO) ? VGPU_MIG_MIN_KERNEL_VFIO :
								    VGPU_MIG_MIN_KERNEL;
	const struct {
		const char *name;
		unsigned long have, min;
	} v[] = {
		{ "libvirt", h->libvirt, VGPU_MIG_MIN_LIBVIRT },
		{ "QEMU", h->qemu, VGPU_MIG_MIN_QEMU },
		{ "kernel", h->kernel, kmin },
	};
	enum vgpu_mig_status st = VGPU_MIG_PASS;
	char b[32];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (v[i].have && v[i].have < v[i].min) {
			if (st != VGPU_MIG_FAIL)
				vgpu_append(why, "%s %s", v[i].name, ver(v[i].min, b, sizeof(b)));
			st = VGPU_MIG_FAIL;
		} else if (!v[i].have && st == VGPU_MIG_PASS) {
			st = VGPU_MIG_UNKNOWN;
		}
	}
	return st;
}

static char *versions(const struct vgpu_mig_host *h)
{
	char a[32], b[32], c[32], *s = NULL;

	if (!h)
		return vgpu_xstrdup("?");
	vgpu_append(&s, "libvirt %s, QEMU %s, kernel %s", ver(h->libvirt, a, sizeof(a)),
		    ver(h->qemu, b, sizeof(b)), ver(h->kernel, c, sizeof(c)));
	return s;
}

static void check_engine(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
			 struct vgpu_mig_results *r)
{
	VGPU_AUTOFREE char *sv = versions(src), *tv = versions(dst);
	VGPU_AUTOFREE char *swhy = NULL, *twhy = NULL;
	enum vgpu_mig_status s = engine_of(src, &swhy);
	enum vgpu_mig_status t = dst ? engine_of(dst, &twhy) : VGPU_MIG_UNKNOWN;
	const char *what = "libvirt, QEMU, kernel";

	if (s == VGPU_MIG_FAIL || t == VGPU_MIG_FAIL)
		add(r, "engine", VGPU_MIG_FAIL, what, sv, tv,
		    "upgrade the %s to at least %s (vendor-specific VFIO needs kernel 6.8)",
		    swhy ? "source" : "target", swhy ? swhy : twhy);
	else if (s == VGPU_MIG_UNKNOWN || t == VGPU_MIG_UNKNOWN)
		add(r, "engine", VGPU_MIG_UNKNOWN, what, sv, tv, "%s",
		    dst ? "find the versions marked '?' (virsh version, uname -r)" :
			  "reach the target to compare its versions");
	else
		add(r, "engine", VGPU_MIG_PASS, what, sv, tv, "%s", "");
}

static const char *iface_name(enum vgpu_iface i)
{
	return i == VGPU_IFACE_VENDOR_VFIO ? "VF" : i == VGPU_IFACE_MDEV ? "mdev" : "?";
}

static void check_interface(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
			    struct vgpu_mig_results *r)
{
	VGPU_AUTOFREE char *sv = NULL, *tv = NULL;
	bool cross = false, unknown = !dst;
	char a[32], b[32];

	for (size_t i = 0; i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *t = slot(dst, i);

		vgpu_append(&sv, "%s%s", i ? "," : "", iface_name(src->vgpus[i].iface));
		vgpu_append(&tv, "%s%s", i ? "," : "", t ? iface_name(t->iface) : "?");
		if (!t || !t->iface || !src->vgpus[i].iface)
			unknown = true;
		else if (t->iface != src->vgpus[i].iface)
			cross = true;
	}
	if (cross) {
		VGPU_AUTOFREE char *lv = NULL;

		vgpu_append(&lv, "libvirt %s vs %s", ver(src->libvirt, a, sizeof(a)),
			    ver(dst->libvirt, b, sizeof(b)));
		if ((src->libvirt && src->libvirt < VGPU_MIG_MIN_LIBVIRT_CROSS) ||
		    (dst->libvirt && dst->libvirt < VGPU_MIG_MIN_LIBVIRT_CROSS))
			add(r, "interface", VGPU_MIG_FAIL, "mdev <-> VF", sv, tv,
			    "mdev <-> VF needs libvirt 11.0 on both ends (%s); choose a target of the same interface",
			    lv);
		else if (!src->libvirt || !dst->libvirt)
			add(r, "interface", VGPU_MIG_UNKNOWN, "mdev <-> VF", sv, tv,
			    "mdev <-> VF needs libvirt 11.0 on both ends (%s)", lv);
		else
			add(r, "interface", VGPU_MIG_PASS, "mdev <-> VF", sv, tv, "%s", "");
	} else if (unknown) {
		add(r, "interface", VGPU_MIG_UNKNOWN, "vGPU interface", sv, tv, "%s",
		    dst ? "the target offers no device for some vGPU (see capacity)" :
			  "reach the target to compare interfaces");
	} else {
		add(r, "interface", VGPU_MIG_PASS, "vGPU interface", sv, tv, "%s", "");
	}
}

/* ---- NVML's checks: driver-build, nvidia-compatibility ---------------------------------- */

/* An end's driver build: unknown unless someone said (a zeroed host says nothing). */
static enum vgpu_tristate build_of(const struct vgpu_mig_host *h)
{
	return h && h->driver_build_from[0] ? h->driver_build : VGPU_UNKNOWN;
}

static const char *build_text(const struct vgpu_mig_host *h, char *buf, size_t len)
{
	if (build_of(h) == VGPU_UNKNOWN)
		return "?";
	snprintf(buf, len, "%s (%s)", h->driver_build == VGPU_ON ? "migration on" : "migration off",
		 h->driver_build_from);
	return buf;
}

static void check_driver_build(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
			       struct vgpu_mig_results *r)
{
	enum vgpu_tristate sb = build_of(src), t = build_of(dst);
	const char *what = "the driver build migrates";
	char a[48], b[48];
	const char *sv = build_text(src, a, sizeof(a)), *tv = build_text(dst, b, sizeof(b));

	if (sb == VGPU_OFF || t == VGPU_OFF)
		add(r, "driver-build", VGPU_MIG_FAIL, what, sv, tv,
		    "the %s's vGPU manager has migration disabled ('vGPU migration disabled' in its log): install a vGPU manager build with migration on that host",
		    sb == VGPU_OFF ? "source" : "target");
	else if (sb == VGPU_UNKNOWN || t == VGPU_UNKNOWN)
		add(r, "driver-build", VGPU_MIG_UNKNOWN, what, sv, tv, "%s",
		    dst ? "look for 'vGPU migration enabled' in the kernel log of the host marked '?' (journalctl -k)" :
			  "reach the target to read its driver build");
	else
		add(r, "driver-build", VGPU_MIG_PASS, what, sv, tv, "%s", "");
}

/* "live", "sleep,cold", "none": the vgpuVmCompatibility bits in words */
static void compat_text(char **s, uint32_t bits)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} n[] = { { VGPU_MIG_NV_COMPAT_LIVE, "live" },
		  { VGPU_MIG_NV_COMPAT_SLEEP, "sleep" },
		  { VGPU_MIG_NV_COMPAT_HIBERNATE, "hibernate" },
		  { VGPU_MIG_NV_COMPAT_COLD, "cold" } };
	bool any = false;

	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		if (bits & n[i].bit) {
			vgpu_append(s, "%s%s", any ? "+" : "", n[i].name);
			any = true;
		}
	if (!any)
		vgpu_append(s, "none");
}

const char *vgpu_mig_nv_limit_name(uint32_t code)
{
	/* a set of bits in principle; the first that limits is named */
	if (code & VGPU_MIG_NV_LIMIT_HOST_DRIVER)
		return "host driver";
	if (code & VGPU_MIG_NV_LIMIT_GUEST_DRIVER)
		return "guest driver";
	if (code & VGPU_MIG_NV_LIMIT_GPU)
		return "GPU";
	if (code)
		return "other";
	return "none";
}

static const char *limit_next(uint32_t code)
{
	if (code & VGPU_MIG_NV_LIMIT_HOST_DRIVER)
		return "install the source's vGPU manager version on the target";
	if (code & VGPU_MIG_NV_LIMIT_GUEST_DRIVER)
		return "update the guest's NVIDIA driver to one the target's vGPU manager supports (its vGPU version range)";
	if (code & VGPU_MIG_NV_LIMIT_GPU)
		return "choose a target GPU of the same board and mode";
	return "see the vGPU manager's log on the target (journalctl -u nvidia-vgpu-mgr)";
}

static void check_nvidia_compat(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
				struct vgpu_mig_results *r)
{
	VGPU_AUTOFREE char *sv = NULL, *tv = NULL;
	const struct vgpu_mig_vgpu *bad = NULL;
	const char *what = "nvmlGetVgpuCompatibility";
	bool unknown = !src->n_vgpus, no_src = false;

	for (size_t i = 0; i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i], *t = slot(dst, i);

		vgpu_append(&sv, "%s%s", i ? "," : "", s->nv_metadata_len ? "metadata" : "?");
		vgpu_append(&tv, "%s", i ? "," : "");
		if (!s->nv_metadata_len) {
			no_src = unknown = true;
			vgpu_append(&tv, "?");
		} else if (!t || !t->has_nv_compat) {
			unknown = true;
			vgpu_append(&tv, "?");
		} else {
			compat_text(&tv, t->nv_compat);
			if (!(t->nv_compat & VGPU_MIG_NV_COMPAT_LIVE)) {
				vgpu_append(&tv, " (limit: %s)",
					    vgpu_mig_nv_limit_name(t->nv_limit));
				if (!bad)
					bad = t;
			}
		}
	}
	if (bad)
		add(r, "nvidia-compatibility", VGPU_MIG_FAIL, what, sv, tv,
		    "NVIDIA refuses a live migration, limited by the %s: %s",
		    vgpu_mig_nv_limit_name(bad->nv_limit), limit_next(bad->nv_limit));
	else if (unknown)
		add(r, "nvidia-compatibility", VGPU_MIG_UNKNOWN, what, sv, tv, "%s",
		    !dst ? "reach the target to ask its NVML" :
		    no_src ?
			   "the source's NVML gave no vGPU metadata (is the domain running, is libnvidia-ml there?)" :
			   "the target's NVML gave no answer (is libnvidia-ml there, does it offer a device?)");
	else
		add(r, "nvidia-compatibility", VGPU_MIG_PASS, what, sv, tv, "%s", "");
}

static void check_driver(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
			 struct vgpu_mig_results *r)
{
	const char *sv = src->driver_version[0] ? src->driver_version : "?";
	const char *tv = dst && dst->driver_version[0] ? dst->driver_version : "?";
	const char *what = "vGPU manager version";

	if (!strcmp(sv, "?") || !strcmp(tv, "?"))
		add(r, "driver-version", VGPU_MIG_UNKNOWN, what, sv, tv, "%s",
		    "read both versions (nvidia-smi -q | grep 'Driver Version')");
	else if (strcmp(sv, tv))
		add(r, "driver-version", VGPU_MIG_FAIL, what, sv, tv,
		    "install vGPU manager %s on the target (versions must be identical, even within a branch)",
		    sv);
	else
		add(r, "driver-version", VGPU_MIG_PASS, what, sv, tv, "%s", "");
}

static void board_text(char **s, const struct vgpu_mig_vgpu *v, bool first)
{
	if (!v) {
		vgpu_append(s, "%s?", first ? "" : ", ");
		return;
	}
	vgpu_append(s, "%s10de:%04x ", first ? "" : ", ", v->pci_device);
	if (v->pci_subsystem)
		vgpu_append(s, "%04x:%04x", v->pci_subsystem >> 16, v->pci_subsystem & 0xffff);
	else
		vgpu_append(s, "?");
	vgpu_append(s, " %lluMiB", (unsigned long long)v->fb_mib);
}

static void check_board(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
			struct vgpu_mig_results *r)
{
	VGPU_AUTOFREE char *sv = NULL, *tv = NULL;
	enum vgpu_mig_status st = src->n_vgpus ? VGPU_MIG_PASS : VGPU_MIG_UNKNOWN;

	for (size_t i = 0; i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i], *t = slot(dst, i);

		board_text(&sv, s, !i);
		board_text(&tv, t, !i);
		fold(&st,
		     t && s->pci_device && t->pci_device && s->pci_subsystem && t->pci_subsystem &&
			     s->fb_mib && t->fb_mib,
		     t && s->pci_device == t->pci_device && s->pci_subsystem == t->pci_subsystem &&
			     s->fb_mib == t->fb_mib);
	}
	add(r, "board", st, "PCI device, subsystem, framebuffer", sv, tv, "%s",
	    st == VGPU_MIG_FAIL ?
		    "choose a target with the same board (80 GB PCIe and 94 GB NVL, H100 and H200 differ)" :
	    st == VGPU_MIG_UNKNOWN ? "compare the boards (lspci -nn -v) on both hosts" :
				     "");
}

static const char *tri(enum vgpu_tristate t)
{
	return t == VGPU_ON ? "on" : t == VGPU_OFF ? "off" : "?";
}

static void check_ecc(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
		      struct vgpu_mig_results *r)
{
	VGPU_AUTOFREE char *sv = NULL, *tv = NULL;
	enum vgpu_mig_status st = src->n_vgpus ? VGPU_MIG_PASS : VGPU_MIG_UNKNOWN;

	for (size_t i = 0; i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i], *t = slot(dst, i);

		vgpu_append(&sv, "%s%s", i ? "," : "", tri(s->ecc));
		vgpu_append(&tv, "%s%s", i ? "," : "", t ? tri(t->ecc) : "?");
		fold(&st, t && s->ecc != VGPU_UNKNOWN && t->ecc != VGPU_UNKNOWN,
		     t && s->ecc == t->ecc);
	}
	add(r, "ecc", st, "ECC mode", sv, tv, "%s",
	    st == VGPU_MIG_FAIL ?
		    "set the target's ECC mode to the source's (nvidia-smi -e, then a GPU reset)" :
	    st == VGPU_MIG_UNKNOWN ? "read the ECC mode on both hosts (nvidia-smi -q -d ECC)" :
				     "");
}

/*
 * topology, NVLink's part: per vGPU the active NVLinks of its GPU on the
 * source against the GPU the target gives it (a guest that uses NVLink
 * needs as many links there).  FAIL when a vGPU's two counts differ, else
 * UNKNOWN when one end does not know (no NVML, or no device offered), else PASS.
 */
static enum vgpu_mig_status topology_links(const struct vgpu_mig_host *src,
					   const struct vgpu_mig_host *dst, char **sv, char **tv,
					   char **next)
{
	enum vgpu_mig_status st = VGPU_MIG_PASS;

	for (size_t i = 0; i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i], *t = slot(dst, i);
		bool known = t && s->has_nvlinks && t->has_nvlinks;

		if (s->has_nvlinks)
			vgpu_append(sv, "%s%u", i ? "," : "", s->nvlinks);
		else
			vgpu_append(sv, "%s?", i ? "," : "");
		if (t && t->has_nvlinks)
			vgpu_append(tv, "%s%u", i ? "," : "", t->nvlinks);
		else
			vgpu_append(tv, "%s?", i ? "," : "");
		if (known && s->nvlinks != t->nvlinks && st != VGPU_MIG_FAIL)
			vgpu_append(
				next,
				"vGPU %zu's GPU has %u active NVLinks here and %u on the target: choose a target GPU with the same NVLink width, or migrate only a guest that does not use NVLink",
				i + 1, s->nvlinks, t->nvlinks);
		fold(&st, known, known && s->nvlinks == t->nvlinks);
	}
	return st;
}

/*
 * topology: the target answered for as many vGPUs as the domain has (and it
 * has one), and each vGPU's GPU has as many active NVLinks on both ends.
 * FAIL when either part fails, else UNKNOWN when an NVLink count is not
 * known, else PASS.
 */
static void check_topology(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
			   struct vgpu_mig_results *r)
{
	const char *what = "vGPU count, active NVLinks per vGPU";
	VGPU_AUTOFREE char *sv = NULL, *tv = NULL, *lsv = NULL, *ltv = NULL, *lnext = NULL;
	enum vgpu_mig_status links;

	vgpu_append(&sv, "%zu vGPUs", src->n_vgpus);
	if (!dst) {
		add(r, "topology", VGPU_MIG_UNKNOWN, what, sv, "?", "%s",
		    "reach the target to count what it would give");
		return;
	}
	vgpu_append(&tv, "%zu vGPUs", dst->n_vgpus);
	if (!src->n_vgpus) {
		add(r, "topology", VGPU_MIG_FAIL, what, sv, tv, "%s",
		    "the domain has no vGPU that vgpuctl knows: assign it first, or migrate it without vgpuctl");
		return;
	}
	links = topology_links(src, dst, &lsv, &ltv, &lnext);
	vgpu_append(&sv, ", NVLinks %s", lsv);
	vgpu_append(&tv, ", NVLinks %s", ltv);
	if (dst->n_vgpus != src->n_vgpus)
		add(r, "topology", VGPU_MIG_FAIL, what, sv, tv, "%s%s%s",
		    "the target answered for another number of vGPUs: run the same vgpuctl version on both hosts",
		    lnext ? "; " : "", lnext ? lnext : "");
	else if (links == VGPU_MIG_FAIL)
		add(r, "topology", VGPU_MIG_FAIL, what, sv, tv, "%s", lnext);
	else if (links == VGPU_MIG_UNKNOWN)
		add(r, "topology", VGPU_MIG_UNKNOWN, what, sv, tv, "%s",
		    "read the active NVLinks on both hosts (nvidia-smi nvlink -s): vgpuctl reads them through NVML");
	else
		add(r, "topology", VGPU_MIG_PASS, what, sv, tv, "%s", "");
}

static void check_capacity(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
			   struct vgpu_mig_results *r)
{
	VGPU_AUTOFREE char *sv = NULL, *tv = NULL;
	const char *why = NULL;
	enum vgpu_cap_reason reason = VGPU_CAP_OK;
	bool unknown = !dst || dst->n_vgpus != src->n_vgpus || !src->n_vgpus;

	for (size_t i = 0; i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i];

		vgpu_append(&sv, "%s%s", i ? "," : "", s->type_name[0] ? s->type_name : "?");
		if (!dst || i >= dst->n_vgpus || !dst->reasons) {
			vgpu_append(&tv, "%s?", i ? "," : "");
			unknown = true;
		} else if (dst->reasons[i] == VGPU_CAP_OK) {
			vgpu_append(&tv, "%s%s", i ? "," : "",
				    dst->devices && dst->devices[i][0] ? dst->devices[i] : "?");
		} else {
			vgpu_append(&tv, "%s%s", i ? "," : "",
				    vgpu_cap_reason_code(dst->reasons[i]));
			if (!why) {
				reason = dst->reasons[i];
				why = vgpu_cap_reason_text(reason);
			}
		}
	}
	if (why)
		add(r, "capacity", VGPU_MIG_FAIL, "a slot per vGPU", sv, tv, "%s: %s",
		    vgpu_cap_reason_code(reason), why);
	else if (unknown)
		add(r, "capacity", VGPU_MIG_UNKNOWN, "a slot per vGPU", sv, tv, "%s",
		    "reach the target and run 'vgpuctl why PROFILE' there");
	else
		add(r, "capacity", VGPU_MIG_PASS, "a slot per vGPU", sv, tv, "%s", "");
}

static void check_params(const struct vgpu_mig_host *src, struct vgpu_mig_results *r)
{
	VGPU_AUTOFREE char *sv = NULL, *on = NULL;
	bool unknown = !src->n_vgpus;

	for (size_t i = 0; i < src->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i];
		const struct {
			const char *name;
			enum vgpu_tristate v;
		} p[] = {
			{ "enable_uvm", s->enable_uvm },
			{ "enable_debugging", s->enable_debugging },
			{ "enable_profiling", s->enable_profiling },
		};

		for (size_t k = 0; k < sizeof(p) / sizeof(p[0]); k++) {
			if (p[k].v == VGPU_ON) {
				vgpu_append(&on, "%s%s", on ? "," : "", p[k].name);
				vgpu_append(&sv, "%s%s=1", sv ? "," : "", p[k].name);
			} else if (p[k].v == VGPU_UNKNOWN) {
				unknown = true;
			}
		}
	}
	if (!sv)
		sv = vgpu_xstrdup(unknown ? "?" : "all off");
	if (on)
		add(r, "vgpu-params", VGPU_MIG_FAIL,
		    "enable_uvm, enable_debugging, enable_profiling", sv, "-",
		    "set %s=0 in the vGPU's vgpu_params and restart the domain (migration needs them off)",
		    on);
	else if (unknown)
		add(r, "vgpu-params", VGPU_MIG_UNKNOWN,
		    "enable_uvm, enable_debugging, enable_profiling", sv, "-", "%s",
		    "read the vGPU's vgpu_params in sysfs");
	else
		add(r, "vgpu-params", VGPU_MIG_PASS,
		    "enable_uvm, enable_debugging, enable_profiling", sv, "-", "%s", "");
}

/* ---- libvirt's checks: qemu-blockers, downtime, post-copy ------------------ */

bool vgpu_mig_machine_before(const char *machine, unsigned min)
{
	const char *v = strrchr(machine, '-');
	unsigned long major, minor = 0;
	char *end;

	/* "pc-q35-8.0", "virt-7.2": the version follows the last '-' */
	if (!v || v[1] < '0' || v[1] > '9')
		return false;
	major = strtoul(v + 1, &end, 10);
	if (*end == '.')
		minor = strtoul(end + 1, &end, 10);
	if (*end || major > 999 || minor > 999)
		return false;
	return major * 1000 + minor < min;
}

/*
 * QEMU 8.1 migrates ramfb's state (vfio-pci's x-ramfb-migrate, ramfb's
 * x-migrate), but hw_compat_8_0 turns it off for machine types before 8.1
 */
#define RAMFB_MIGRATE_MACHINE 8001

static void check_qemu_blockers(const struct vgpu_mig_host *src, struct vgpu_mig_results *r)
{
	const struct vgpu_mig_domain *d = src->domain;
	const char *what = "guest IOMMU, enable-migration, ramfb, VFIO devices";
	VGPU_AUTOFREE char *sv = NULL, *fail = NULL, *warn = NULL;

	if (!d) {
		add(r, "qemu-blockers", VGPU_MIG_UNKNOWN, what, "?", "-", "%s",
		    "read the domain from libvirt (a libvirt connection to the source)");
		return;
	}
	if (d->iommu) {
		vgpu_append(&sv, "%s<iommu>", sv ? ", " : "");
		vgpu_append(
			&fail,
			"%sremove the guest <iommu> (QEMU does not migrate VFIO devices behind a vIOMMU)",
			fail ? "; " : "");
	}
	if (d->migration_off) {
		vgpu_append(&sv, "%senable-migration=off", sv ? ", " : "");
		vgpu_append(
			&fail,
			"%sdrop enable-migration=off from the domain's qemu:commandline or qemu:override",
			fail ? "; " : "");
	}
	if (d->ramfb && vgpu_mig_machine_before(d->machine, RAMFB_MIGRATE_MACHINE)) {
		vgpu_append(&sv, "%sramfb on %s", sv ? ", " : "", d->machine);
		vgpu_append(
			&fail,
			"%sramfb migrates from machine type 8.1 on: set ramfb='off', or move the domain to a machine type >= 8.1 (a restart)",
			fail ? "; " : "");
	}
	if (d->n_vfio > 1) {
		vgpu_append(&sv, "%s%u VFIO devices", sv ? ", " : "", d->n_vfio);
		vgpu_append(
			&warn,
			"QEMU migrates several VFIO devices only when every one supports P2P migration");
		if (d->n_vfio_other)
			vgpu_append(&warn,
				    " (%u not vgpuctl's: each must support migration itself)",
				    d->n_vfio_other);
	} else if (d->n_vfio_other) {
		vgpu_append(&sv, "%s%u VFIO device not vgpuctl's", sv ? ", " : "", d->n_vfio_other);
		vgpu_append(&warn, "a passed-through device must support migration itself");
	}
	if (fail)
		add(r, "qemu-blockers", VGPU_MIG_FAIL, what, sv, "-", "%s", fail);
	else if (warn)
		add(r, "qemu-blockers", VGPU_MIG_WARN, what, sv, "-", "%s", warn);
	else
		add(r, "qemu-blockers", VGPU_MIG_PASS, what, "none", "-", "%s", "");
}

unsigned long long vgpu_mig_downtime_need_ms(const struct vgpu_mig_host *src, bool *known)
{
	unsigned long long bytes = 0, bw = src->bandwidth_mib_s ? src->bandwidth_mib_s :
								  VGPU_MIG_BANDWIDTH_MIB_S;

	*known = src->n_vgpus > 0;
	for (size_t i = 0; i < src->n_vgpus; i++) {
		if (!src->vgpus[i].type_fb_mib)
			*known = false;
		bytes += src->vgpus[i].type_fb_mib * 1048576ULL + src->vgpus[i].runtime_state_bytes;
	}
	if (!*known)
		return 0;
	bw *= 1048576ULL;
	return (bytes * 1000 + bw - 1) / bw;
}

unsigned long long vgpu_mig_downtime_advice_ms(unsigned long long need_ms)
{
	unsigned long long ms = need_ms + (need_ms + 3) / 4;

	ms = (ms + 99) / 100 * 100;
	return ms < VGPU_MIG_QEMU_DEFAULT_DOWNTIME_MS ? VGPU_MIG_QEMU_DEFAULT_DOWNTIME_MS : ms;
}

static void check_downtime(const struct vgpu_mig_host *src, struct vgpu_mig_results *r)
{
	const char *what = "framebuffer + runtime state vs max downtime";
	const char *dom = src->domain && src->domain->name[0] ? src->domain->name : "DOMAIN";
	unsigned long bw = src->bandwidth_mib_s ? src->bandwidth_mib_s : VGPU_MIG_BANDWIDTH_MIB_S;
	VGPU_AUTOFREE char *sv = NULL, *tv = NULL;
	unsigned long long fb = 0, state = 0, need, advice;
	bool known, state_known = src->n_vgpus > 0;

	for (size_t i = 0; i < src->n_vgpus; i++) {
		fb += src->vgpus[i].type_fb_mib;
		state += src->vgpus[i].runtime_state_bytes;
		if (!src->vgpus[i].runtime_state_bytes)
			state_known = false;
	}
	need = vgpu_mig_downtime_need_ms(src, &known);
	if (!known) {
		add(r, "downtime", VGPU_MIG_UNKNOWN, what, "?", "-", "%s",
		    "the vGPU type's framebuffer is not known: read the domain's vGPUs from libvirt");
		return;
	}
	advice = vgpu_mig_downtime_advice_ms(need);
	r->downtime_advice_ms = advice;
	if (state_known)
		vgpu_append(&sv, "%lluMiB + %lluB state at %luMiB/s = %llums", fb, state, bw, need);
	else
		vgpu_append(&sv, "%lluMiB + state ? at %luMiB/s = %llums", fb, bw, need);
	if (src->max_downtime_ms)
		vgpu_append(&tv, "max downtime %llums%s", src->max_downtime_ms,
			    src->max_downtime_default ? " (QEMU's default)" : "");
	else
		tv = vgpu_xstrdup("max downtime ?");
	if (!src->max_downtime_ms)
		add(r, "downtime", VGPU_MIG_UNKNOWN, what, sv, tv,
		    "the max downtime is read through libvirt: virsh migrate-setmaxdowntime %s %llu",
		    dom, advice);
	else if (src->max_downtime_ms < need)
		add(r, "downtime", VGPU_MIG_FAIL, what, sv, tv,
		    "virsh migrate-setmaxdowntime %s %llu (before the migration)", dom, advice);
	else if (!state_known)
		add(r, "downtime", VGPU_MIG_WARN, what, sv, tv,
		    "the runtime state is not known (counted 0): virsh migrate-setmaxdowntime %s %llu leaves room",
		    dom, advice);
	else
		add(r, "downtime", VGPU_MIG_PASS, what, sv, tv, "%s", "");
	if (r->items[r->n - 1].status == VGPU_MIG_PASS)
		r->downtime_advice_ms = 0; /* the domain's own is enough */
}

static void check_postcopy(const struct vgpu_mig_host *src, struct vgpu_mig_results *r)
{
	if (src->postcopy)
		add(r, "post-copy", VGPU_MIG_FAIL, "post-copy", "asked", "-", "%s",
		    "migrate with pre-copy only: VFIO devices cannot be post-copied (NVIDIA and RHEL do not support it)");
	else
		add(r, "post-copy", VGPU_MIG_PASS, "post-copy", "not used", "-", "%s", "");
}

/* The GPU of @m with a slot of @spec, not counting @given[g] slots given already. */
static const struct vgpu_gpu *pick(const struct vgpu_model *m, const struct vgpu_records *recs,
				   const struct vgpu_mig_vgpu *s, long *given,
				   enum vgpu_cap_reason *why)
{
	const struct vgpu_gpu *best = NULL;

	*why = VGPU_CAP_NOT_SUPPORTED;
	for (int same = 1; same >= 0 && !best; same--) {
		for (size_t i = 0; i < m->n_gpus && !best; i++) {
			const struct vgpu_gpu *g = &m->gpus[i];
			const struct vgpu_type *t = vgpu_gpu_match_type(g, s->type_name);
			struct vgpu_capacity c;
			bool board = g->device_id == s->pci_device &&
				     vgpu_gpu_framebuffer_mib(m, g) == s->fb_mib;

			if (!t || board != (bool)same)
				continue;
			vgpu_capacity_of(m, g, t, recs, &c);
			if (c.available > given[i]) {
				best = g;
				given[i]++;
			} else if (*why == VGPU_CAP_NOT_SUPPORTED) {
				/*
				 * OK here: what is left goes to the domain's vGPUs
				 * before this one; the closed list's nearest code
				 */
				*why = c.reason == VGPU_CAP_OK ? VGPU_CAP_MAX_INSTANCES : c.reason;
			}
			vgpu_capacity_clear(&c);
		}
	}
	if (best)
		*why = VGPU_CAP_OK;
	return best;
}

/* Does any record of @recs or any parent of @m hold mdev @uuid? */
static bool mdev_taken(const struct vgpu_model *m, const struct vgpu_records *recs,
		       const char *uuid)
{
	for (size_t i = 0; recs && i < recs->n; i++)
		if (!strcasecmp(recs->v[i].mdev_uuid, uuid))
			return true;
	for (size_t g = 0; g < m->n_gpus; g++)
		for (size_t p = 0; p < m->gpus[g].n_parents; p++) {
			const struct vgpu_strv *u = &m->gpus[g].parents[p].mdevs;

			for (size_t k = 0; k < u->n; k++)
				if (!strcasecmp(u->items[k], uuid))
					return true;
		}
	return false;
}

/* How many records of @recs claim parent @addr. */
static long parent_claims(const struct vgpu_records *recs, const char *addr)
{
	long n = 0;

	for (size_t i = 0; recs && i < recs->n; i++)
		n += !strcmp(recs->v[i].parent, addr);
	return n;
}

/*
 * The parent of @g that the hook would give type @type_id, counting what
 * @out's first @n vGPUs were given already and what records claim (a
 * record's vGPU may not exist now): a free VF (vendor VFIO), or a parent
 * with an instance of the type left (mdev); NULL when the model names none.
 */
static const struct vgpu_parent *pick_parent(const struct vgpu_gpu *g,
					     const struct vgpu_records *recs, unsigned type_id,
					     const struct vgpu_mig_host *out, size_t n)
{
	for (size_t p = 0; p < g->n_parents; p++) {
		const struct vgpu_parent *pa = &g->parents[p];
		long taken = parent_claims(recs, pa->addr);

		for (size_t i = 0; i < n; i++)
			taken += !strcmp(out->vgpus[i].parent, pa->addr);
		if (pa->iface == VGPU_IFACE_VENDOR_VFIO &&
		    (pa->in_use || pa->n_claimed || pa->n_reserved || taken))
			continue;
		for (size_t t = 0; t < pa->n_types; t++)
			if (pa->types[t].type->id == type_id && pa->types[t].available > taken)
				return pa;
	}
	return NULL;
}

void vgpu_mig_offer(const struct vgpu_model *m, const struct vgpu_records *recs,
		    const struct vgpu_mig_host *src, struct vgpu_mig_host *out)
{
	VGPU_AUTOFREE long *given = vgpu_xcalloc(m->n_gpus + 1, sizeof(*given));
	size_t n = src->n_vgpus;

	out->vgpus = vgpu_xcalloc(n + 1, sizeof(*out->vgpus));
	out->reasons = vgpu_xcalloc(n + 1, sizeof(*out->reasons));
	out->devices = vgpu_xcalloc(n + 1, sizeof(*out->devices));
	out->n_vgpus = n;
	for (size_t i = 0; i < n; i++) {
		const struct vgpu_mig_vgpu *s = &src->vgpus[i];
		struct vgpu_mig_vgpu *t = &out->vgpus[i];
		const struct vgpu_gpu *g = pick(m, recs, s, given, &out->reasons[i]);

		*t = *s;
		t->pci_device = 0;
		t->pci_subsystem = 0;
		t->fb_mib = 0;
		t->ecc = t->enable_uvm = t->enable_debugging = t->enable_profiling = VGPU_UNKNOWN;
		t->iface = VGPU_IFACE_NONE;
		t->nv_metadata_len = 0;
		t->runtime_state_bytes = 0;
		t->has_nv_compat = false;
		t->parent[0] = '\0';
		t->cpus[0] = '\0';
		t->numa_node = -1;
		t->mdev_uuid[0] = '\0';
		if (!g)
			continue;
		t->iface = g->iface;
		t->pci_device = g->device_id;
		t->pci_subsystem = g->subsystem;
		t->fb_mib = vgpu_gpu_framebuffer_mib(m, g);
		snprintf(out->devices[i], sizeof(out->devices[i]), "%s", g->addr);
		/* libvirt's fields: the device the hook would give, and where it sits */
		{
			const struct vgpu_type *ty = vgpu_gpu_match_type(g, s->type_name);
			const struct vgpu_parent *pa = ty ? pick_parent(g, recs, ty->id, out, i) :
							    NULL;

			if (pa)
				snprintf(t->parent, sizeof(t->parent), "%s", pa->addr);
			if (ty)
				t->type_id = ty->id;
			t->numa_node = g->numa_node;
			if (g->has_cpus)
				vgpu_cpulist_format(&g->cpus, t->cpus, sizeof(t->cpus));
			/* the source's mdev UUID when no one here holds it; "": a new one */
			if (g->iface == VGPU_IFACE_MDEV && s->mdev_uuid[0] &&
			    !mdev_taken(m, recs, s->mdev_uuid)) {
				bool dup = false;

				for (size_t k = 0; k < i; k++)
					dup |= !strcasecmp(out->vgpus[k].mdev_uuid, s->mdev_uuid);
				if (!dup)
					snprintf(t->mdev_uuid, sizeof(t->mdev_uuid), "%s",
						 s->mdev_uuid);
			}
		}
	}
}

bool vgpu_mig_record_is(const struct vgpu_record *r, const char *domain)
{
	return !strcmp(r->domain, domain) || !strcasecmp(r->domain_uuid, domain);
}

void vgpu_mig_params_parse(const char *text, struct vgpu_mig_vgpu *v)
{
	static const char *const names[] = { "enable_uvm", "enable_debugging", "enable_profiling" };
	enum vgpu_tristate *fields[] = { &v->enable_uvm, &v->enable_debugging,
					 &v->enable_profiling };

	for (size_t k = 0; k < 3; k++)
		*fields[k] = VGPU_OFF;
	for (;;) {
		size_t n;

		text += strspn(text, " \t\n,");
		if (!*text)
			break;
		n = strcspn(text, ",\n");
		for (size_t k = 0; k < 3; k++) {
			size_t len = strlen(names[k]), vlen;
			const char *val = text + len + 1;

			if (n <= len || strncmp(text, names[k], len) || text[len] != '=')
				continue;
			vlen = (size_t)(text + n - val);
			while (vlen && val[vlen - 1] == ' ')
				vlen--;
			/* "0", "00" or nothing: off; anything else turns it on */
			*fields[k] = strspn(val, "0") >= vlen ? VGPU_OFF : VGPU_ON;
		}
		text += n;
	}
}

size_t vgpu_mig_manifest_of(const struct vgpu_model *m, const struct vgpu_records *recs,
			    const char *domain, struct vgpu_mig_host *out)
{
	size_t n = 0;

	out->vgpus = vgpu_xcalloc(recs->n + 1, sizeof(*out->vgpus));
	out->reasons = NULL;
	out->devices = NULL;
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *r = &recs->v[i];
		struct vgpu_mig_vgpu *v = &out->vgpus[n];

		if (!vgpu_mig_record_is(r, domain))
			continue;
		*v = (struct vgpu_mig_vgpu){ .type_id = r->type_id,
					     .iface = r->iface,
					     .numa_node = -1,
					     .ecc = VGPU_UNKNOWN,
					     .enable_uvm = VGPU_UNKNOWN,
					     .enable_debugging = VGPU_UNKNOWN,
					     .enable_profiling = VGPU_UNKNOWN };
		snprintf(v->type_name, sizeof(v->type_name), "%s", r->profile);
		snprintf(v->mdev_uuid, sizeof(v->mdev_uuid), "%s", r->mdev_uuid);
		for (size_t g = 0; g < m->n_gpus; g++)
			if (!strcmp(m->gpus[g].addr, r->gpu)) {
				v->pci_device = m->gpus[g].device_id;
				v->pci_subsystem = m->gpus[g].subsystem;
				v->fb_mib = vgpu_gpu_framebuffer_mib(m, &m->gpus[g]);
				const struct vgpu_gpu *gp = &m->gpus[g];

				v->pci_device = gp->device_id;
				v->fb_mib = vgpu_gpu_framebuffer_mib(m, gp);
				/* libvirt's field: the type's framebuffer, for downtime */
				for (size_t t = 0; t < gp->n_types; t++)
					if (gp->types[t]->id == r->type_id)
						v->type_fb_mib = gp->types[t]->info.fb_mib;
			}
		n++;
	}
	out->n_vgpus = n;
	return n;
}

void vgpu_mig_offer_clear(struct vgpu_mig_host *h)
{
	free(h->vgpus);
	free(h->reasons);
	free(h->devices);
	free(h->plan); /* the shared plan's */
	h->plan = NULL;
	h->vgpus = NULL;
	h->reasons = NULL;
	h->devices = NULL;
	h->n_vgpus = 0;
}

void vgpu_mig_check(const struct vgpu_mig_host *src, const struct vgpu_mig_host *dst,
		    struct vgpu_mig_results *out)
{
	struct vgpu_mig_results r = { 0 };

	check_engine(src, dst, &r);
	check_interface(src, dst, &r);
	check_driver_build(src, dst, &r);
	check_driver(src, dst, &r);
	check_nvidia_compat(src, dst, &r);
	check_board(src, dst, &r);
	check_ecc(src, dst, &r);
	check_topology(src, dst, &r);
	check_capacity(src, dst, &r);
	check_params(src, &r);
	check_qemu_blockers(src, &r);
	check_downtime(src, &r);
	check_postcopy(src, &r);
	*out = r;
}

enum vgpu_mig_verdict vgpu_mig_verdict_of(const struct vgpu_mig_results *r)
{
	enum vgpu_mig_verdict v = VGPU_MIG_GO;

	for (size_t i = 0; i < r->n; i++) {
		if (r->items[i].status == VGPU_MIG_FAIL)
			return VGPU_MIG_NO_GO;
		if (r->items[i].status == VGPU_MIG_UNKNOWN)
			v = VGPU_MIG_UNSURE;
	}
	return v;
}

const struct vgpu_mig_result *vgpu_mig_result_find(const struct vgpu_mig_results *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->items[i].id, id))
			return &r->items[i];
	return NULL;
}

void vgpu_mig_results_free(struct vgpu_mig_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].what);
		free(r->items[i].source);
		free(r->items[i].target);
		free(r->items[i].next);
	}
	free(r->items);
	r->items = NULL;
	r->n = 0;
}
