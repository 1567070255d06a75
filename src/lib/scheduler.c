// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The vGPU scheduler's RmPVMRL value, the modprobe.d lines that carry it and
 * the kernel log lines that report it.  The layout of the value is the
 * driver's (NVIDIA/open-gpu-kernel-modules src/nvidia/interface/
 * nvrm_registry.h, NV_REG_STR_RM_PVMRL): bit 0 enables the per-VM runlist,
 * bit 1 turns adaptive round robin off (the legacy scheduler), bits 7:4 are
 * the policy (0 equal share, 1 fixed share), bits 21:12 the frequency and
 * 31:24 the averaging factor of adaptive round robin, bits 23:16 the legacy
 * scheduler's time slice in ms.  As NVIDIA's user guides write it (vGPU 17
 * "RmPVMRL Registry Key", AI Enterprise 5.0 §7.3):
 *
 *   0x00          best effort
 *   0x01, 0x11    equal, fixed share: the driver's defaults (adaptive since 15.0)
 *   0xAAFFF001    equal share, adaptive: averaging factor AA (0x01-0x3C, 00
 *   0xAAFFF011    fixed share            the default 33), frequency FFF Hz
 *                                        (0x3F-0x3C0; below 0x3F the driver
 *                                        raises it to 63)
 *   0x00TT0003    equal share, legacy (not adaptive): time slice TT ms
 *   0x00TT0013    fixed share            (0x01-0x1E; 00 the default)
 *
 * Before 15.0 there was no bit 1 and 0x00TT0001 was equal share with a TT
 * ms slice: the driver now reads those bits as the frequency FFF.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "scheduler.h"

#define PVMRL_ENABLE 0x01u /* bit 0 */
#define PVMRL_ARR_OFF 0x02u /* bit 1: the legacy scheduler (time slice TT) */
#define PVMRL_FIXED 0x10u /* bits 7:4 = 1: fixed share (0: equal share) */
#define PVMRL_TT(v) (((v) >> 16) & 0xffu)
#define PVMRL_FFF(v) (((v) >> 12) & 0x3ffu)
#define PVMRL_AA(v) ((v) >> 24)

int vgpu_sched_decode(uint32_t v, struct vgpu_sched *out)
{
	struct vgpu_sched s = { 0 };
	unsigned low = v & 0xff;

	if (v == 0) {
		s.policy = VGPU_SCHED_BEST_EFFORT;
		*out = s;
		return 0;
	}
	/* enabled, no bits NVIDIA does not name (3:2, 11:8) */
	if (!(low & PVMRL_ENABLE) || (low & ~(PVMRL_ENABLE | PVMRL_ARR_OFF | PVMRL_FIXED)) ||
	    (v >> 8) & 0xf)
		return -EINVAL;
	s.policy = low & PVMRL_FIXED ? VGPU_SCHED_FIXED_SHARE : VGPU_SCHED_EQUAL_SHARE;
	if (low & PVMRL_ARR_OFF) {
		/* the legacy scheduler: AA and FFF's low bits (15:12) stay clear */
		if (PVMRL_AA(v) || (v >> 12) & 0xf || PVMRL_TT(v) > VGPU_SCHED_TIMESLICE_MAX)
			return -EINVAL;
		s.legacy = true;
		s.timeslice_ms = PVMRL_TT(v);
	} else if (PVMRL_AA(v) || PVMRL_FFF(v)) {
		/*
		 * adaptive: bits 23:22 are the time slice's alone; a frequency
		 * below 0x3F is read (the driver raises it: old 0x00TT0001
		 * values read so), a factor without a frequency is not
		 */
		if ((v >> 22) & 0x3 || PVMRL_AA(v) > VGPU_SCHED_AVG_MAX || !PVMRL_FFF(v) ||
		    PVMRL_FFF(v) > VGPU_SCHED_FREQ_MAX)
			return -EINVAL;
		s.adaptive = true;
		s.avg_factor = PVMRL_AA(v);
		s.frequency_hz = PVMRL_FFF(v);
	}
	*out = s;
	return 0;
}

int vgpu_sched_encode(const struct vgpu_sched *s, uint32_t *out)
{
	uint32_t pol = PVMRL_ENABLE;

	switch (s->policy) {
	case VGPU_SCHED_BEST_EFFORT:
		if (s->adaptive || s->legacy || s->timeslice_ms || s->avg_factor || s->frequency_hz)
			return -EINVAL;
		*out = 0;
		return 0;
	case VGPU_SCHED_EQUAL_SHARE:
		break;
	case VGPU_SCHED_FIXED_SHARE:
		pol |= PVMRL_FIXED;
		break;
	default:
		return -EINVAL;
	}
	if (!s->adaptive) {
		if (s->avg_factor || s->frequency_hz)
			return -EINVAL;
		if (s->timeslice_ms > VGPU_SCHED_TIMESLICE_MAX)
			return -ERANGE;
		/* a time slice is the legacy scheduler's: bit 1 */
		if (s->legacy || s->timeslice_ms)
			pol |= PVMRL_ARR_OFF;
		*out = (uint32_t)s->timeslice_ms << 16 | pol;
		return 0;
	}
	if (s->timeslice_ms || s->legacy)
		return -EINVAL;
	/* written only in NVIDIA's ranges (the driver would raise a lower frequency) */
	if (s->avg_factor > VGPU_SCHED_AVG_MAX || s->frequency_hz < VGPU_SCHED_FREQ_MIN ||
	    s->frequency_hz > VGPU_SCHED_FREQ_MAX)
		return -ERANGE;
	*out = (uint32_t)s->avg_factor << 24 | (uint32_t)s->frequency_hz << 12 | pol;
	return 0;
}

static const char *const policy_names[] = { NULL, "best-effort", "equal-share", "fixed-share" };
static const char *const policy_nv[] = { NULL, "BEST_EFFORT", "EQUAL_SHARE", "FIXED_SHARE" };

const char *vgpu_sched_policy_name(enum vgpu_sched_policy p)
{
	return (unsigned)p < ARRAY_SIZE(policy_names) ? policy_names[p] : NULL;
}

int vgpu_sched_policy_parse(const char *s, enum vgpu_sched_policy *out)
{
	for (size_t i = 1; i < ARRAY_SIZE(policy_names); i++)
		if (strcmp(s, policy_names[i]) == 0 || strcmp(s, policy_nv[i]) == 0) {
			*out = (enum vgpu_sched_policy)i;
			return 0;
		}
	return -EINVAL;
}

void vgpu_sched_text(const struct vgpu_sched *s, char *buf, size_t len)
{
	const char *name = vgpu_sched_policy_name(s->policy);

	if (!name)
		snprintf(buf, len, "%s", "");
	else if (s->adaptive)
		/* the frequency the driver runs: below 63 Hz it raises it */
		snprintf(buf, len, "%s adaptive %u/%uHz", name,
			 s->avg_factor ? s->avg_factor : VGPU_SCHED_AVG_DEFAULT,
			 s->frequency_hz < VGPU_SCHED_FREQ_MIN ? VGPU_SCHED_FREQ_MIN :
								 s->frequency_hz);
	else if (s->timeslice_ms)
		snprintf(buf, len, "%s %ums", name, s->timeslice_ms);
	else
		snprintf(buf, len, "%s", name);
}

bool vgpu_sched_differs(const struct vgpu_sched *want, const struct vgpu_sched *live)
{
	if (want->policy != live->policy)
		return true;
	if (want->policy == VGPU_SCHED_BEST_EFFORT)
		return false;
	if (!want->adaptive && !want->legacy && !want->timeslice_ms)
		return false; /* the driver's defaults: whichever round robin it runs */
	if (want->adaptive != live->adaptive && (live->adaptive || live->timeslice_ms))
		return true; /* the log says nothing of adaptive mode: a bare policy is no answer */
	return !want->adaptive && want->timeslice_ms && live->timeslice_ms &&
	       want->timeslice_ms != live->timeslice_ms;
}

/* ---- modprobe.d ---- */

#define REG_GLOBAL "NVreg_RegistryDwords"
#define REG_PER_DEVICE "NVreg_RegistryDwordsPerDevice"
#define REG_KEY "RmPVMRL"

/* "0x11" or "17" to a 32-bit number, the whole string */
static int reg_number(const char *s, size_t len, uint32_t *out)
{
	char buf[32], *end;
	unsigned long long v;

	if (!len || len >= sizeof(buf) || !isdigit((unsigned char)*s))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 0);
	if (errno || *end || v > 0xffffffffull)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static void add_dev(struct vgpu_sched_dev **devs, size_t *n, const char *bdf, uint32_t v)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*devs)[i].bdf, bdf) == 0) {
			(*devs)[i].value = v;
			return;
		}
	*devs = vgpu_xrealloc(*devs, (*n + 1) * sizeof(**devs));
	snprintf((*devs)[*n].bdf, sizeof((*devs)[*n].bdf), "%s", bdf);
	(*devs)[(*n)++].value = v;
}

/*
 * A registry string "Key=Value;Key=Value" (per device: "pci=ADDR;Key=Value;
 * pci=ADDR;..."): its RmPVMRL entries, checked.  @why gets the reason.
 */
static int reg_parse(const char *val, bool per_device, bool *has_global, uint32_t *global,
		     struct vgpu_sched_dev **devs, size_t *n_devs, char *why, size_t whylen)
{
	char cur[VGPU_BDF_LEN] = "";
	const char *p = val;

	while (*p) {
		size_t len = strcspn(p, ";"), klen = strcspn(p, "=;");
		const char *v = p + klen + 1;
		size_t vlen = len > klen ? len - klen - 1 : 0;
		struct vgpu_sched s;
		uint32_t x;

		if (per_device && klen == 3 && strncasecmp(p, "pci", 3) == 0 && klen < len) {
			char addr[64];

			snprintf(addr, sizeof(addr), "%.*s", (int)vlen, v);
			if (vlen >= sizeof(addr) || vgpu_bdf_normalize(addr, cur) < 0) {
				snprintf(why, whylen, "pci=%.*s is not a PCI address", (int)vlen,
					 v);
				return -EINVAL;
			}
		} else if (klen == strlen(REG_KEY) && strncasecmp(p, REG_KEY, klen) == 0) {
			if (klen >= len || reg_number(v, vlen, &x) < 0 ||
			    vgpu_sched_decode(x, &s) < 0) {
				snprintf(
					why, whylen,
					"%.*s is not a scheduler value NVIDIA documents (0x00, 0x01, 0x11, 0xAAFFF001, 0xAAFFF011, 0x00TT0003, 0x00TT0013)",
					(int)len, p);
				return -EINVAL;
			}
			if (!per_device) {
				*has_global = true;
				*global = x;
			} else if (!*cur) {
				snprintf(why, whylen, "%.*s comes before any pci=ADDR", (int)len,
					 p);
				return -EINVAL;
			} else {
				add_dev(devs, n_devs, cur, x);
			}
		}
		p += len;
		if (*p == ';')
			p++;
	}
	return 0;
}

/*
 * The next word of an "options" line into @w (quotes removed), NULL at the
 * end; -1 in *@bad for an unterminated quote.
 */
static const char *next_word(const char *p, char **w, int *bad)
{
	char *o;
	bool q = false;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return NULL;
	o = *w = vgpu_xmalloc(strlen(p) + 1);
	for (; *p && (q || (*p != ' ' && *p != '\t')); p++)
		if (*p == '"')
			q = !q;
		else
			*o++ = *p;
	*o = '\0';
	if (q)
		*bad = -1;
	return p;
}

/* module and parameter names: '-' and '_' are the same to modprobe */
static bool name_is(const char *s, size_t len, const char *name)
{
	if (len != strlen(name))
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] != name[i] && !(strchr("-_", s[i]) && strchr("-_", name[i])))
			return false;
	return true;
}

/*
 * The logical line at *@p (a backslash at the end joins the next), heap;
 * *@p moves past it and *@line counts the physical lines read.
 */
static char *logical_line(const char **p, unsigned *line)
{
	char *logical = vgpu_xstrdup("");

	for (;;) {
		size_t len = strcspn(*p, "\n");
		bool more = len && (*p)[len - 1] == '\\';

		(*line)++;
		vgpu_append(&logical, "%.*s", (int)(more ? len - 1 : len), *p);
		*p += len;
		if (**p)
			(*p)++;
		if (!more || !**p)
			return logical;
	}
}

/* The registry strings an "options nvidia" line sets last: *@dw and *@pd replaced. */
struct conf_line {
	const char *file;
	unsigned first; /* the line number, for errors */
	char **dw, **pd;
};

/* One PARAM=VALUE word of an "options nvidia" line: the scheduler's parameters checked and kept. */
static int conf_param(struct vgpu_ctx *ctx, const struct conf_line *l, const char *w)
{
	size_t klen = strcspn(w, "=");
	const char *val = w[klen] ? w + klen + 1 : "";
	struct vgpu_sched_dev *devs = NULL;
	uint32_t gv = 0;
	size_t nd = 0;
	char why[512];
	bool per, g = false;
	int r;

	if (name_is(w, klen, REG_GLOBAL))
		per = false;
	else if (name_is(w, klen, REG_PER_DEVICE))
		per = true;
	else
		return 0;
	r = reg_parse(val, per, &g, &gv, &devs, &nd, why, sizeof(why));
	free(devs);
	if (r < 0)
		return vgpu_error(ctx, r, "%s:%u: %.*s: %s", l->file, l->first, (int)klen, w, why);
	free(*(per ? l->pd : l->dw));
	*(per ? l->pd : l->dw) = vgpu_xstrdup(val);
	return 0;
}

/* One logical line: its scheduler parameters when it is "options nvidia ...". */
static int conf_line(struct vgpu_ctx *ctx, const struct conf_line *l, const char *logical)
{
	VGPU_AUTOFREE char *w1 = NULL;
	VGPU_AUTOFREE char *w2 = NULL;
	int bad = 0;
	const char *q = next_word(logical, &w1, &bad);

	if (!q || w1[0] == '#' || strcmp(w1, "options") != 0)
		return 0;
	q = next_word(q, &w2, &bad);
	if (!q || !name_is(w2, strlen(w2), "nvidia"))
		return 0;
	for (;;) {
		VGPU_AUTOFREE char *w = NULL;
		int r;

		q = next_word(q, &w, &bad);
		if (bad)
			return vgpu_error(ctx, -EINVAL, "%s:%u: a quote is not closed", l->file,
					  l->first);
		if (!q)
			return 0;
		r = conf_param(ctx, l, w);
		if (r < 0)
			return r;
	}
}

/* A whole file's last values replace the earlier files' (checked already: no error). */
static void conf_take(struct vgpu_sched_conf *c, const char *file, char **dw, char **pd)
{
	if (*dw) {
		free(c->dwords);
		free(c->dwords_from);
		c->dwords = vgpu_steal_ptr(dw);
		c->dwords_from = vgpu_xstrdup(file);
		c->has_global = false;
		c->global = 0;
		reg_parse(c->dwords, false, &c->has_global, &c->global, NULL, NULL, NULL, 0);
	}
	if (*pd) {
		char why[8];

		free(c->per_device);
		free(c->per_device_from);
		free(c->devs);
		c->devs = NULL;
		c->n_devs = 0;
		c->per_device = vgpu_steal_ptr(pd);
		c->per_device_from = vgpu_xstrdup(file);
		reg_parse(c->per_device, true, NULL, NULL, &c->devs, &c->n_devs, why, sizeof(why));
	}
}

int vgpu_sched_conf_parse(struct vgpu_ctx *ctx, struct vgpu_sched_conf *c, const char *file,
			  const char *text)
{
	VGPU_AUTOFREE char *dw = NULL;
	VGPU_AUTOFREE char *pd = NULL;
	struct conf_line l = { .file = file, .dw = &dw, .pd = &pd };
	const char *p = text;
	unsigned line = 0;

	while (*p) {
		VGPU_AUTOFREE char *logical = NULL;
		int r;

		l.first = line + 1;
		logical = logical_line(&p, &line);
		r = conf_line(ctx, &l, logical);
		if (r < 0)
			return r;
	}
	conf_take(c, file, &dw, &pd);
	return 0;
}

void vgpu_sched_conf_clear(struct vgpu_sched_conf *c)
{
	free(c->dwords);
	free(c->dwords_from);
	free(c->per_device);
	free(c->per_device_from);
	free(c->devs);
	memset(c, 0, sizeof(*c));
}

int vgpu_sched_conf_of(const struct vgpu_sched_conf *c, const char *bdf, uint32_t *value,
		       const char **from)
{
	for (size_t i = 0; i < c->n_devs; i++)
		if (strcmp(c->devs[i].bdf, bdf) == 0) {
			*value = c->devs[i].value;
			*from = c->per_device_from;
			return 0;
		}
	if (!c->has_global)
		return -ENOENT;
	*value = c->global;
	*from = c->dwords_from;
	return 0;
}

static void append_value(char **s, uint32_t v)
{
	vgpu_append(s, "%s" REG_KEY "=0x%0*x", **s ? ";" : "", v > 0xff ? 8 : 2, v);
}

/* The index of @bdf in @gpus, or -1. */
static long target_of(const char *bdf, const char *const *gpus, size_t n)
{
	for (size_t i = 0; *bdf && i < n; i++)
		if (strcmp(bdf, gpus[i]) == 0)
			return (long)i;
	return -1;
}

/* @old with RmPVMRL=@vals[i] for each GPU @gpus[i] (per device), or =@vals[0] for all (n 0) */
static char *reg_set(const char *old, const uint32_t *vals, const char *const *gpus, size_t n)
{
	char *out = vgpu_xstrdup("");
	char cur[VGPU_BDF_LEN] = "";
	bool *done = vgpu_xcalloc(n + 1, sizeof(*done));
	const char *p = old ? old : "";

	for (;;) {
		size_t len = strcspn(p, ";"), klen = strcspn(p, "=;");
		bool pci = n && klen == 3 && strncasecmp(p, "pci", 3) == 0 && klen < len;

		/* leaving a target GPU's group: its value goes last in it */
		if ((pci || !*p) && n && target_of(cur, gpus, n) >= 0) {
			append_value(&out, vals[target_of(cur, gpus, n)]);
			for (size_t i = 0; i < n; i++)
				done[i] |= strcmp(cur, gpus[i]) == 0;
		}
		if (!*p)
			break;
		if (pci) {
			char addr[64];

			snprintf(addr, sizeof(addr), "%.*s", (int)(len - klen - 1), p + klen + 1);
			if (vgpu_bdf_normalize(addr, cur) < 0)
				cur[0] = '\0';
		}
		if (len && !(klen == strlen(REG_KEY) && strncasecmp(p, REG_KEY, klen) == 0 &&
			     (!n || target_of(cur, gpus, n) >= 0)))
			vgpu_append(&out, "%s%.*s", *out ? ";" : "", (int)len, p);
		p += len;
		if (*p == ';')
			p++;
	}
	if (!n)
		append_value(&out, vals[0]);
	for (size_t i = 0; i < n; i++)
		if (!done[i]) {
			vgpu_append(&out, "%spci=%s", *out ? ";" : "", gpus[i]);
			append_value(&out, vals[target_of(gpus[i], gpus, n)]);
			done[i] = true;
			for (size_t k = i + 1; k < n; k++)
				done[k] |= strcmp(gpus[i], gpus[k]) == 0;
		}
	free(done);
	return out;
}

char *vgpu_sched_conf_render(const struct vgpu_sched_conf *all, const struct vgpu_sched_conf *ours,
			     const uint32_t *global, const char *const *gpus,
			     const uint32_t *values, size_t n_gpus)
{
	VGPU_AUTOFREE char *dw = NULL;
	VGPU_AUTOFREE char *pd = NULL;
	char *s;

	if (n_gpus)
		pd = reg_set(all->per_device, values, gpus, n_gpus);
	else
		pd = ours->per_device ? vgpu_xstrdup(ours->per_device) : NULL;
	if (global)
		dw = reg_set(all->dwords, global, NULL, 0);
	else
		dw = ours->dwords ? vgpu_xstrdup(ours->dwords) : NULL;
	s = vgpu_xstrdup(
		"# The vGPU scheduler (NVIDIA's RmPVMRL registry key), read when the nvidia\n"
		"# module loads: written by vgpuctl scheduler.\n");
	if (dw && *dw)
		vgpu_append(&s, "options nvidia " REG_GLOBAL "=\"%s\"\n", dw);
	if (pd && *pd)
		vgpu_append(&s, "options nvidia " REG_PER_DEVICE "=\"%s\"\n", pd);
	return s;
}

/* ---- the kernel log ---- */

size_t vgpu_sched_log_parse(const char *text, struct vgpu_sched_log **out)
{
	static const char gpu_at[] = "GPU at ", has[] = " has software scheduler ",
			  policy[] = " with policy ", ts[] = "Software scheduler timeslice set to ";
	struct vgpu_sched_log *v = NULL;
	size_t n = 0;
	long cur = -1;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		VGPU_AUTOFREE char *l = vgpu_xstrndup(p, len);
		const char *a, *h, *w;

		p += len + (p[len] == '\n');
		if ((h = strstr(l, has)) && (a = strstr(l, gpu_at)) && a < h &&
		    (w = strstr(h, policy))) {
			char addr[64], bdf[VGPU_BDF_LEN], name[32];
			enum vgpu_sched_policy pol;
			size_t i;

			a += strlen(gpu_at);
			if (strncmp(a, "PCI:", 4) == 0)
				a += 4;
			/* "0000:3b:00.0", or the "PCI:0000:3b:00: GPU-UUID" of other NVRM lines */
			snprintf(addr, sizeof(addr), "%.*s", (int)strcspn(a, " \t"), a);
			if (*addr && addr[strlen(addr) - 1] == ':')
				addr[strlen(addr) - 1] = '\0';
			if (!strchr(addr, '.') && strlen(addr) + 3 <= sizeof(addr))
				strcat(addr, ".0");
			w += strlen(policy);
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(w, ". \t\r"), w);
			if (vgpu_bdf_normalize(addr, bdf) < 0 ||
			    vgpu_sched_policy_parse(name, &pol) < 0) {
				cur = -1;
				continue;
			}
			for (i = 0; i < n && strcmp(v[i].bdf, bdf); i++)
				;
			if (i == n) {
				v = vgpu_xrealloc(v, (n + 1) * sizeof(*v));
				snprintf(v[n++].bdf, sizeof(v->bdf), "%s", bdf);
			}
			memset(&v[i].s, 0, sizeof(v[i].s));
			v[i].s.policy = pol;
			cur = (long)i;
		} else if ((a = strstr(l, ts)) && cur >= 0) {
			char *end;
			unsigned long t = strtoul(a + strlen(ts), &end, 10);

			/* the driver prints microseconds ("%uuS."), write-ups " ms" */
			if (end != a + strlen(ts) && strncmp(end, "uS", 2) == 0)
				t /= 1000;
			else if (end == a + strlen(ts) || strncmp(end, " ms", 3) != 0)
				continue;
			if (t < 1000)
				v[cur].s.timeslice_ms = (unsigned)t;
		}
	}
	*out = v;
	return n;
}
