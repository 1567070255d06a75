// SPDX-License-Identifier: GPL-2.0-or-later
/* vgpu_type_parse() on arbitrary bytes: never crashes, results are self-consistent. */
#include <ctype.h>
#include <errno.h>

#include "fuzz-common.h"
#include "mig-tables.h"
#include "vgputype.h"

#define MAX_INPUT 4096

static int bounded(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vgpu_type_info t;
	const char *sp, *last;
	char *name;
	int r;

	if (size > MAX_INPUT)
		return 0;
	name = fuzz_cstr(data, size);
	memset(&t, 0xa5, sizeof(t)); /* every field must be written */
	r = vgpu_type_parse(name, &t);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ENAMETOOLONG, "r=%d", r);
	FUZZ_ASSERT(bounded(t.profile, sizeof(t.profile)), "profile not terminated");
	FUZZ_ASSERT(bounded(t.board, sizeof(t.board)), "board not terminated");
	FUZZ_ASSERT(bounded(t.attribute, sizeof(t.attribute)), "attribute not terminated");
	FUZZ_ASSERT(bounded(t.gi_profile, sizeof(t.gi_profile)), "gi_profile not terminated");
	FUZZ_ASSERT(t.backing == VGPU_BACKING_UNKNOWN || t.backing == VGPU_BACKING_TIME_SLICED ||
			    t.backing == VGPU_BACKING_MIG,
		    "backing=%d", (int)t.backing);
	FUZZ_ASSERT((r == 0) == (t.backing != VGPU_BACKING_UNKNOWN), "r=%d backing=%d", r,
		    (int)t.backing);

	/* the profile is the last space-separated token whenever that token fits */
	sp = strrchr(name, ' ');
	last = sp ? sp + 1 : name;
	if (*last && strlen(last) < sizeof(t.profile))
		FUZZ_ASSERT(strcmp(t.profile, last) == 0, "profile '%s' for token '%s'", t.profile,
			    last);
	if (*last && strlen(last) >= sizeof(t.profile))
		FUZZ_ASSERT(r == -ENAMETOOLONG, "r=%d for a %zu-byte token", r, strlen(last));

	if (t.backing != VGPU_BACKING_UNKNOWN && !strchr(t.profile, '-')) {
		/* Kepler names (GRID K120Q): no dash, Q or no series, fb from the description */
		FUZZ_ASSERT(t.backing == VGPU_BACKING_TIME_SLICED, "dashless '%s' not time-sliced",
			    t.profile);
		FUZZ_ASSERT(t.series == 0 || t.series == 'Q', "series=%d", t.series);
		FUZZ_ASSERT(t.fb_mib == 0 && t.board[0] == 'K', "Kepler '%s' fb %u board '%s'",
			    t.profile, t.fb_mib, t.board);
	} else if (t.backing != VGPU_BACKING_UNKNOWN) {
		FUZZ_ASSERT(t.series && strchr("ABCQ", t.series), "series=%d", t.series);
		FUZZ_ASSERT(t.fb_mib >= 512 && (t.fb_mib == 512 || t.fb_mib % 1024 == 0),
			    "fb_mib=%u", t.fb_mib);
		FUZZ_ASSERT(t.fb_mib <= 100000u * 1024, "fb_mib=%u", t.fb_mib);
		FUZZ_ASSERT(t.board[0] && strncmp(t.profile, t.board, strlen(t.board)) == 0,
			    "board '%s' not a prefix of '%s'", t.board, t.profile);
		FUZZ_ASSERT(t.profile[strlen(t.board)] == '-', "board '%s' in '%s'", t.board,
			    t.profile);
		for (const char *b = t.board; *b; b++)
			FUZZ_ASSERT(!isspace((unsigned char)*b), "blank in board '%s'", t.board);
	} else {
		FUZZ_ASSERT(t.series == 0 && t.fb_mib == 0 && t.slices == 0,
			    "unknown backing with series %d fb %u slices %u", t.series, t.fb_mib,
			    t.slices);
		FUZZ_ASSERT(!t.gi_profile[0] && t.gi_profile_id == -1,
			    "GI profile '%s' for unknown", t.gi_profile);
	}
	if (t.backing == VGPU_BACKING_TIME_SLICED)
		FUZZ_ASSERT(t.slices == 0 && !t.attribute[0] && !t.gi_profile[0] &&
				    t.gi_profile_id == -1,
			    "time-sliced '%s' with MIG fields", t.profile);
	if (t.backing == VGPU_BACKING_MIG) {
		FUZZ_ASSERT(t.slices >= 1 && t.slices <= 9, "slices=%u", t.slices);
		if (t.gi_profile[0]) {
			const struct vgpu_mig_board *b = vgpu_mig_board_lookup(t.board);

			FUZZ_ASSERT(b != NULL, "GI profile '%s' on unknown board '%s'",
				    t.gi_profile, t.board);
			FUZZ_ASSERT(t.gi_profile_id >= 0, "gi_profile_id=%d", t.gi_profile_id);
		} else {
			FUZZ_ASSERT(t.gi_profile_id == -1, "gi_profile_id=%d", t.gi_profile_id);
		}
	}
	/* helpers on the same bytes must not crash either */
	(void)vgpu_mig_board_lookup(name);
	(void)vgpu_backing_str(t.backing);
	if (size >= 2)
		(void)vgpu_model_for_device((uint16_t)(data[0] | data[1] << 8));
	free(name);
	return 0;
}
