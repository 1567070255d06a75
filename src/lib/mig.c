// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: MIG GPU-instance planning: request parsing, an exact placement
 * search over a board's slices, and which board a GPU is.  Pure functions,
 * no I/O; nvidia-smi's MIG output, which the search starts from on a real
 * host, is read by mig-smi.c.
 *
 * The search space is tiny: a board has at most 8 memory slices, a GI takes
 * at least one, so a layout has at most 8 new GIs each with at most 7 legal
 * starts.  Requests larger than the board are refused before searching.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "mig-priv.h"
#include "mig.h"

/* ---- requests --------------------------------------------------------------- */

/* "1g.6gb (14), 1g.6gb+me (21), ..." on the heap. */
static char *profile_list(const struct vgpu_mig_board *b)
{
	char *s = vgpu_xstrdup("");

	for (size_t i = 0; i < b->n_profiles; i++)
		vgpu_append(&s, "%s%s (%d)", i ? ", " : "", b->profiles[i].name, b->profiles[i].id);
	return s;
}

const struct vgpu_mig_profile *mig_profile_by_name(const struct vgpu_mig_board *b, const char *name)
{
	for (size_t i = 0; i < b->n_profiles; i++)
		if (strcasecmp(b->profiles[i].name, name) == 0)
			return &b->profiles[i];
	return NULL;
}

static const struct vgpu_mig_profile *profile_by_id(const struct vgpu_mig_board *b,
						    const char *digits)
{
	char *end;
	unsigned long id = strtoul(digits, &end, 10);

	if (*end || id > 1000)
		return NULL;
	for (size_t i = 0; i < b->n_profiles; i++)
		if (b->profiles[i].id == (int)id)
			return &b->profiles[i];
	return NULL;
}

/*
 * Split "NAMExN" into @base and @count (1 without a suffix).  The suffix is
 * an 'x' and digits at the end: "1g.24gb+gfx" has no digits after its 'x'.
 */
static int split_count(struct vgpu_ctx *ctx, const char *arg, char *base, size_t size,
		       unsigned *count)
{
	size_t len = strlen(arg), blen = len;
	const char *x = strrchr(arg, 'x');

	*count = 1;
	if (len >= size)
		return vgpu_error(ctx, -EINVAL, "'%s': too long for a MIG profile", arg);
	if (x && x > arg && x[1] && strspn(x + 1, "0123456789") == strlen(x + 1)) {
		unsigned long n = strlen(x + 1) > 3 ? 0 : strtoul(x + 1, NULL, 10);

		if (n < 1 || n > VGPU_MIG_COUNT_MAX)
			return vgpu_error(ctx, -EINVAL, "'%s': count '%s' is outside 1..%d", arg,
					  x + 1, VGPU_MIG_COUNT_MAX);
		*count = (unsigned)n;
		blen = (size_t)(x - arg);
	}
	while (blen && isspace((unsigned char)arg[blen - 1]))
		blen--;
	memcpy(base, arg, blen);
	base[blen] = '\0';
	return 0;
}

/* A vGPU type name: the GI profile it runs on, on @b; errors name @arg. */
static int profile_by_type(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, const char *arg,
			   const struct vgpu_type_info *t, const struct vgpu_mig_profile **out)
{
	const struct vgpu_mig_board *tb = vgpu_mig_board_lookup(t->board);
	VGPU_AUTOFREE char *list = profile_list(b);

	if (t->backing == VGPU_BACKING_TIME_SLICED)
		return vgpu_error(
			ctx, -EINVAL,
			"'%s': a time-sliced vGPU profile needs no GPU instance (MIG profiles of %s: %s)",
			arg, b->model, list);
	if (tb != b)
		return vgpu_error(ctx, -EINVAL, "'%s': a vGPU type of %s, not of %s (profiles: %s)",
				  arg, tb ? tb->model : t->board, b->model, list);
	*out = t->gi_profile[0] ? mig_profile_by_name(b, t->gi_profile) : NULL;
	if (!*out)
		return vgpu_error(
			ctx, -EINVAL,
			"'%s': no GPU instance profile of %s is known for this type (profiles: %s)",
			arg, b->model, list);
	return 0;
}

int vgpu_mig_parse_request(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b, const char *arg,
			   struct vgpu_mig_request *out)
{
	char buf[VGPU_PROFILE_MAX];
	const char *base = buf;
	const struct vgpu_mig_profile *p = NULL;
	struct vgpu_type_info t;
	unsigned count, per_gi = 1;
	int r = split_count(ctx, arg, buf, sizeof(buf), &count);

	if (r < 0)
		return r;
	base += strspn(base, " ");
	if (strncasecmp(base, "MIG ", 4) == 0)
		base += 4 + strspn(base + 4, " ");
	if (*base && strspn(base, "0123456789") == strlen(base))
		p = profile_by_id(b, base);
	else if (!(p = mig_profile_by_name(b, base)) && *base && vgpu_type_parse(base, &t) == 0 &&
		 t.backing != VGPU_BACKING_UNKNOWN) {
		r = profile_by_type(ctx, b, arg, &t, &p);
		if (r < 0)
			return r;
		per_gi = vgpu_mig_type_per_gi(&t); /* DC-1-8Cx12: 4 GIs of three */
	}
	if (!p) {
		VGPU_AUTOFREE char *list = profile_list(b);

		return vgpu_error(ctx, -EINVAL, "'%s': not a MIG profile of %s (profiles: %s)", arg,
				  b->model, list);
	}
	out->profile = p;
	out->count = (count + per_gi - 1) / per_gi;
	return 0;
}

/* ---- the search -------------------------------------------------------------- */

static uint16_t span_mask(unsigned start, unsigned size)
{
	return (uint16_t)(((1u << size) - 1) << start);
}

static unsigned longest_run(unsigned slices, uint16_t used)
{
	unsigned best = 0, run = 0;

	for (unsigned i = 0; i < slices; i++) {
		run = used & (1u << i) ? 0 : run + 1;
		if (run > best)
			best = run;
	}
	return best;
}

unsigned vgpu_mig_largest_free(const struct vgpu_mig_board *b, const struct vgpu_mig_gi *gis,
			       size_t n)
{
	uint16_t used = 0;

	for (size_t i = 0; i < n; i++)
		used |= span_mask(gis[i].start, gis[i].profile->size);
	return longest_run(b->mem_slices, used);
}

struct search {
	const struct vgpu_mig_board *b;
	const struct vgpu_mig_profile *inst[MIG_SLICES_MAX]; /* creation order */
	size_t n;
	unsigned cur[MIG_SLICES_MAX], best[MIG_SLICES_MAX];
	unsigned best_run;
	bool found;
};

/*
 * Place inst[i..] on the slices not in @used, starts ascending, so the first
 * layout met with a given free run is the lowest; only a longer run replaces
 * it.  Instances of one profile take increasing starts: their order does not
 * matter, and this keeps the search from trying it.
 */
static void place(struct search *s, size_t i, uint16_t used)
{
	const struct vgpu_mig_profile *p;
	unsigned lo;

	if (i == s->n) {
		unsigned run = longest_run(s->b->mem_slices, used);

		if (!s->found || run > s->best_run) {
			memcpy(s->best, s->cur, sizeof(s->cur));
			s->best_run = run;
			s->found = true;
		}
		return;
	}
	p = s->inst[i];
	lo = i > 0 && s->inst[i - 1] == p ? s->cur[i - 1] + 1 : 0;
	for (unsigned st = lo; st + p->size <= s->b->mem_slices; st++) {
		uint16_t m = span_mask(st, p->size);

		if (!(p->placements & (1u << st)) || (used & m))
			continue;
		s->cur[i] = st;
		place(s, i + 1, used | m);
	}
}

/*
 * The start a driver that places first-fit gives a new GI of @p beside
 * @used: the lowest legal start whose slices are free; -1 none.
 */
static int first_fit(const struct vgpu_mig_board *b, const struct vgpu_mig_profile *p,
		     uint16_t used)
{
	for (unsigned st = 0; st + p->size <= b->mem_slices; st++)
		if ((p->placements & (1u << st)) && !(used & span_mask(st, p->size)))
			return (int)st;
	return -1;
}

/* Depth-first over creation orders; @done: plan entries placed so far. */
static bool order_dfs(const struct vgpu_mig_board *b, const struct vgpu_mig_gi *plan, size_t n,
		      uint16_t used, uint32_t done, size_t depth, size_t *order)
{
	if (depth == n)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (done & (1u << i) || first_fit(b, plan[i].profile, used) != (int)plan[i].start)
			continue;
		/* one of several equal GIs tried is as good as any other */
		bool twin = false;

		for (size_t j = 0; j < i && !twin; j++)
			twin = !(done & (1u << j)) && plan[j].profile == plan[i].profile &&
			       plan[j].start == plan[i].start;
		if (twin)
			continue;
		order[depth] = i;
		if (order_dfs(b, plan, n, used | span_mask(plan[i].start, plan[i].profile->size),
			      done | (1u << i), depth + 1, order))
			return true;
	}
	return false;
}

int vgpu_mig_first_fit_order(const struct vgpu_mig_board *b, const struct vgpu_mig_gi *existing,
			     size_t n_existing, const struct vgpu_mig_gi *plan, size_t n_plan,
			     size_t *order)
{
	uint16_t used = 0;

	if (n_plan > MIG_SLICES_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n_existing; i++)
		used |= span_mask(existing[i].start, existing[i].profile->size);
	return order_dfs(b, plan, n_plan, used, 0, 0, order) ? 0 : -ENOENT;
}

/* Larger first: memory slices, then compute slices, then table order. */
static int cmp_request(const void *a, const void *b)
{
	const struct vgpu_mig_profile *x = ((const struct vgpu_mig_request *)a)->profile;
	const struct vgpu_mig_profile *y = ((const struct vgpu_mig_request *)b)->profile;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->compute != y->compute)
		return x->compute > y->compute ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* "2g.12gb x2 + 1g.6gb" on the heap. */
static char *describe(const struct vgpu_mig_request *req, size_t n)
{
	char *s = vgpu_xstrdup("");

	for (size_t i = 0; i < n; i++) {
		vgpu_append(&s, "%s%s", i ? " + " : "", req[i].profile->name);
		if (req[i].count > 1)
			vgpu_append(&s, " x%u", req[i].count);
	}
	return s;
}

/* "2g.12gb starts only at 0 or 2" for each requested profile, "; " between. */
static char *describe_starts(const struct vgpu_mig_request *req, size_t n)
{
	char *s = vgpu_xstrdup("");

	for (size_t i = 0; i < n; i++) {
		const struct vgpu_mig_profile *p = req[i].profile;
		unsigned k = 0, total = (unsigned)__builtin_popcount(p->placements);

		vgpu_append(&s, "%s%s starts only at", i ? "; " : "", p->name);
		for (unsigned st = 0; st < MIG_SLICES_MAX; st++) {
			if (!(p->placements & (1u << st)))
				continue;
			k++;
			vgpu_append(&s, "%s%u", k == 1 ? " " : k == total ? " or " : ", ", st);
		}
	}
	return s;
}

/* "; in use: 1g.6gb at 1, ..." or "" */
static char *describe_existing(const struct vgpu_mig_gi *gi, size_t n)
{
	char *s = vgpu_xstrdup("");

	for (size_t i = 0; i < n; i++)
		vgpu_append(&s, "%s%s at %u", i ? ", " : "; in use: ", gi[i].profile->name,
			    gi[i].start);
	return s;
}

/* The existing GIs: @b's profiles at legal, disjoint starts.  Sets *used. */
static int check_existing(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b,
			  const struct vgpu_mig_gi *gi, size_t n, uint16_t *used)
{
	*used = 0;
	for (size_t i = 0; i < n; i++) {
		const struct vgpu_mig_profile *p = gi[i].profile;
		uint16_t m;

		if (p < b->profiles || p >= b->profiles + b->n_profiles)
			return vgpu_error(ctx, -EINVAL,
					  "existing GPU instance %d: profile '%s' is not one of %s",
					  gi[i].id, p->name, b->model);
		if (gi[i].start >= MIG_SLICES_MAX || !(p->placements & (1u << gi[i].start)))
			return vgpu_error(ctx, -EINVAL,
					  "existing GPU instance %d: %s cannot start at %u on %s",
					  gi[i].id, p->name, gi[i].start, b->model);
		m = span_mask(gi[i].start, p->size);
		if (*used & m)
			return vgpu_error(ctx, -EINVAL,
					  "existing GPU instance %d (%s at %u) overlaps another",
					  gi[i].id, p->name, gi[i].start);
		*used |= m;
	}
	return 0;
}

/*
 * Merge requests per profile into @m (sorted, larger first); refuse counts
 * over a profile's maximum and totals over the board's slices.
 */
static int check_totals(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b,
			const struct vgpu_mig_gi *gi, size_t n_gi, uint16_t used,
			const struct vgpu_mig_request *req, size_t n_req,
			struct vgpu_mig_request *m, size_t *n_m)
{
	unsigned long long mem = 0, compute = 0, used_compute = 0;
	unsigned used_mem = (unsigned)__builtin_popcount(used);

	*n_m = 0;
	for (size_t i = 0; i < b->n_profiles; i++) {
		const struct vgpu_mig_profile *p = &b->profiles[i];
		unsigned long long want = 0, have = 0;

		for (size_t k = 0; k < n_req; k++)
			want += req[k].profile == p ? req[k].count : 0;
		for (size_t k = 0; k < n_gi; k++)
			have += gi[k].profile == p;
		used_compute += have * p->compute;
		if (!want)
			continue;
		if (want + have > p->max)
			return vgpu_error(ctx, -ENOSPC,
					  "%s: at most %u per GPU on %s (%llu asked%s)", p->name,
					  p->max, b->model, want, have ? ", more exist" : "");
		m[(*n_m)++] = (struct vgpu_mig_request){ p, (unsigned)want };
		mem += want * p->size;
		compute += want * p->compute;
	}
	qsort(m, *n_m, sizeof(*m), cmp_request);
	if (mem + used_mem > b->mem_slices || compute + used_compute > b->compute_slices) {
		VGPU_AUTOFREE char *what = describe(m, *n_m);
		bool by_mem = mem + used_mem > b->mem_slices;
		unsigned long long need = by_mem ? mem + used_mem : compute + used_compute;
		unsigned long long in_use = by_mem ? used_mem : used_compute;

		VGPU_AUTOFREE char *note = in_use ? vgpu_asprintf(" (%llu in use)", in_use) : NULL;

		return vgpu_error(ctx, -ENOSPC, "%s %s not fit on %s: %llu of %u %s slices%s", what,
				  *n_m > 1 || m[0].count > 1 ? "do" : "does", b->model, need,
				  by_mem ? b->mem_slices : b->compute_slices,
				  by_mem ? "memory" : "compute", note ? note : "");
	}
	return 0;
}

int vgpu_mig_solve(struct vgpu_ctx *ctx, const struct vgpu_mig_board *b,
		   const struct vgpu_mig_gi *existing, size_t n_existing,
		   const struct vgpu_mig_request *req, size_t n_req, struct vgpu_mig_gi **out,
		   size_t *n_out)
{
	struct vgpu_mig_request merged[MIG_SLICES_MAX * 2];
	struct search s = { .b = b };
	size_t n_merged;
	uint16_t used;
	int r;

	if (b->mem_slices > MIG_SLICES_MAX || b->n_profiles > ARRAY_SIZE(merged))
		return vgpu_error(ctx, -EINVAL, "%s: MIG table too large", b->model);
	r = check_existing(ctx, b, existing, n_existing, &used);
	if (r < 0)
		return r;
	r = check_totals(ctx, b, existing, n_existing, used, req, n_req, merged, &n_merged);
	if (r < 0)
		return r;
	/* totals fit the board, so there are at most mem_slices instances */
	for (size_t i = 0; i < n_merged; i++)
		for (unsigned k = 0; k < merged[i].count; k++)
			s.inst[s.n++] = merged[i].profile;
	place(&s, 0, used);
	if (!s.found) {
		VGPU_AUTOFREE char *what = describe(merged, n_merged);
		VGPU_AUTOFREE char *starts = describe_starts(merged, n_merged);
		VGPU_AUTOFREE char *in_use = describe_existing(existing, n_existing);

		return vgpu_error(ctx, -ENOSPC, "%s on %s: no placement (%s%s)", what, b->model,
				  starts, in_use);
	}
	*out = NULL;
	if (s.n) {
		*out = vgpu_xcalloc(s.n, sizeof(**out));
		for (size_t i = 0; i < s.n; i++)
			(*out)[i] = (struct vgpu_mig_gi){ s.inst[i], s.best[i], -1 };
	}
	*n_out = s.n;
	return 0;
}

const struct vgpu_mig_board *vgpu_mig_board_for_gpu(const struct vgpu_gpu *g)
{
	const struct vgpu_mig_board *b;

	/* the driver's type names say which board it is, MIG-backed ones best */
	for (size_t i = 0; i < g->n_types; i++)
		if (g->types[i]->info.backing == VGPU_BACKING_MIG &&
		    (b = vgpu_mig_board_by_token(g->types[i]->info.board)))
			return b;
	for (size_t i = 0; i < g->n_types; i++)
		if ((b = vgpu_mig_board_by_token(g->types[i]->info.board)))
			return b;
	if ((b = vgpu_mig_board_by_device(g->device_id)))
		return b;
	return g->model ? vgpu_mig_board_lookup(g->model) : NULL;
}

unsigned vgpu_mig_type_per_gi(const struct vgpu_type_info *t)
{
	const struct vgpu_mig_board *b = vgpu_mig_board_lookup(t->board);
	unsigned g, gb;

	if (t->backing != VGPU_BACKING_MIG || !b || !b->vgpu_gi_variant || !t->fb_mib ||
	    sscanf(t->gi_profile, "%ug.%ugb", &g, &gb) != 2 || gb * 1024 < t->fb_mib)
		return 1;
	/* time-sliced inside the GI: the name's GB is the vGPU's share */
	return gb * 1024 / t->fb_mib;
}
