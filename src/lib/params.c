// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A domain's vgpu_params set: validated, merged, formatted as the driver's
 * file takes it (see params.h; the documented keys from the NVIDIA AI
 * Enterprise 5.0 user guide §2.8.5 and vGPU UG 17.0 §2.10.5).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "params.h"

static const char *const documented[] = { "disable_vnc", "enable_debugging", "enable_profiling",
					  "enable_uvm", "frame_rate_limiter" };

bool vgpu_param_documented(const char *key)
{
	for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++)
		if (strcmp(key, documented[i]) == 0)
			return true;
	return false;
}

bool vgpu_param_blocks_migration(const struct vgpu_param *p)
{
	return (strcmp(p->key, "enable_uvm") == 0 || strcmp(p->key, "enable_debugging") == 0 ||
		strcmp(p->key, "enable_profiling") == 0) &&
	       strcmp(p->value, "0") != 0;
}

const char *vgpu_params_get(const struct vgpu_params *set, const char *key)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->v[i].key, key) == 0)
			return set->v[i].value;
	return NULL;
}

static bool key_ok(const char *k)
{
	size_t n = strlen(k);

	return n > 0 && n < VGPU_PARAM_KEY_MAX &&
	       strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* printable ASCII, none of the file's separators */
static bool value_ok(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || n >= VGPU_PARAM_VALUE_MAX)
		return false;
	for (const char *p = v; *p; p++)
		if (*p <= ' ' || *p > '~' || *p == ',' || *p == '=')
			return false;
	return true;
}

/* @key and @value checked as names and values, documented or not */
static int put(struct vgpu_ctx *ctx, struct vgpu_params *set, const char *key, const char *value)
{
	size_t i = 0;

	if (!key_ok(key))
		return vgpu_error(
			ctx, -EINVAL,
			"vgpu_params: '%s' is not a parameter name (letters, digits, '_' or '-', at most %d)",
			key, VGPU_PARAM_KEY_MAX - 1);
	if (!value_ok(value))
		return vgpu_error(
			ctx, -EINVAL,
			"vgpu_params: '%s' for %s is not a value (printable, without blanks, ',' or '=', at most %d)",
			value, key, VGPU_PARAM_VALUE_MAX - 1);
	while (i < set->n && strcmp(set->v[i].key, key) < 0)
		i++;
	if (i == set->n || strcmp(set->v[i].key, key) != 0) {
		if (set->n == VGPU_PARAMS_MAX)
			return vgpu_error(ctx, -E2BIG, "vgpu_params: more than %d parameters",
					  VGPU_PARAMS_MAX);
		memmove(&set->v[i + 1], &set->v[i], (set->n - i) * sizeof(set->v[0]));
		set->n++;
		snprintf(set->v[i].key, sizeof(set->v[i].key), "%s", key);
	}
	snprintf(set->v[i].value, sizeof(set->v[i].value), "%s", value);
	return 0;
}

int vgpu_params_set(struct vgpu_ctx *ctx, struct vgpu_params *set, const char *key,
		    const char *value, bool raw)
{
	bool doc = vgpu_param_documented(key);

	if (doc && strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
		return vgpu_error(ctx, -EINVAL, "vgpu_params: %s takes 0 or 1, not '%s'", key,
				  value);
	if (!doc && !raw && key_ok(key))
		return vgpu_error(
			ctx, -EINVAL,
			"vgpu_params: '%s' is not one of NVIDIA's documented parameters (frame_rate_limiter, disable_vnc, enable_uvm, enable_debugging, enable_profiling)",
			key);
	return put(ctx, set, key, value);
}

bool vgpu_params_unset(struct vgpu_params *set, const char *key)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->v[i].key, key) == 0) {
			memmove(&set->v[i], &set->v[i + 1], (set->n - i - 1) * sizeof(set->v[0]));
			set->n--;
			return true;
		}
	return false;
}

int vgpu_params_parse(struct vgpu_ctx *ctx, const char *text, struct vgpu_params *out)
{
	struct vgpu_params set = { .n = 0 };

	for (const char *p = text;;) {
		char item[VGPU_PARAM_KEY_MAX + VGPU_PARAM_VALUE_MAX + 2], *eq;
		size_t n;
		int e;

		p += strspn(p, " \t\n,");
		if (!*p)
			break;
		n = strcspn(p, " \t\n,");
		if (n >= sizeof(item) || !memchr(p, '=', n))
			return vgpu_error(ctx, -EINVAL, "vgpu_params: '%.*s' is not name=value",
					  (int)(n > 64 ? 64 : n), p);
		memcpy(item, p, n);
		item[n] = '\0';
		eq = strchr(item, '=');
		*eq = '\0';
		e = put(ctx, &set, item, eq + 1);
		if (e < 0)
			return e;
		p += n;
	}
	*out = set;
	return 0;
}

char *vgpu_params_format(const struct vgpu_params *set, char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < set->n && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%s=%s", i ? "," : "", set->v[i].key,
				 set->v[i].value);

		if (n < 0)
			break;
		at += (size_t)n;
	}
	return buf;
}

char *vgpu_params_file_text(const struct vgpu_params *set, char *buf, size_t len)
{
	if (set->n == 0 && len > 1) {
		buf[0] = ' ';
		buf[1] = '\0';
		return buf;
	}
	return vgpu_params_format(set, buf, len);
}

bool vgpu_params_equal(const struct vgpu_params *a, const struct vgpu_params *b)
{
	/* both sorted by key, each key once */
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].key, b->v[i].key) != 0 ||
		    strcmp(a->v[i].value, b->v[i].value) != 0)
			return false;
	return true;
}

bool vgpu_params_profiling(const struct vgpu_params *set)
{
	const char *v = vgpu_params_get(set, "enable_profiling");

	return v && strcmp(v, "0") != 0;
}

int vgpu_params_check_profiling(struct vgpu_ctx *ctx, const struct vgpu_records *recs,
				const char *uuid, const struct vgpu_params *set,
				bool (*profiling_of)(void *data, const struct vgpu_record *r),
				void *data)
{
	if (!vgpu_params_profiling(set))
		return 0;
	for (size_t i = 0; i < recs->n; i++) {
		const struct vgpu_record *mine = &recs->v[i];

		if (strcmp(mine->domain_uuid, uuid) != 0)
			continue;
		for (size_t k = 0; k < recs->n; k++) {
			const struct vgpu_record *o = &recs->v[k];

			/* active, or incoming: a domain migrating here runs here next */
			if (strcmp(o->domain_uuid, uuid) == 0 || strcmp(o->gpu, mine->gpu) != 0 ||
			    !profiling_of(data, o))
				continue;
			return vgpu_error(
				ctx, -EBUSY,
				"enable_profiling: domain '%s' (%s) has profiling on GPU %s already; NVIDIA's profiler works for one VM per GPU at a time",
				o->domain, o->domain_uuid, o->gpu);
		}
	}
	return 0;
}
