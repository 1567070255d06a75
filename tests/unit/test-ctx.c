// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-ctx - the error and log channel (src/lib/ctx.c) and the small pure
 * helpers of util.c: UTF-8 checks, PCI addresses, string lists.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

/* Every message of any priority, with its priority. */
struct log {
	char *msgs[16];
	int prio[16];
	size_t n;
};

static void log_all(void *data, int priority, const char *msg)
{
	struct log *l = data;

	assert_true(l->n < ARRAY_SIZE(l->msgs));
	l->prio[l->n] = priority;
	l->msgs[l->n++] = strdup(msg);
}

static void log_free(struct log *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->msgs[i]);
	l->n = 0;
}

static void test_error(void **state)
{
	struct vgpu_ctx ctx;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_string_equal(vgpu_ctx_error(&ctx), "unknown error");
	assert_int_equal(vgpu_error(&ctx, -ENOENT, "first %d", 1), -ENOENT);
	assert_string_equal(vgpu_ctx_error(&ctx), "first 1");
	/* a positive code comes back negative; the message is replaced */
	assert_int_equal(vgpu_error(&ctx, EINVAL, "second"), -EINVAL);
	assert_string_equal(vgpu_ctx_error(&ctx), "second");
	/* 0 is not a success code for an error */
	assert_int_equal(vgpu_error(&ctx, 0, "zero"), -EIO);
	/* control characters are escaped */
	vgpu_error(&ctx, -EIO, "a\nb\x1b[0m\x7f");
	assert_string_equal(vgpu_ctx_error(&ctx), "a\\x0ab\\x1b[0m\\x7f");
	/* the old message may be an argument of the new one (ASan saw a use after free) */
	vgpu_error(&ctx, -EIO, "inner");
	vgpu_error(&ctx, -EBUSY, "%s; outer", vgpu_ctx_error(&ctx));
	assert_string_equal(vgpu_ctx_error(&ctx), "inner; outer");
	vgpu_ctx_clear(&ctx);
	assert_string_equal(vgpu_ctx_error(&ctx), "unknown error");
	vgpu_ctx_clear(&ctx);
}

static void test_error_append(void **state)
{
	struct vgpu_ctx ctx;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	vgpu_error(&ctx, -EBUSY, "first");
	vgpu_error_append(&ctx, "undo");
	assert_string_equal(vgpu_ctx_error(&ctx), "first; undo");
	vgpu_error_append(&ctx, "x\ty");
	assert_string_equal(vgpu_ctx_error(&ctx), "first; undo; x\\x09y");
	vgpu_ctx_clear(&ctx);
	/* nothing recorded yet */
	vgpu_error_append(&ctx, "undo");
	assert_string_equal(vgpu_ctx_error(&ctx), "unknown error; undo");
	vgpu_ctx_clear(&ctx);
}

static void test_log(void **state)
{
	struct vgpu_ctx ctx;
	struct log l = { 0 };

	(void)state;
	vgpu_ctx_init(&ctx, log_all, &l);
	vgpu_log(&ctx, LOG_DEBUG, "debug");
	vgpu_info(&ctx, "info %s", "x");
	vgpu_warn(&ctx, "warn\nline");
	vgpu_log(&ctx, LOG_ERR, "err");
	assert_int_equal(l.n, 3); /* LOG_INFO and more urgent by default */
	assert_string_equal(l.msgs[0], "info x");
	assert_int_equal(l.prio[0], LOG_INFO);
	assert_string_equal(l.msgs[1], "warn\\x0aline");
	assert_int_equal(l.prio[1], LOG_WARNING);
	assert_int_equal(l.prio[2], LOG_ERR);
	log_free(&l);
	vgpu_ctx_set_priority(&ctx, LOG_WARNING);
	vgpu_info(&ctx, "dropped");
	vgpu_warn(&ctx, "kept");
	assert_int_equal(l.n, 1);
	assert_string_equal(l.msgs[0], "kept");
	log_free(&l);
	vgpu_ctx_set_priority(&ctx, LOG_DEBUG);
	vgpu_log(&ctx, LOG_DEBUG, "debug");
	assert_int_equal(l.n, 1);
	log_free(&l);
	/* no callback: nothing happens */
	vgpu_ctx_init(&ctx, NULL, NULL);
	vgpu_warn(&ctx, "nobody listens");
	/* logging leaves the error alone */
	assert_string_equal(vgpu_ctx_error(&ctx), "unknown error");
	vgpu_ctx_clear(&ctx);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(vgpu_strerror(VGPU_ENOTREG), "not a regular file");
	assert_string_equal(vgpu_strerror(-VGPU_ENOTREG), "not a regular file");
	assert_string_equal(vgpu_strerror(-VGPU_ERANGE_VALUE), "value out of range");
	assert_string_equal(vgpu_strerror(-VGPU_EESCAPE), "leads outside the root");
	assert_string_equal(vgpu_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(vgpu_strerror(EISDIR), strerror(EISDIR));
}

static void test_utf8(void **state)
{
	static const char *const good[] = { "", "plain", "vm-ü", "日本", "\xf0\x9f\x98\x80" };
	static const char *const bad[] = {
		"\xff",
		"a\x80",
		"\xc0\xaf" /* overlong '/' */,
		"\xed\xa0\x80" /* surrogate */,
		"\xe6\x97" /* cut */,
		"\xf4\x90\x80\x80" /* > U+10FFFF */,
	};
	char *s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		if (!vgpu_utf8_valid(good[i]))
			fail_msg("good case %zu is refused", i);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (vgpu_utf8_valid(bad[i]))
			fail_msg("bad case %zu is accepted", i);
	s = vgpu_utf8_sanitize("a\xff"
			       "b");
	assert_string_equal(s, "a\xef\xbf\xbd"
			       "b");
	assert_true(vgpu_utf8_valid(s));
	free(s);
	s = vgpu_utf8_sanitize("vm-ü");
	assert_string_equal(s, "vm-ü");
	free(s);
}

static void test_bdf(void **state)
{
	static const struct {
		const char *in, *out;
	} good[] = {
		{ "0000:3B:00.0", "0000:3b:00.0" },
		{ "3b:00.4", "0000:3b:00.4" },
		{ "00000000:3D:00.0", "0000:3d:00.0" }, /* nvidia-smi's 8-digit domain */
		{ "3b:0.4", "0000:3b:00.4" },
		{ "FFFF:FF:1F.7", "ffff:ff:1f.7" }, /* every field at its largest */
		{ "a:0:0.0", "000a:00:00.0" }, /* every field padded */
	};
	static const char *const bad[] = { "0x:e.5",   " 3b:00.4",  "3b:00.4 ", "3b :00.4",
					   "3b:00 .4", "\t3b:00.4", "",		"0x3b:00.4" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char out[VGPU_BDF_LEN];

		if (vgpu_bdf_normalize(good[i].in, out) != 0)
			fail_msg("'%s' refused", good[i].in);
		assert_string_equal(out, good[i].out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char out[VGPU_BDF_LEN] = "unchanged";

		if (vgpu_bdf_normalize(bad[i], out) != -EINVAL)
			fail_msg("'%s' accepted as %s", bad[i], out);
	}
}

static void test_strv(void **state)
{
	VGPU_AUTOSTRV v = { 0 };
	static const char *const in[] = { "virtfn10", "b", "virtfn2", "b", "a", "virtfn10" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(in); i++)
		vgpu_strv_push(&v, strdup(in[i]));
	vgpu_strv_uniq(&v);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.items[0], "a");
	assert_string_equal(v.items[1], "b");
	assert_string_equal(v.items[2], "virtfn10");
	assert_string_equal(v.items[3], "virtfn2");
	vgpu_strv_sort(&v);
	assert_string_equal(v.items[2], "virtfn2");
	assert_string_equal(v.items[3], "virtfn10");
	vgpu_strv_clear(&v);
	assert_int_equal(v.n, 0);
	vgpu_strv_uniq(&v); /* empty is fine */
	assert_int_equal(v.n, 0);
}

static void test_path_join(void **state)
{
	char buf[16], big[600];

	(void)state;
	assert_int_equal(vgpu_path_join(buf, sizeof(buf), "nvidia-600", "name"), 0);
	assert_string_equal(buf, "nvidia-600/name");
	assert_int_equal(vgpu_path_join(buf, sizeof(buf), "", "vendor"), 0);
	assert_string_equal(buf, "vendor");
	assert_int_equal(vgpu_path_join(buf, sizeof(buf), "a", ""), 0);
	assert_string_equal(buf, "a/");
	/* 15 characters fit a 16-byte buffer, 16 do not: nothing is cut */
	assert_int_equal(vgpu_path_join(buf, sizeof(buf), "nvidia-6000", "name"), -ENAMETOOLONG);
	assert_string_equal(buf, "");
	assert_int_equal(vgpu_path_join(buf, sizeof(buf), "", "0123456789abcdef"), -ENAMETOOLONG);
	assert_int_equal(vgpu_path_join(buf, sizeof(buf), "", "0123456789abcde"), 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(vgpu_path_join(buf, sizeof(buf), big, "name"), -ENAMETOOLONG);
}

/* a list built piece by piece: NULL starts it, each piece lands at the end */
static void test_append(void **state)
{
	char *s = NULL;

	(void)state;
	vgpu_append(&s, "%s", "3g.40gb");
	vgpu_append(&s, ", %s x%u", "1g.10gb", 2u);
	vgpu_append(&s, "%s", "");
	assert_string_equal(s, "3g.40gb, 1g.10gb x2");
	for (int i = 0; i < 1000; i++)
		vgpu_append(&s, "%d", i % 10);
	assert_int_equal(strlen(s), 19 + 1000);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error),	  cmocka_unit_test(test_error_append),
		cmocka_unit_test(test_append),	  cmocka_unit_test(test_log),
		cmocka_unit_test(test_strerror),  cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_bdf),	  cmocka_unit_test(test_strv),
		cmocka_unit_test(test_path_join),
	};

	return cmocka_run_group_tests_name("ctx", tests, NULL, NULL);
}
