// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * migrate-manifest.c - the migration manifest and offer as JSON: a writer
 * and a bounded reader of just this document (pure: no I/O).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "migrate-manifest.h"
#include "util.h"

#define MAX_DEPTH 16

/* ---- writing ------------------------------------------------------------ */

static void put_str(char **s, const char *v)
{
	vgpu_append(s, "\"");
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c == '"' || c == '\\')
			vgpu_append(s, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			vgpu_append(s, "\\u%04x", c);
		else
			vgpu_append(s, "%c", c);
	}
	vgpu_append(s, "\"");
}

static void put_ver(char **s, const char *key, unsigned long v)
{
	if (v)
		vgpu_append(s, "  \"%s\": \"%lu.%lu.%lu\",\n", key, v / 1000000, v / 1000 % 1000,
			    v % 1000);
	else
		vgpu_append(s, "  \"%s\": null,\n", key);
}

static const char *tri_json(enum vgpu_tristate t)
{
	return t == VGPU_ON ? "true" : t == VGPU_OFF ? "false" : "null";
}

/* ---- NVML's keys (driver-build, vgpu-metadata, compatibility, runtime state) --------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* NVML's opaque metadata as standard base64 (RFC 4648, padded) */
static void put_b64(char **s, const uint8_t *p, size_t n)
{
	vgpu_append(s, "\"");
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);

		vgpu_append(s, "%c%c%c%c", b64[v >> 18], b64[v >> 12 & 63],
			    i + 1 < n ? b64[v >> 6 & 63] : '=', i + 2 < n ? b64[v & 63] : '=');
	}
	vgpu_append(s, "\"");
}

/* base64 @in to @out (at most @cap bytes); false when it is not base64 or too long */
static bool b64_decode(const char *in, uint8_t *out, size_t cap, size_t *n)
{
	size_t len = strlen(in), k = 0;

	if (len % 4)
		return false;
	for (size_t i = 0; i < len; i += 4) {
		uint32_t v = 0;
		int pad = 0;

		for (int j = 0; j < 4; j++) {
			const char *c = in[i + j] ? strchr(b64, in[i + j]) : NULL;

			if (in[i + j] == '=' && i + 4 == len && j >= 2 &&
			    (j == 3 || in[i + 3] == '=')) {
				pad++;
				v <<= 6;
			} else if (!c || pad) {
				return false;
			} else {
				v = v << 6 | (uint32_t)(c - b64);
			}
		}
		for (int j = 0; j < 3 - pad; j++) {
			if (k >= cap)
				return false;
			out[k++] = (uint8_t)(v >> (16 - 8 * j));
		}
	}
	*n = k;
	return true;
}

/* the host's keys: "driver-build", "driver-build-from" */
static void put_nv_host(char **s, const struct vgpu_mig_host *h)
{
	if (!h->driver_build_from[0] || h->driver_build == VGPU_UNKNOWN) {
		vgpu_append(s, "  \"driver-build\": null,\n");
		return;
	}
	vgpu_append(s, "  \"driver-build\": %s,\n  \"driver-build-from\": ",
		    h->driver_build == VGPU_ON ? "true" : "false");
	put_str(s, h->driver_build_from);
	vgpu_append(s, ",\n");
}

/* a vGPU's keys: "vgpu-metadata", "runtime-state-bytes", "vm-compatibility", "compatibility-limit"
 */
static void put_nv_vgpu(char **s, const struct vgpu_mig_vgpu *v)
{
	if (v->nv_metadata_len && v->nv_metadata_len <= sizeof(v->nv_metadata)) {
		vgpu_append(s, ", \"vgpu-metadata\": ");
		put_b64(s, v->nv_metadata, v->nv_metadata_len);
	}
	if (v->runtime_state_bytes)
		vgpu_append(s, ", \"runtime-state-bytes\": %llu",
			    (unsigned long long)v->runtime_state_bytes);
	if (v->has_nv_compat)
		vgpu_append(s, ", \"vm-compatibility\": %u, \"compatibility-limit\": %u",
			    (unsigned)v->nv_compat, (unsigned)v->nv_limit);
}

/* ---- the shared plan's keys (migrate-plan.h): migrate-offer, migrate-xml ------------------ */

static const char *iface_json(enum vgpu_iface i)
{
	return i == VGPU_IFACE_MDEV ? "mdev" : i == VGPU_IFACE_VENDOR_VFIO ? "vf" : "?";
}

/* the host's keys: the domain's "uuid", "vcpus", "memory-kib", "pinned"; the offer's "plan" */
static void put_plan_host(char **s, const struct vgpu_mig_host *h)
{
	if (h->uuid[0]) {
		vgpu_append(s, "  \"uuid\": ");
		put_str(s, h->uuid);
		vgpu_append(s, ",\n  \"vcpus\": %u,\n  \"memory-kib\": %llu,\n  \"pinned\": %s,\n",
			    h->vcpus, (unsigned long long)h->memory_kib,
			    h->pinned ? "true" : "false");
	}
	if (h->plan_error[0]) {
		vgpu_append(s, "  \"plan-error\": ");
		put_str(s, h->plan_error);
		vgpu_append(s, ",\n");
	} else if (h->plan) {
		char cpus[VGPU_CPULIST_LEN];

		vgpu_append(s, "  \"plan\": { \"node\": %d, \"cpus\": ", h->plan->node);
		put_str(s, vgpu_cpulist_format(&h->plan->cpus, cpus, sizeof(cpus)));
		vgpu_append(s, ", \"pins\": [");
		for (unsigned i = 0; i < h->plan->n_pins; i++)
			vgpu_append(s, "%s%u", i ? ", " : "", h->plan->pins[i]);
		vgpu_append(s, "] },\n");
	}
}

/* a vGPU's keys: the source's "display"; the offer's "landing" */
static void put_plan_vgpu(char **s, const struct vgpu_mig_host *h, size_t i)
{
	const struct vgpu_mplan_landing *l;

	if (h->vgpus[i].display)
		vgpu_append(s, ", \"display\": true");
	if (!h->plan || h->plan_error[0] || i >= h->plan->n_landing)
		return;
	l = &h->plan->landing[i];
	vgpu_append(s, ", \"landing\": { \"gpu\": ");
	put_str(s, l->gpu);
	vgpu_append(s, ", \"parent\": ");
	put_str(s, l->parent);
	vgpu_append(s, ", \"interface\": \"%s\", \"type-id\": %u, \"type\": ", iface_json(l->iface),
		    l->type_id);
	put_str(s, l->profile);
	vgpu_append(s, ", \"mdev-uuid\": ");
	put_str(s, l->mdev_uuid);
	vgpu_append(s, ", \"changed\": %s }", l->changed ? "true" : "false");
}

char *vgpu_mig_manifest_format(const struct vgpu_mig_host *h)
{
	char *s = NULL;

	vgpu_append(&s, "{\n  \"vgpuctl-migrate\": %d,\n", VGPU_MIG_MANIFEST_VERSION);
	put_ver(&s, "libvirt", h->libvirt);
	put_ver(&s, "qemu", h->qemu);
	put_ver(&s, "kernel", h->kernel);
	vgpu_append(&s, "  \"driver-version\": ");
	if (h->driver_version[0])
		put_str(&s, h->driver_version);
	else
		vgpu_append(&s, "null");
	vgpu_append(&s, ",\n");
	put_nv_host(&s, h);
	put_plan_host(&s, h);
	vgpu_append(&s, "  \"vgpus\": [");
	for (size_t i = 0; i < h->n_vgpus; i++) {
		const struct vgpu_mig_vgpu *v = &h->vgpus[i];

		vgpu_append(&s, "%s\n    { \"type-id\": %u, \"type\": ", i ? "," : "", v->type_id);
		put_str(&s, v->type_name);
		vgpu_append(&s, ", \"interface\": \"%s\"",
			    v->iface == VGPU_IFACE_MDEV	       ? "mdev" :
			    v->iface == VGPU_IFACE_VENDOR_VFIO ? "vf" :
								 "?");
		if (v->pci_device)
			vgpu_append(&s, ", \"pci-device\": \"%04x\"", v->pci_device);
		if (v->pci_subsystem)
			vgpu_append(&s, ", \"pci-subsystem\": \"%04x:%04x\"",
				    v->pci_subsystem >> 16, v->pci_subsystem & 0xffff);
		if (v->fb_mib)
			vgpu_append(&s, ", \"framebuffer-mib\": %llu",
				    (unsigned long long)v->fb_mib);
		vgpu_append(
			&s,
			", \"ecc\": %s, \"enable_uvm\": %s, \"enable_debugging\": %s, \"enable_profiling\": %s",
			tri_json(v->ecc), tri_json(v->enable_uvm), tri_json(v->enable_debugging),
			tri_json(v->enable_profiling));
		put_nv_vgpu(&s, v);
		/* NVLink's key (topology): the GPU's active NVLinks, left out when not known */
		if (v->has_nvlinks)
			vgpu_append(&s, ", \"nvlinks\": %u", v->nvlinks);
		/* libvirt's keys: downtime's sizes, migrate-xml's device */
		if (v->type_fb_mib)
			vgpu_append(&s, ", \"type-framebuffer-mib\": %llu",
				    (unsigned long long)v->type_fb_mib);
		if (v->mdev_uuid[0]) {
			vgpu_append(&s, ", \"mdev-uuid\": ");
			put_str(&s, v->mdev_uuid);
		}
		if (v->parent[0]) {
			vgpu_append(&s, ", \"parent\": ");
			put_str(&s, v->parent);
		}
		if (v->numa_node >= 0)
			vgpu_append(&s, ", \"numa-node\": %d", v->numa_node);
		if (v->cpus[0]) {
			vgpu_append(&s, ", \"cpus\": ");
			put_str(&s, v->cpus);
		}
		put_plan_vgpu(&s, h, i);
		if (h->reasons && h->reasons[i] != VGPU_CAP_OK) {
			vgpu_append(&s, ", \"reason\": \"%s\"",
				    vgpu_cap_reason_code(h->reasons[i]));
		} else if (h->reasons) {
			vgpu_append(&s, ", \"device\": ");
			put_str(&s, h->devices ? h->devices[i] : "");
		}
		vgpu_append(&s, " }");
	}
	vgpu_append(&s, "%s]\n}\n", h->n_vgpus ? "\n  " : "");
	return s;
}

/* ---- reading ------------------------------------------------------------ */

struct jp {
	const char *start, *p, *end;
	struct vgpu_ctx *ctx;
	int err; /* the first error, 0 none */
};

static bool bad(struct jp *j, const char *what)
{
	if (!j->err)
		j->err = vgpu_error(j->ctx, -EINVAL, "migration manifest, at byte %td: %s",
				    j->p - j->start, what);
	return false;
}

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool eat(struct jp *j, char c)
{
	ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string into @buf (NULL: skipped); a character outside ASCII becomes '?'. */
static bool str(struct jp *j, char *buf, size_t size)
{
	size_t n = 0;

	if (!eat(j, '"'))
		return bad(j, "a string was expected");
	while (j->p < j->end && *j->p != '"') {
		unsigned c = (unsigned char)*j->p++;

		if (c < 0x20)
			return bad(j, "a control character in a string");
		if (c == '\\') {
			if (j->p >= j->end)
				break;
			c = (unsigned char)*j->p++;
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'u': {
				unsigned u = 0;

				for (int k = 0; k < 4; k++) {
					int h = j->p < j->end ? hexval(*j->p++) : -1;

					if (h < 0)
						return bad(j, "a bad \\u escape");
					u = u << 4 | (unsigned)h;
				}
				c = u < 0x80 ? u : '?';
				break;
			}
			case '"':
			case '\\':
			case '/':
				break;
			default:
				return bad(j, "a bad escape in a string");
			}
		} else if (c >= 0x80) {
			c = '?';
		}
		if (buf) {
			if (n + 1 >= size)
				return bad(j, "a string is too long");
			buf[n++] = (char)c;
		}
	}
	if (j->p >= j->end)
		return bad(j, "a string does not end");
	j->p++;
	if (buf)
		buf[n] = '\0';
	return true;
}

static bool word(struct jp *j, const char *w)
{
	size_t n = strlen(w);

	ws(j);
	if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, w, n)) {
		j->p += n;
		return true;
	}
	return false;
}

/* A number; @v gets it when it is a whole number from 0 to 2^53. */
static bool num(struct jp *j, unsigned long long *v, bool *whole)
{
	const char *s;
	unsigned long long x = 0;

	ws(j);
	s = j->p;
	*whole = true;
	if (j->p < j->end && *j->p == '-') {
		*whole = false;
		j->p++;
	}
	while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || strchr(".eE+-", *j->p))) {
		if (*j->p < '0' || *j->p > '9')
			*whole = false;
		else if (x < (1ULL << 53))
			x = x * 10 + (unsigned)(*j->p - '0');
		j->p++;
	}
	if (j->p == s)
		return bad(j, "a value was expected");
	if (x >= (1ULL << 53))
		*whole = false;
	*v = x;
	return true;
}

static bool skip(struct jp *j, int depth)
{
	unsigned long long v;
	bool whole;

	if (depth > MAX_DEPTH)
		return bad(j, "nested too deep");
	ws(j);
	if (j->p >= j->end)
		return bad(j, "the text ends early");
	if (*j->p == '"')
		return str(j, NULL, 0);
	if (eat(j, '{')) {
		if (eat(j, '}'))
			return true;
		do {
			if (!str(j, NULL, 0) || !(eat(j, ':') || bad(j, "':' was expected")) ||
			    !skip(j, depth + 1))
				return false;
		} while (eat(j, ','));
		return eat(j, '}') || bad(j, "'}' was expected");
	}
	if (eat(j, '[')) {
		if (eat(j, ']'))
			return true;
		do {
			if (!skip(j, depth + 1))
				return false;
		} while (eat(j, ','));
		return eat(j, ']') || bad(j, "']' was expected");
	}
	if (word(j, "true") || word(j, "false") || word(j, "null"))
		return true;
	return num(j, &v, &whole);
}

static bool tri(struct jp *j, enum vgpu_tristate *t)
{
	if (word(j, "true"))
		*t = VGPU_ON;
	else if (word(j, "false"))
		*t = VGPU_OFF;
	else if (word(j, "null"))
		*t = VGPU_UNKNOWN;
	else
		return bad(j, "true, false or null was expected");
	return true;
}

/* A whole number up to @max, or null (0). */
static bool whole_num(struct jp *j, unsigned long long max, unsigned long long *v)
{
	bool whole;

	if (word(j, "null")) {
		*v = 0;
		return true;
	}
	if (!num(j, v, &whole))
		return false;
	if (!whole || *v > max)
		return bad(j, "a whole number in range was expected");
	return true;
}

/* A string, or null (""). */
static bool ostr(struct jp *j, char *buf, size_t size)
{
	if (word(j, "null")) {
		buf[0] = '\0';
		return true;
	}
	return str(j, buf, size);
}

/* An mdev UUID or null (""); @what names it in the error. */
static bool ouuid(struct jp *j, char out[VGPU_UUID_LEN], const char *what)
{
	char buf[64];

	if (!ostr(j, buf, sizeof(buf)))
		return false;
	if (buf[0] && !vgpu_uuid_valid(buf))
		return bad(j, what);
	if (!buf[0]) {
		out[0] = '\0';
		return true;
	}
	memcpy(out, buf, VGPU_UUID_LEN); /* a valid UUID is 36 characters and its NUL */
	return true;
}

static bool hex16(const char *s, unsigned *v)
{
	char *end;
	unsigned long x;

	if (hexval(s[0]) < 0)
		return false;
	x = strtoul(s, &end, 16);
	if (end - s != 4 || x > 0xffff)
		return false;
	*v = (unsigned)x;
	return true;
}

/* ---- the shared plan's keys (migrate-plan.h), read ------------------------------------------ */

static bool boolean(struct jp *j, bool *b)
{
	if (word(j, "true"))
		*b = true;
	else if (word(j, "false") || word(j, "null"))
		*b = false;
	else
		return bad(j, "true or false was expected");
	return true;
}

static enum vgpu_iface iface_of(const char *s)
{
	return !strcmp(s, "mdev") ? VGPU_IFACE_MDEV :
	       !strcmp(s, "vf")	  ? VGPU_IFACE_VENDOR_VFIO :
				    VGPU_IFACE_NONE;
}

/* "landing": {"gpu", "parent", "interface", "type-id", "type", "mdev-uuid", "changed"} */
static bool parse_landing(struct jp *j, struct vgpu_mplan_landing *l)
{
	char key[32], buf[64];
	unsigned long long x;

	memset(l, 0, sizeof(*l));
	if (!eat(j, '{'))
		return bad(j, "a landing object was expected");
	if (eat(j, '}'))
		return true;
	do {
		if (!str(j, key, sizeof(key)) || !(eat(j, ':') || bad(j, "':' was expected")))
			return false;
		if (!strcmp(key, "gpu") || !strcmp(key, "parent")) {
			if (!ostr(j, buf, sizeof(buf)))
				return false;
			if (buf[0] &&
			    vgpu_bdf_normalize(buf, key[0] == 'g' ? l->gpu : l->parent) < 0)
				return bad(j, "a landing's gpu or parent is not a PCI address");
		} else if (!strcmp(key, "interface")) {
			if (!ostr(j, buf, sizeof(buf)))
				return false;
			l->iface = iface_of(buf);
		} else if (!strcmp(key, "type-id")) {
			if (!whole_num(j, 0xffffffffULL, &x))
				return false;
			l->type_id = (unsigned)x;
		} else if (!strcmp(key, "type")) {
			if (!ostr(j, l->profile, sizeof(l->profile)))
				return false;
		} else if (!strcmp(key, "mdev-uuid")) {
			if (!ouuid(j, l->mdev_uuid, "a landing's mdev-uuid is not a UUID"))
				return false;
		} else if (!strcmp(key, "changed")) {
			if (!boolean(j, &l->changed))
				return false;
		} else if (!skip(j, 3)) {
			return false;
		}
	} while (eat(j, ','));
	return eat(j, '}') || bad(j, "'}' was expected");
}

static struct vgpu_mplan *plan_of(struct vgpu_mig_host *h)
{
	if (!h->plan) {
		h->plan = vgpu_xcalloc(1, sizeof(*h->plan));
		h->plan->node = -1;
	}
	return h->plan;
}

/* "plan": {"node", "cpus", "pins"}: the domain's side of the target's plan */
static bool parse_plan(struct jp *j, struct vgpu_mplan *p)
{
	VGPU_AUTOFREE char *cpus = vgpu_xmalloc(VGPU_CPULIST_LEN);
	unsigned long long x;
	char key[32];

	if (!eat(j, '{'))
		return bad(j, "plan is not an object");
	if (eat(j, '}'))
		return true;
	do {
		if (!str(j, key, sizeof(key)) || !(eat(j, ':') || bad(j, "':' was expected")))
			return false;
		if (!strcmp(key, "node")) {
			if (word(j, "null")) {
				p->node = -1;
			} else {
				if (!whole_num(j, 4095, &x))
					return false;
				p->node = (int)x;
			}
		} else if (!strcmp(key, "cpus")) {
			if (!ostr(j, cpus, VGPU_CPULIST_LEN))
				return false;
			vgpu_cpuset_zero(&p->cpus);
			if (cpus[0] && vgpu_cpulist_parse(cpus, &p->cpus) < 0)
				return bad(j, "the plan's cpus is not a CPU list");
		} else if (!strcmp(key, "pins")) {
			p->n_pins = 0;
			if (!eat(j, '['))
				return bad(j, "pins is not a list");
			if (!eat(j, ']')) {
				do {
					if (p->n_pins >= VGPU_MAX_CPUS)
						return bad(j, "too many pins");
					if (!whole_num(j, VGPU_MAX_CPUS - 1, &x))
						return false;
					p->pins[p->n_pins++] = (unsigned)x;
				} while (eat(j, ','));
				if (!eat(j, ']'))
					return bad(j, "']' was expected");
			}
		} else if (!skip(j, 2)) {
			return false;
		}
	} while (eat(j, ','));
	return eat(j, '}') || bad(j, "'}' was expected");
}

/* The host's keys of the shared plan; *known false when @key is none of them. */
static bool plan_host_key(struct jp *j, const char *key, struct vgpu_mig_host *h, bool *known)
{
	unsigned long long x;

	*known = true;
	if (!strcmp(key, "uuid")) {
		char buf[64];

		if (!ostr(j, buf, sizeof(buf)))
			return false;
		if (buf[0] && !vgpu_uuid_normalize(buf, h->uuid))
			return bad(j, "uuid is not a UUID");
		return true;
	}
	if (!strcmp(key, "vcpus")) {
		if (!whole_num(j, VGPU_MAX_CPUS, &x))
			return false;
		h->vcpus = (unsigned)x;
		return true;
	}
	if (!strcmp(key, "memory-kib")) {
		if (!whole_num(j, 1ULL << 50, &x))
			return false;
		h->memory_kib = x;
		return true;
	}
	if (!strcmp(key, "pinned"))
		return boolean(j, &h->pinned);
	if (!strcmp(key, "plan"))
		return parse_plan(j, plan_of(h));
	if (!strcmp(key, "plan-error"))
		return ostr(j, h->plan_error, sizeof(h->plan_error));
	*known = false;
	return true;
}

/* ---- one vGPU object: a table of its keys ------------------------------------------------ */

/* What one vGPU object fills: the vGPU, and the offer's and the plan's sides of it. */
struct vgpu_obj {
	struct vgpu_mig_vgpu *v;
	char *device; /* 32 bytes: the offer's device */
	enum vgpu_cap_reason *reason;
	int *offered; /* 1 once "device" or "reason" was read */
	struct vgpu_mplan_landing *landing;
	bool *has_landing;
	char key[32]; /* the key being read */
};

/* How a key's value is read: into a field of struct vgpu_mig_vgpu, or by a function. */
enum vgpu_key_kind { VK_UINT, VK_U64, VK_STR, VK_TRI, VK_BOOL, VK_FN };

struct vgpu_key {
	const char *name;
	enum vgpu_key_kind kind;
	size_t off; /* the field in struct vgpu_mig_vgpu */
	unsigned long long lim; /* VK_UINT, VK_U64: the largest value; VK_STR: the field's size */
	bool (*fn)(struct jp *j, struct vgpu_obj *o); /* VK_FN */
};

static bool key_interface(struct jp *j, struct vgpu_obj *o)
{
	char buf[64];

	if (!ostr(j, buf, sizeof(buf)))
		return false;
	o->v->iface = iface_of(buf);
	return true;
}

static bool key_pci_device(struct jp *j, struct vgpu_obj *o)
{
	char buf[64];
	unsigned a = 0;

	if (!ostr(j, buf, sizeof(buf)))
		return false;
	if (buf[0] && !hex16(buf, &a))
		return bad(j, "pci-device is not 4 hex digits");
	o->v->pci_device = buf[0] ? (uint16_t)a : 0;
	return true;
}

static bool key_pci_subsystem(struct jp *j, struct vgpu_obj *o)
{
	char buf[64] = "";
	unsigned a = 0, b = 0;
	bool ok;

	if (!ostr(j, buf, sizeof(buf)))
		return false;
	ok = strlen(buf) == 9 && buf[4] == ':';
	if (ok) {
		buf[4] = '\0';
		ok = hex16(buf, &a) && hex16(buf + 5, &b);
	}
	if (buf[0] && !ok)
		return bad(j, "pci-subsystem is not VVVV:DDDD");
	o->v->pci_subsystem = buf[0] ? (uint32_t)a << 16 | b : 0;
	return true;
}

static bool key_metadata(struct jp *j, struct vgpu_obj *o)
{
	char text[VGPU_MIG_NV_METADATA_MAX / 3 * 4 + 8];

	if (!ostr(j, text, sizeof(text)))
		return false;
	if (!b64_decode(text, o->v->nv_metadata, sizeof(o->v->nv_metadata), &o->v->nv_metadata_len))
		return bad(j, "vgpu-metadata is not base64 of at most 1024 bytes");
	return true;
}

/* vm-compatibility or compatibility-limit: the limit alone says nothing */
static bool key_compat(struct jp *j, struct vgpu_obj *o)
{
	unsigned long long x;
	bool vm = o->key[0] == 'v';

	if (!whole_num(j, 0xffffffffULL, &x))
		return false;
	*(vm ? &o->v->nv_compat : &o->v->nv_limit) = (uint32_t)x;
	o->v->has_nv_compat |= vm;
	return true;
}

/* NVLink's key (topology): null when NVML did not answer */
static bool key_nvlinks(struct jp *j, struct vgpu_obj *o)
{
	unsigned long long x;

	o->v->has_nvlinks = false;
	o->v->nvlinks = 0;
	if (word(j, "null"))
		return true;
	if (!whole_num(j, 1024, &x))
		return false;
	o->v->has_nvlinks = true;
	o->v->nvlinks = (unsigned)x;
	return true;
}

static bool key_mdev_uuid(struct jp *j, struct vgpu_obj *o)
{
	return ouuid(j, o->v->mdev_uuid, "mdev-uuid is not a UUID");
}

static bool key_parent(struct jp *j, struct vgpu_obj *o)
{
	char buf[64];

	if (!ostr(j, buf, sizeof(buf)))
		return false;
	if (!buf[0])
		o->v->parent[0] = '\0';
	else if (vgpu_bdf_normalize(buf, o->v->parent) < 0)
		return bad(j, "parent is not a PCI address");
	return true;
}

static bool key_numa_node(struct jp *j, struct vgpu_obj *o)
{
	unsigned long long x;

	if (word(j, "null")) {
		o->v->numa_node = -1;
		return true;
	}
	if (!whole_num(j, 4095, &x))
		return false;
	o->v->numa_node = (int)x;
	return true;
}

static bool key_device(struct jp *j, struct vgpu_obj *o)
{
	if (!ostr(j, o->device, 32))
		return false;
	*o->reason = VGPU_CAP_OK;
	*o->offered = 1;
	return true;
}

static bool key_reason(struct jp *j, struct vgpu_obj *o)
{
	char buf[64];

	if (!ostr(j, buf, sizeof(buf)))
		return false;
	for (int r = 1; r < VGPU_CAP_N_REASONS; r++)
		if (!strcmp(buf, vgpu_cap_reason_code((enum vgpu_cap_reason)r))) {
			*o->reason = (enum vgpu_cap_reason)r;
			*o->offered = 1;
			return true;
		}
	return bad(j, "the reason is not one of the capacity model's codes");
}

static bool key_landing(struct jp *j, struct vgpu_obj *o)
{
	if (!parse_landing(j, o->landing))
		return false;
	*o->has_landing = true;
	return true;
}

/* a field of struct vgpu_mig_vgpu: where it is, how large */
#define VOFF(field) offsetof(struct vgpu_mig_vgpu, field)
#define VSIZE(field) sizeof(((struct vgpu_mig_vgpu *)0)->field)

static const struct vgpu_key vgpu_keys[] = {
	{ "type-id", VK_UINT, VOFF(type_id), 0xffffffffULL, NULL },
	{ "type", VK_STR, VOFF(type_name), VSIZE(type_name), NULL },
	{ "interface", VK_FN, 0, 0, key_interface },
	{ "pci-device", VK_FN, 0, 0, key_pci_device },
	{ "pci-subsystem", VK_FN, 0, 0, key_pci_subsystem },
	{ "framebuffer-mib", VK_U64, VOFF(fb_mib), 1ULL << 40, NULL },
	{ "ecc", VK_TRI, VOFF(ecc), 0, NULL },
	{ "enable_uvm", VK_TRI, VOFF(enable_uvm), 0, NULL },
	{ "enable_debugging", VK_TRI, VOFF(enable_debugging), 0, NULL },
	{ "enable_profiling", VK_TRI, VOFF(enable_profiling), 0, NULL },
	{ "vgpu-metadata", VK_FN, 0, 0, key_metadata },
	/* libvirt's keys */
	{ "type-framebuffer-mib", VK_U64, VOFF(type_fb_mib), 1ULL << 40, NULL },
	{ "runtime-state-bytes", VK_U64, VOFF(runtime_state_bytes), 1ULL << 50, NULL },
	{ "vm-compatibility", VK_FN, 0, 0, key_compat },
	{ "compatibility-limit", VK_FN, 0, 0, key_compat },
	{ "nvlinks", VK_FN, 0, 0, key_nvlinks },
	/* the offer's keys */
	{ "mdev-uuid", VK_FN, 0, 0, key_mdev_uuid },
	{ "parent", VK_FN, 0, 0, key_parent },
	{ "numa-node", VK_FN, 0, 0, key_numa_node },
	{ "cpus", VK_STR, VOFF(cpus), VSIZE(cpus), NULL },
	{ "device", VK_FN, 0, 0, key_device },
	{ "reason", VK_FN, 0, 0, key_reason },
	/* the shared plan's keys */
	{ "display", VK_BOOL, VOFF(display), 0, NULL },
	{ "landing", VK_FN, 0, 0, key_landing },
};

/* The value of key @k into @o. */
static bool vgpu_key_read(struct jp *j, const struct vgpu_key *k, struct vgpu_obj *o)
{
	char *field = (char *)o->v + k->off;
	unsigned long long x;

	switch (k->kind) {
	case VK_UINT:
	case VK_U64:
		if (!whole_num(j, k->lim, &x))
			return false;
		if (k->kind == VK_UINT) {
			unsigned u = (unsigned)x;

			memcpy(field, &u, sizeof(u));
		} else {
			uint64_t u = x;

			memcpy(field, &u, sizeof(u));
		}
		return true;
	case VK_STR:
		return ostr(j, field, (size_t)k->lim);
	case VK_TRI:
		return tri(j, (enum vgpu_tristate *)(void *)field);
	case VK_BOOL:
		return boolean(j, (bool *)(void *)field);
	case VK_FN:
		break;
	}
	return k->fn(j, o);
}

static bool parse_vgpu(struct jp *j, struct vgpu_mig_vgpu *v, char *device,
		       enum vgpu_cap_reason *reason, int *offered,
		       struct vgpu_mplan_landing *landing, bool *has_landing)
{
	struct vgpu_obj o = { .v = v,
			      .device = device,
			      .reason = reason,
			      .offered = offered,
			      .landing = landing,
			      .has_landing = has_landing };

	*v = (struct vgpu_mig_vgpu){ .ecc = VGPU_UNKNOWN,
				     .enable_uvm = VGPU_UNKNOWN,
				     .enable_debugging = VGPU_UNKNOWN,
				     .enable_profiling = VGPU_UNKNOWN,
				     .numa_node = -1 };
	*offered = 0;
	*has_landing = false;
	if (!eat(j, '{'))
		return bad(j, "a vGPU object was expected");
	if (eat(j, '}'))
		return true;
	do {
		const struct vgpu_key *k = NULL;

		if (!str(j, o.key, sizeof(o.key)) || !(eat(j, ':') || bad(j, "':' was expected")))
			return false;
		for (size_t i = 0; !k && i < ARRAY_SIZE(vgpu_keys); i++)
			if (!strcmp(o.key, vgpu_keys[i].name))
				k = &vgpu_keys[i];
		if (k ? !vgpu_key_read(j, k, &o) : !skip(j, 2))
			return false;
	} while (eat(j, ','));
	return eat(j, '}') || bad(j, "'}' was expected");
}

static bool parse_vgpus(struct jp *j, struct vgpu_mig_host *h, size_t *offered)
{
	*offered = 0;
	if (!eat(j, '['))
		return bad(j, "vgpus is not a list");
	if (eat(j, ']'))
		return true;
	do {
		size_t n = h->n_vgpus;
		struct vgpu_mplan_landing landing;
		bool has_landing;
		int off;

		if (n >= VGPU_MIG_MANIFEST_MAX_VGPUS) {
			j->err = vgpu_error(j->ctx, -E2BIG,
					    "migration manifest: more than %d vGPUs",
					    VGPU_MIG_MANIFEST_MAX_VGPUS);
			return false;
		}
		h->vgpus = vgpu_xreallocarray(h->vgpus, n + 1, sizeof(*h->vgpus));
		h->reasons = vgpu_xreallocarray(h->reasons, n + 1, sizeof(*h->reasons));
		h->devices = vgpu_xreallocarray(h->devices, n + 1, sizeof(*h->devices));
		h->reasons[n] = VGPU_CAP_OK;
		h->devices[n][0] = '\0';
		h->n_vgpus++;
		if (!parse_vgpu(j, &h->vgpus[n], h->devices[n], &h->reasons[n], &off, &landing,
				&has_landing))
			return false;
		if (has_landing) { /* the shared plan's: in order, one per vGPU */
			if (n >= VGPU_MAX_VGPUS || (h->plan && h->plan->n_landing != n))
				return bad(j, "a landing out of place");
			plan_of(h)->landing[n] = landing;
			h->plan->n_landing = n + 1;
		}
		*offered += (size_t)off;
	} while (eat(j, ','));
	return eat(j, ']') || bad(j, "']' was expected");
}

static bool version(struct jp *j, unsigned long *v)
{
	char buf[64];

	if (!ostr(j, buf, sizeof(buf)))
		return false;
	*v = vgpu_mig_version_parse(buf);
	return true;
}

/* "driver-build": known when "driver-build-from" names who said, "?" until it does */
static bool driver_build(struct jp *j, struct vgpu_mig_host *h)
{
	if (!tri(j, &h->driver_build))
		return false;
	if (!h->driver_build_from[0] && h->driver_build != VGPU_UNKNOWN)
		strcpy(h->driver_build_from, "?");
	return true;
}

int vgpu_mig_manifest_parse(struct vgpu_ctx *ctx, const char *text, size_t len,
			    struct vgpu_mig_host *out)
{
	struct jp j = { .start = text, .p = text, .end = text + len, .ctx = ctx };
	struct vgpu_mig_host h = { 0 };
	unsigned long long format = 0;
	size_t offered = 0;
	bool ok = true, vgpus = false, known;
	char key[32];

	if (len > VGPU_MIG_MANIFEST_MAX)
		return vgpu_error(ctx, -E2BIG, "migration manifest: larger than %d bytes",
				  VGPU_MIG_MANIFEST_MAX);
	if (!eat(&j, '{'))
		ok = bad(&j, "a JSON object was expected");
	else if (!eat(&j, '}')) {
		do {
			ok = str(&j, key, sizeof(key)) &&
			     (eat(&j, ':') || bad(&j, "':' was expected"));
			if (!ok)
				break;
			if (!strcmp(key, "vgpuctl-migrate"))
				ok = whole_num(&j, 1000, &format);
			else if (!strcmp(key, "libvirt"))
				ok = version(&j, &h.libvirt);
			else if (!strcmp(key, "qemu"))
				ok = version(&j, &h.qemu);
			else if (!strcmp(key, "kernel"))
				ok = version(&j, &h.kernel);
			else if (!strcmp(key, "driver-version"))
				ok = ostr(&j, h.driver_version, sizeof(h.driver_version));
			else if (!strcmp(key, "driver-build"))
				ok = driver_build(&j, &h);
			else if (!strcmp(key, "driver-build-from"))
				ok = ostr(&j, h.driver_build_from, sizeof(h.driver_build_from));
			else if (!strcmp(key, "vgpus"))
				ok = vgpus = parse_vgpus(&j, &h, &offered);
			else if (!(ok = plan_host_key(&j, key, &h, &known)) || !known)
				ok = ok && skip(&j, 1);
		} while (ok && eat(&j, ','));
		if (ok && !eat(&j, '}'))
			ok = bad(&j, "'}' was expected");
	}
	if (ok) {
		ws(&j);
		if (j.p != j.end)
			ok = bad(&j, "text after the document");
	}
	if (ok && format != VGPU_MIG_MANIFEST_VERSION) {
		j.err = vgpu_error(
			ctx, -EINVAL,
			"migration manifest: format %llu, not %d (\"vgpuctl-migrate\"): run the same vgpuctl on both hosts",
			format, VGPU_MIG_MANIFEST_VERSION);
		ok = false;
	}
	if (ok && !vgpus)
		ok = bad(&j, "no \"vgpus\" list");
	if (ok && offered && offered != h.n_vgpus)
		ok = bad(&j, "some vGPUs name a device or reason and some do not");
	if (ok && h.plan && !h.plan_error[0] && h.plan->n_landing != h.n_vgpus)
		ok = bad(&j, "some vGPUs name a landing and some do not");
	if (!ok) {
		vgpu_mig_offer_clear(&h);
		return j.err ? j.err : -EINVAL;
	}
	if (!offered) {
		free(h.reasons);
		free(h.devices);
		h.reasons = NULL;
		h.devices = NULL;
	}
	*out = h;
	return 0;
}
