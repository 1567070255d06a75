// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Concern: YAML text read into a small tree, strictly: libyaml's event
 * parser, scalars in one string arena, anchors, aliases, unknown tags, deep
 * nesting and more than VGPU_CFG_MAX_NODES nodes refused, so memory stays a
 * small multiple of the file and no input expands.  What the tree must hold
 * (NVIDIA's schema) is hostcfg.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "cleanup.h"
#include "hostcfg-priv.h"

void cfg_node_free(struct node *n)
{
	for (uint32_t i = 0; i < n->n; i++)
		cfg_node_free(&n->kids[i]);
	free(n->kids);
}

static unsigned line_at_offset(const struct cfg_doc *p, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off && i < p->len; i++)
		line += p->buf[i] == '\n';
	return line;
}

static int yaml_fail(struct cfg_doc *p)
{
	const yaml_parser_t *y = &p->yp;
	unsigned line;

	if (y->error == YAML_MEMORY_ERROR)
		return vgpu_error(p->ctx, -ENOMEM, "%s: out of memory reading YAML", p->file);
	line = y->error == YAML_READER_ERROR ? line_at_offset(p, y->problem_offset) :
					       (unsigned)y->problem_mark.line + 1;
	return vgpu_error(p->ctx, -EINVAL, "%s:%u: invalid YAML: %s%s%s%s", p->file, line,
			  y->problem ? y->problem : "unknown problem", y->context ? " (" : "",
			  y->context ? y->context : "", y->context ? ")" : "");
}

static int next_event(struct cfg_doc *p)
{
	if (p->has_ev)
		yaml_event_delete(&p->ev);
	p->has_ev = false;
	if (!yaml_parser_parse(&p->yp, &p->ev))
		return yaml_fail(p);
	p->has_ev = true;
	return 0;
}

static unsigned ev_line(const struct cfg_doc *p)
{
	return (unsigned)p->ev.start_mark.line + 1;
}

static size_t arena_add(struct cfg_doc *p, const char *s, size_t len)
{
	size_t off = p->arena_len;

	if (p->arena_cap - p->arena_len < len + 1) {
		p->arena_cap = (p->arena_cap + len + 1) * 2;
		p->arena = vgpu_xrealloc(p->arena, p->arena_cap);
	}
	memcpy(p->arena + off, s, len);
	p->arena[off + len] = '\0';
	p->arena_len += len + 1;
	return off;
}

/*
 * Anchors (and so aliases) are refused outright: that alone defeats the
 * "billion laughs" expansion.  Tags: only the standard ones for the node's
 * kind; !!str makes a plain scalar a string.
 */
static int check_props(struct cfg_doc *p, const yaml_char_t *anchor, const yaml_char_t *tag,
		       enum node_kind kind, bool *is_str)
{
	static const char *const scalar_tags[] = { "str", "int", "bool", "null" };
	const char *t = (const char *)tag, *s;

	if (anchor)
		return vgpu_error(p->ctx, -EINVAL,
				  "%s:%u: YAML anchors and aliases are not supported", p->file,
				  ev_line(p));
	if (!t)
		return 0;
	if (strncmp(t, TAG_PREFIX, strlen(TAG_PREFIX)) == 0) {
		s = t + strlen(TAG_PREFIX);
		if ((kind == NODE_SEQ && strcmp(s, "seq") == 0) ||
		    (kind == NODE_MAP && strcmp(s, "map") == 0))
			return 0;
		for (size_t i = 0; kind == NODE_SCALAR && i < ARRAY_SIZE(scalar_tags); i++) {
			if (strcmp(s, scalar_tags[i]) == 0) {
				*is_str = i == 0;
				return 0;
			}
		}
	}
	return vgpu_error(p->ctx, -EINVAL, "%s:%u: YAML tag '%s' is not supported here", p->file,
			  ev_line(p), t);
}

/*
 * Items of open collections wait on one stack and move to an array of the
 * exact size when their collection ends: no realloc per collection (a 10 MB
 * file has ~200,000 of them, and growing each fragments the heap).
 */
static void stack_push(struct cfg_doc *p, const struct node *n)
{
	if (p->sp == p->stack_cap) {
		p->stack_cap = p->stack_cap ? 2 * p->stack_cap : 256;
		p->stack = vgpu_xreallocarray(p->stack, p->stack_cap, sizeof(*p->stack));
	}
	p->stack[p->sp++] = *n;
}

static int build_node(struct cfg_doc *p, unsigned depth, struct node *out);

static int build_scalar(struct cfg_doc *p, struct node *out)
{
	const yaml_event_t *e = &p->ev;
	bool is_str = false;
	int r = check_props(p, e->data.scalar.anchor, e->data.scalar.tag, NODE_SCALAR, &is_str);

	if (r < 0)
		return r;
	if (memchr(e->data.scalar.value, '\0', e->data.scalar.length))
		return vgpu_error(p->ctx, -EINVAL, "%s:%u: a NUL character in a string", p->file,
				  ev_line(p));
	out->kind = NODE_SCALAR;
	out->is_plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !is_str;
	out->str = arena_add(p, (const char *)e->data.scalar.value, e->data.scalar.length);
	return 0;
}

/* A list or a mapping: its items up to the end event. */
static int build_collection(struct cfg_doc *p, unsigned depth, struct node *out)
{
	bool is_map = p->ev.type == YAML_MAPPING_START_EVENT;
	yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	bool unused = false;
	int r;

	out->kind = is_map ? NODE_MAP : NODE_SEQ;
	r = is_map ? check_props(p, p->ev.data.mapping_start.anchor, p->ev.data.mapping_start.tag,
				 NODE_MAP, &unused) :
		     check_props(p, p->ev.data.sequence_start.anchor, p->ev.data.sequence_start.tag,
				 NODE_SEQ, &unused);
	if (r < 0)
		return r;
	if (depth >= p->max_depth)
		return vgpu_error(p->ctx, -EINVAL, "%s:%u: YAML nested deeper than %u levels",
				  p->file, ev_line(p), p->max_depth);
	for (size_t base = p->sp;;) {
		struct node kid = { 0 };

		r = next_event(p);
		if (r < 0)
			return r;
		if (p->ev.type == end) {
			out->n = (uint32_t)(p->sp - base);
			if (out->n) { /* [] and {} have no items, and maybe no stack yet */
				out->kids = vgpu_xcalloc(out->n, sizeof(*out->kids));
				memcpy(out->kids, p->stack + base, out->n * sizeof(*out->kids));
			}
			p->sp = base;
			return 0;
		}
		r = build_node(p, depth + 1, &kid);
		stack_push(p, &kid); /* on failure too: freed with the stack */
		if (r < 0)
			return r;
		if (is_map && (p->sp - base) % 2 == 1 && kid.kind != NODE_SCALAR)
			return vgpu_error(p->ctx, -EINVAL, "%s:%u: a mapping key must be a string",
					  p->file, kid.line);
	}
}

/* The node whose first event is p->ev, into *out (zeroed by the caller). */
static int build_node(struct cfg_doc *p, unsigned depth, struct node *out)
{
	out->line = ev_line(p);
	if (++p->n_nodes > VGPU_CFG_MAX_NODES)
		return vgpu_error(p->ctx, -EINVAL, "%s:%u: more than %u YAML nodes", p->file,
				  out->line, VGPU_CFG_MAX_NODES);
	switch (p->ev.type) {
	case YAML_SCALAR_EVENT:
		return build_scalar(p, out);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return build_collection(p, depth, out);
	case YAML_ALIAS_EVENT:
		return vgpu_error(p->ctx, -EINVAL,
				  "%s:%u: YAML anchors and aliases are not supported", p->file,
				  out->line);
	default:
		return vgpu_error(p->ctx, -EINVAL, "%s:%u: unexpected YAML event %d", p->file,
				  out->line, (int)p->ev.type);
	}
}

/* The one document of the stream into *root. */
static int build_tree(struct cfg_doc *p, struct node *root)
{
	int r = next_event(p); /* stream start */

	if (r == 0)
		r = next_event(p);
	if (r < 0)
		return r;
	if (p->ev.type == YAML_STREAM_END_EVENT)
		return vgpu_error(p->ctx, -EINVAL,
				  "%s:1: empty configuration (expected version: v1)", p->file);
	r = next_event(p); /* past the document start */
	if (r < 0)
		return r;
	r = build_node(p, 0, root);
	if (r == 0)
		r = next_event(p); /* document end */
	if (r == 0)
		r = next_event(p);
	if (r < 0)
		return r;
	if (p->ev.type != YAML_STREAM_END_EVENT)
		return vgpu_error(p->ctx, -EINVAL, "%s:%u: more than one YAML document", p->file,
				  ev_line(p));
	return 0;
}

int cfg_read_tree(struct cfg_doc *p, struct node *root)
{
	int r;

	if (!yaml_parser_initialize(&p->yp))
		return vgpu_error(p->ctx, -ENOMEM, "%s: cannot set up the YAML parser", p->file);
	yaml_parser_set_input_string(&p->yp, (const unsigned char *)(p->buf ? p->buf : ""), p->len);
	yaml_parser_set_encoding(&p->yp, YAML_UTF8_ENCODING);
	r = build_tree(p, root);
	for (size_t i = 0; i < p->sp; i++) /* left by a failure */
		cfg_node_free(&p->stack[i]);
	free(p->stack);
	if (p->has_ev)
		yaml_event_delete(&p->ev);
	p->has_ev = false;
	yaml_parser_delete(&p->yp);
	return r;
}
