// SPDX-License-Identifier: GPL-2.0-or-later
/* vgpu_description_max_instance() on arbitrary text: -1 or a count in range. */
#include "fuzz-common.h"
#include "read-priv.h"

#define MAX_INPUT 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	long v;

	if (size > MAX_INPUT)
		return 0;
	text = fuzz_cstr(data, size);
	v = vgpu_description_max_instance(text);
	FUZZ_ASSERT(v == -1 || (v >= 0 && v <= VGPU_MAX_INSTANCES), "max_instance %ld", v);
	if (v >= 0)
		FUZZ_ASSERT(strstr(text, "max_instance=") != NULL, "%ld without the key", v);
	free(text);
	return 0;
}
