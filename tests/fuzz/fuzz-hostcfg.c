// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Host configuration YAML: parse arbitrary bytes; a refusal is -EINVAL with
 * a one-line message; an accepted file selects each of its first labels
 * again, and every entry obeys the documented limits (counts, indexes,
 * normalized PCI addresses, the section's keys).
 */
#include <errno.h>

#include "fuzz-common.h"
#include "hostcfg.h"

#define FUZZ_MAX_INPUT (64 * 1024)
#define MISSING "no-such-label"

static void check_entry(const struct vgpu_cfg_entry *e)
{
	FUZZ_ASSERT(e->line >= 1, "entry line %u", e->line);
	FUZZ_ASSERT(e->is_all || e->n_indexes + e->n_addrs > 0, "no devices");
	for (size_t i = 0; i < e->n_indexes; i++)
		FUZZ_ASSERT(e->indexes[i] >= 0 && e->indexes[i] <= VGPU_CFG_MAX_INDEX, "index %d",
			    e->indexes[i]);
	for (size_t i = 0; i < e->n_addrs; i++) {
		char again[VGPU_BDF_LEN];

		FUZZ_ASSERT(vgpu_bdf_normalize(e->addrs[i], again) == 0 &&
				    strcmp(again, e->addrs[i]) == 0,
			    "address '%s' not normalized", e->addrs[i]);
	}
	if (e->section == VGPU_CFG_MIG) {
		FUZZ_ASSERT(e->mig_enabled == 0 || e->mig_enabled == 1, "mig_enabled %d",
			    e->mig_enabled);
		FUZZ_ASSERT(e->n_vgpu == 0, "vgpu-devices in mig-configs");
		FUZZ_ASSERT(e->mig_enabled || e->n_mig == 0, "mig-devices with MIG disabled");
	} else {
		FUZZ_ASSERT(e->mig_enabled == -1 && e->n_mig == 0, "MIG keys in vgpu-configs");
	}
	for (size_t i = 0; i < e->n_mig + e->n_vgpu; i++) {
		const struct vgpu_cfg_count *c = i < e->n_mig ? &e->mig[i] : &e->vgpu[i - e->n_mig];

		FUZZ_ASSERT(c->count <= VGPU_CFG_MAX_COUNT, "count %u", c->count);
		FUZZ_ASSERT(c->name && *c->name && strlen(c->name) <= 63, "profile name");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vgpu_ctx ctx;
	struct vgpu_hostcfg all = { 0 };
	int r;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	vgpu_ctx_init(&ctx, NULL, NULL);
	r = vgpu_hostcfg_parse(&ctx, "fuzz.yaml", (const char *)data, size, NULL, &all);
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL, "parse r=%d", r);
		FUZZ_ASSERT(strcmp(vgpu_ctx_error(&ctx), "unknown error") != 0, "no message");
		FUZZ_ASSERT(!strchr(vgpu_ctx_error(&ctx), '\n'), "message of several lines");
		goto out;
	}
	FUZZ_ASSERT(all.n_entries == 0 && all.n_domains == 0, "entries without a label");
	for (size_t i = 0; i < all.n_labels && i < 4; i++) {
		struct vgpu_hostcfg c = { 0 };

		FUZZ_ASSERT(i == 0 || strcmp(all.labels[i - 1], all.labels[i]) < 0,
			    "labels unsorted");
		r = vgpu_hostcfg_parse(&ctx, "fuzz.yaml", (const char *)data, size, all.labels[i],
				       &c);
		FUZZ_ASSERT(r == 0, "label '%s' of a valid file refused: %s", all.labels[i],
			    vgpu_ctx_error(&ctx));
		FUZZ_ASSERT(c.n_labels == all.n_labels, "labels differ");
		for (size_t j = 0; j < c.n_entries; j++)
			check_entry(&c.entries[j]);
		for (size_t j = 0; j < c.n_domains; j++)
			FUZZ_ASSERT(!vgpu_domain_name_check(c.domains[j]), "domain '%s'",
				    c.domains[j]);
		vgpu_hostcfg_clear(&c);
	}
	/* a label in no map (unless the input has it) */
	for (size_t i = 0; i < all.n_labels; i++)
		if (strcmp(all.labels[i], MISSING) == 0)
			goto out;
	r = vgpu_hostcfg_parse(&ctx, "fuzz.yaml", (const char *)data, size, MISSING, &all);
	FUZZ_ASSERT(r == -EINVAL && strncmp(vgpu_ctx_error(&ctx), "no config ", 10) == 0,
		    "missing label: %d %s", r, vgpu_ctx_error(&ctx));
out:
	vgpu_hostcfg_clear(&all);
	vgpu_ctx_clear(&ctx);
	return 0;
}
