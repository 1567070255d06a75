/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the host configuration files: hostcfg-yaml.c (YAML
 * text to a bounded tree) and hostcfg.c (the tree checked against the
 * schema).  Nothing else includes this.
 */
#ifndef VGPU_HOSTCFG_PRIV_H
#define VGPU_HOSTCFG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "ctx.h"

/*
 * A realistic 10 MB configuration is ~300,000 nodes; a hostile 16 MiB flow
 * list of one-digit items would be 8 million.  The cap keeps the tree under
 * ~130 MB whatever the input.
 */
#define VGPU_CFG_MAX_NODES (1u << 22)
#define TAG_PREFIX "tag:yaml.org,2002:"

enum node_kind { NODE_SCALAR, NODE_SEQ, NODE_MAP };

struct node {
	uint8_t kind;
	bool is_plain; /* a plain scalar without !!str: may be a number or a boolean */
	unsigned line; /* 1-based */
	size_t str; /* scalar: offset of its NUL-terminated text in the arena */
	struct node *kids; /* list items; mapping: key, value, key, value... */
	uint32_t n;
};

/* A YAML document being read into a tree of struct node (hostcfg-yaml.c). */
struct cfg_doc {
	struct vgpu_ctx *ctx;
	const char *file;
	const char *buf;
	size_t len;
	unsigned max_depth; /* nesting of collections refused beyond */
	yaml_parser_t yp;
	yaml_event_t ev;
	bool has_ev;
	char *arena;
	size_t arena_len, arena_cap;
	size_t n_nodes;
	struct node *stack; /* items of the collections being built */
	size_t sp, stack_cap;
};

static inline const struct node *key_at(const struct node *m, size_t i)
{
	return &m->kids[2 * i];
}

static inline const struct node *val_at(const struct node *m, size_t i)
{
	return &m->kids[2 * i + 1];
}

/*
 * Read @p->buf (@p->len bytes) into *@root: 0, or -EINVAL naming file and
 * line (-ENOMEM when libyaml runs out) with a message in @p->ctx.  The
 * arena (@p->arena) is the caller's to free, with cfg_node_free(@root).
 */
int cfg_read_tree(struct cfg_doc *p, struct node *root);
/* Free the kids of @n, recursively (not @n itself). */
void cfg_node_free(struct node *n);
#endif
