// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The message catalogue (catalogue.c) and the pure half of diagnose
 * (diagnose.c): the shipped data/catalogue.tsv loads; every row has its
 * tests/diagnose/rows/ID.log, each of whose lines matches that row first and
 * no other root-cause row; no line of tests/diagnose/negative
 * (Intel GVT, AMD, healthy NVIDIA start-ups) matches a cause or symptom;
 * a malformed row is named by file and line; noise, info and symptoms are
 * never the verdict; status codes and Xids decode; lines are joined on the
 * address forms as whole words; --since leaves older lines out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "cleanup.h"
#include "diagnose.h"
#include "test-util.h"

static const char *srcdir;

/* @srcdir/@rel, whole, NUL-terminated. */
static char *slurp(const char *rel)
{
	char path[PATH_MAX];
	VGPU_AUTOFCLOSE FILE *f = NULL;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", srcdir, rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = vgpu_xmalloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	return buf;
}

static int load(void **state)
{
	VGPU_AUTOFREE char *text = slurp("data/catalogue.tsv");
	struct vgpu_catalogue *cat = vgpu_xcalloc(1, sizeof(*cat));
	struct vgpu_ctx ctx;
	int e;

	vgpu_ctx_init(&ctx, NULL, NULL);
	e = vgpu_catalogue_parse(&ctx, text, "data/catalogue.tsv", cat);
	if (e < 0)
		fail_msg("%s", vgpu_ctx_error(&ctx));
	vgpu_ctx_clear(&ctx);
	*state = cat;
	return 0;
}

static int unload(void **state)
{
	vgpu_catalogue_clear(*state);
	free(*state);
	return 0;
}

static const struct vgpu_cat_row *row_by_id(const struct vgpu_catalogue *cat, const char *id)
{
	for (size_t i = 0; i < cat->n; i++)
		if (!strcmp(cat->rows[i].id, id))
			return &cat->rows[i];
	return NULL;
}

/* At least 40 rows, most of them causes, each with a source. */
static void test_shipped(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	size_t causes = 0;

	assert_true(cat->n >= 40);
	for (size_t i = 0; i < cat->n; i++)
		causes += cat->rows[i].kind == VGPU_CAT_CAUSE;
	assert_true(causes >= 30);
	assert_non_null(row_by_id(cat, "cmd-failed"));
	assert_int_equal(row_by_id(cat, "cmd-failed")->kind, VGPU_CAT_NOISE);
}

/*
 * Each row's test lines (tests/diagnose/rows/ID.log, after its '#' lines):
 * its own row first, no other cause row at all (but the general row a
 * specific one is carved out of, listed after it); each row has its file.
 */
static bool general_of(const char *specific, const char *general)
{
	/* rminit-failed decodes any status; 0x22:0x65 (a wedged VF) is rminit-timeout's */
	return !strcmp(specific, "rminit-timeout") && !strcmp(general, "rminit-failed");
}

static void test_rows(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	size_t bad = 0, lines = 0;

	for (size_t r = 0; r < cat->n; r++) {
		const struct vgpu_cat_row *want = &cat->rows[r];
		char path[PATH_MAX];
		VGPU_AUTOFCLOSE FILE *f = NULL;
		char buf[4096];
		size_t mine = 0;

		snprintf(path, sizeof(path), "%s/tests/diagnose/rows/%s.log", srcdir, want->id);
		f = fopen(path, "r");
		if (!f) {
			print_error("row %s has no %s\n", want->id, path);
			bad++;
			continue;
		}
		while (fgets(buf, sizeof(buf), f)) {
			const struct vgpu_cat_row *got;

			buf[strcspn(buf, "\n")] = '\0';
			if (*buf == '#')
				continue;
			mine++;
			got = vgpu_catalogue_match(cat, buf, NULL);
			if (got != want) {
				print_error("%s: matched %s: %s\n", want->id,
					    got ? got->id : "nothing", buf);
				bad++;
			}
			for (size_t i = 0; i < cat->n; i++)
				if (&cat->rows[i] != want && cat->rows[i].kind == VGPU_CAT_CAUSE &&
				    !(i > r && general_of(want->id, cat->rows[i].id)) &&
				    vgpu_catalogue_row_matches(&cat->rows[i], buf)) {
					print_error("%s: cause row %s matches it too\n", want->id,
						    cat->rows[i].id);
					bad++;
				}
		}
		if (!mine) {
			print_error("row %s has no test line\n", want->id);
			bad++;
		}
		lines += mine;
	}
	assert_true(lines >= cat->n);
	assert_int_equal(bad, 0);
}

/* The negative corpus matches no cause and no symptom. */
static void test_negative(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	VGPU_AUTOFREE char *text = slurp("tests/diagnose/negative");
	size_t bad = 0, lines = 0;

	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		const struct vgpu_cat_row *got;

		if (*l == '#')
			continue;
		lines++;
		got = vgpu_catalogue_match(cat, l, NULL);
		if (got && (got->kind == VGPU_CAT_CAUSE || got->kind == VGPU_CAT_SYMPTOM)) {
			print_error("negative line matched %s: %s\n", got->id, l);
			bad++;
		}
	}
	assert_true(lines >= 20);
	assert_int_equal(bad, 0);
}

static void assert_malformed(const char *text, const char *want)
{
	struct vgpu_catalogue cat = { 0 };
	struct vgpu_ctx ctx;

	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_catalogue_parse(&ctx, text, "cat.tsv", &cat), -EINVAL);
	if (!strstr(vgpu_ctx_error(&ctx), want))
		fail_msg("'%s' does not say '%s'", vgpu_ctx_error(&ctx), want);
	assert_int_equal(cat.n, 0);
	vgpu_ctx_clear(&ctx);
}

#define OK_ROW "a\tcause\t-\tabc\twhy\tnext\tsrc\n"

/* A malformed row is named by file and line, and nothing is loaded. */
static void test_malformed(void **state)
{
	(void)state;
	assert_malformed("# c\n" OK_ROW "b\tcause\t-\tabc\twhy\tnext\n", "cat.tsv:3: 6 fields");
	assert_malformed(OK_ROW "b\tcause\t-\tx\twhy\tnext\tsrc\textra\n",
			 "cat.tsv:2: more than 7 fields");
	assert_malformed(OK_ROW "\n" OK_ROW, "cat.tsv:3: id 'a' is already on line 1");
	assert_malformed("b\tbad\t-\tabc\twhy\tnext\tsrc\n", "cat.tsv:1: kind 'bad'");
	assert_malformed("b\tcause\t-\tab(c\twhy\tnext\tsrc\n", "cat.tsv:1: regex 'ab(c'");
	assert_malformed("b\tcause\tstatus\tabc\twhy\tnext\tsrc\n",
			 "cat.tsv:1: decode 'status' needs a group");
	assert_malformed("B!\tcause\t-\tabc\twhy\tnext\tsrc\n", "cat.tsv:1: id 'B!'");
	assert_malformed("b\tcause\t-\t\twhy\tnext\tsrc\n", "cat.tsv:1: field 4 is empty");
	assert_malformed("# nothing\n", "cat.tsv: no rows");
}

/* The literal searched before regexec() is one every match holds: never an optional part. */
static void test_needle(void **state)
{
	struct vgpu_catalogue cat = { 0 };
	struct vgpu_ctx ctx;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(
		vgpu_catalogue_parse(&ctx,
				     "a\tcause\t-\tab( optional long part)?z\tw\tn\ts\n"
				     "b\tcause\t-\tcolou?r of [a-z]+ things{1,2}\tw\tn\ts\n"
				     "c\tcause\t-\tone\\.two or three\tw\tn\ts\n",
				     "t.tsv", &cat),
		0);
	assert_string_equal(cat.rows[0].needle, "ab");
	assert_string_equal(cat.rows[1].needle, " thing");
	assert_string_equal(cat.rows[2].needle, "one.two or three");
	assert_ptr_equal(vgpu_catalogue_match(&cat, "x abz y", NULL), &cat.rows[0]);
	assert_ptr_equal(vgpu_catalogue_match(&cat, "color of red things", NULL), &cat.rows[1]);
	assert_null(vgpu_catalogue_match(&cat, "onextwo or three", NULL));
	vgpu_catalogue_clear(&cat);
	vgpu_ctx_clear(&ctx);
}

static const struct vgpu_diag_query q0 = { .now = 1795000000 }; /* 2026-11-18 */

/* Noise, info and symptoms are never the verdict; the first cause is, even after a symptom. */
static void test_verdict(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	struct vgpu_strv none = { 0 };
	struct vgpu_diag d = { 0 };

	vgpu_diag_lines(
		cat, &none, "kern.log",
		"Nov 28 19:02:11 host nvidia-vgpu-mgr[1]: error: vmiop_log: (0x0): cmd: 0x2080012f failed.\n"
		"Nov 28 19:02:11 host nvidia-vgpu-mgr[1]: notice: vmiop_log: (0x0): FRL Value: 60 FPS\n",
		false, &q0, &d);
	vgpu_diag_finish(&d);
	assert_int_equal(d.n, 2);
	assert_null(d.verdict);
	assert_null(d.symptom);
	vgpu_diag_lines(
		cat, &none, "qemu.log",
		"2026-11-28T19:02:12Z qemu: failed to read device config space: Bad address\n",
		false, &q0, &d);
	vgpu_diag_finish(&d);
	assert_null(d.verdict);
	assert_non_null(d.symptom);
	assert_string_equal(d.symptom->row->id, "qemu-config-space");
	vgpu_diag_lines(
		cat, &none, "kern.log",
		"Nov 28 19:02:11 host nvidia-vgpu-mgr[1]: error: vmiop_log: (0x0): init_device_instance failed for inst 0 with error 2 (error setting vGPU configuration information from RM)\n",
		false, &q0, &d);
	vgpu_diag_finish(&d);
	assert_non_null(d.verdict);
	assert_string_equal(d.verdict->row->id, "init-device-instance");
	assert_null(d.symptom);
	/* in time order, not read order: the QEMU line (19:02:12) comes last */
	assert_string_equal(d.v[d.n - 1].source, "qemu.log");
	vgpu_diag_clear(&d);
}

/* Status codes and Xids: captured and named with NVIDIA's tables. */
static void test_decode(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	const struct vgpu_cat_row *r;
	const char *bucket = NULL;
	unsigned long code = 0;

	r = vgpu_catalogue_match(cat, "NVRM: Failed to add vgpu create request: 0x38", &code);
	assert_non_null(r);
	assert_int_equal(code, 0x38);
	assert_string_equal(vgpu_status_name(code), "INVALID_OPERATION");
	r = vgpu_catalogue_match(
		cat, "NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x22:0x65:884)", &code);
	assert_string_equal(r->id, "rminit-timeout");
	assert_string_equal(vgpu_status_name(code), "TIMEOUT");
	r = vgpu_catalogue_match(
		cat, "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.", &code);
	assert_string_equal(r->id, "xid");
	assert_int_equal(code, 79);
	assert_string_equal(vgpu_xid_info(code, &bucket), "GPU has fallen off the bus");
	assert_string_equal(bucket, "RESTART_BM");
	/* NVIDIA's catalogue: Xid 43 follows another Xid (IGNORE), 48 has its own workflow */
	assert_non_null(vgpu_xid_info(43, &bucket));
	assert_string_equal(bucket, "IGNORE");
	assert_non_null(vgpu_xid_info(48, &bucket));
	assert_string_equal(bucket, "WORKFLOW_XID_48");
	assert_null(vgpu_status_name(0x9999));
	assert_null(vgpu_xid_info(9999, &bucket));
}

/* Joined on whole words: 0:3b:0.4 and 00:3b:00.4 are the VF; its neighbour .5 is not; the GPU's
 * Xid form is. */
static void test_join(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	struct vgpu_strv ids = { 0 };
	struct vgpu_diag d = { 0 };

	vgpu_strv_push(&ids, vgpu_xstrdup("0000:3b:00.4"));
	vgpu_strv_push(&ids, vgpu_xstrdup("00:3b:00.4"));
	vgpu_strv_push(&ids, vgpu_xstrdup("0:3b:0.4"));
	vgpu_strv_push(&ids, vgpu_xstrdup("0000:3b:00"));
	vgpu_diag_lines(cat, &ids, "kern.log",
			"x: vfio-pci: probe of 0000:3b:00.5 failed with error -22\n"
			"x: vfio-pci: probe of 0000:3b:00.4 failed with error -22\n"
			"x: GPU not supported by vGPU at PCI Id: 0:3b:0.4 DevID\n"
			"x: GPU not supported by vGPU at PCI Id: 10:3b:0.4 DevID\n"
			"x: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
			"x: NVRM: Xid (PCI:0000:3b:01): 79, GPU has fallen off the bus.\n",
			false, &q0, &d);
	assert_int_equal(d.n, 3);
	assert_int_equal(d.v[0].lineno, 2);
	assert_int_equal(d.v[1].lineno, 3);
	assert_int_equal(d.v[2].lineno, 5);
	vgpu_diag_clear(&d);
	vgpu_strv_clear(&ids);
}

/* Times: syslog's (the year of now), ISO with and without a zone; --since leaves older out. */
static void test_since(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	struct vgpu_diag_query q = { .now = 1795000000 };
	struct vgpu_strv none = { 0 };
	struct vgpu_diag d = { 0 };
	long long t = 0, u = 0;

	assert_int_equal(vgpu_diag_parse_time("2026-11-28T19:02:11.5+01:00 x", q.now, &t), 27);
	assert_int_equal(t, 1795892531 - 3600);
	assert_int_equal(vgpu_diag_parse_time("2026-11-28T19:02:11Z", q.now, &u), 20);
	assert_int_equal(u - t, 3600);
	assert_int_equal(vgpu_diag_parse_time("Nov  8 19:02:11 host", q.now, &t), 15);
	assert_int_equal(vgpu_diag_parse_time("[ 12.5] x", q.now, &t), 0);
	assert_true(vgpu_diag_parse_time("2026-11-28 19:02", q.now, &q.since) > 0);
	vgpu_diag_lines(cat, &none, "qemu.log",
			"2026-11-28T19:01:00Z VFIO_MAP_DMA failed: Cannot allocate memory\n"
			"2026-11-28T19:03:00Z VFIO_MAP_DMA failed: Invalid argument\n",
			false, &q, &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].row->id, "map-dma-einval");
	vgpu_diag_clear(&d);
}

/*
 * A boot loop: the same failure again and again (new dmesg stamps, new
 * process IDs) is one entry with its count and last place; another status
 * or another vGPU is another entry, and the verdict is the first.
 */
static void test_repeats(void **state)
{
	const struct vgpu_catalogue *cat = *state;
	struct vgpu_diag_query q = { .now = 1795000000 };
	struct vgpu_strv none = { 0 };
	struct vgpu_diag d = { 0 };

	vgpu_diag_lines(
		cat, &none, "kern.log",
		"[ 2720.206992] [nvidia-vgpu-vfio] 00eac34d-8b67-401e-9faa-feb8f2456c29: start failed. status: 0x1\n"
		"[ 2731.000001] [nvidia-vgpu-vfio] 00eac34d-8b67-401e-9faa-feb8f2456c29: start failed. status: 0x1\n"
		"[ 2731.000002] [nvidia-vgpu-vfio] 11eac34d-8b67-401e-9faa-feb8f2456c29: start failed. status: 0x1\n"
		"[ 2742.5] [nvidia-vgpu-vfio] 00eac34d-8b67-401e-9faa-feb8f2456c29: start failed. status: 0x1\n",
		false, &q, &d);
	vgpu_diag_lines(
		cat, &none, "journal",
		"2026-11-28T19:02:11Z nvidia-vgpu-mgr[2314]: error: vmiop_log: NVOS status 0x56\n"
		"2026-11-28T19:03:11Z nvidia-vgpu-mgr[2390]: error: vmiop_log: NVOS status 0x56\n"
		"2026-11-28T19:04:11Z nvidia-vgpu-mgr[2391]: error: vmiop_log: NVOS status 0x51\n",
		false, &q, &d);
	vgpu_diag_finish(&d);
	assert_int_equal(d.n, 4);
	assert_int_equal(d.v[0].count, 3);
	assert_string_equal(d.v[0].last_source, "kern.log");
	assert_int_equal(d.v[0].last_lineno, 4);
	assert_int_equal(d.v[1].count, 1);
	assert_int_equal(d.v[2].count, 2);
	assert_int_equal(d.v[2].code, 0x56);
	assert_int_equal(d.v[2].last_lineno, 2);
	assert_int_equal(d.v[2].last_when, 1795892591);
	assert_int_equal(d.v[3].code, 0x51);
	assert_ptr_equal(d.verdict, &d.v[0]);
	vgpu_diag_clear(&d);
}

/* journalctl -o json: one line per record with a MESSAGE string, its escapes decoded. */
static void test_journal(void **state)
{
	VGPU_AUTOFREE char *text = NULL;

	(void)state;
	text = vgpu_diag_journal_text(
		"{\"__REALTIME_TIMESTAMP\":\"1795892531000002\",\"_PID\":\"2314\",\"SYSLOG_IDENTIFIER\":\"nvidia-vgpu-mgr\",\"MESSAGE\":\"a \\\"b\\\"\\nc \\u00e9\"}\n"
		"{\"MESSAGE\":[98,105,110],\"_PID\":\"1\"}\n"
		"{\"_PID\":\"7\",\"MESSAGE\":\"no time, no name\",\"X\":null}\n");
	assert_string_equal(
		text, "2026-11-28T19:02:11.000002Z nvidia-vgpu-mgr[2314]: a \"b\" c \xc3\xa9\n"
		      "journal[7]: no time, no name\n");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped),	 cmocka_unit_test(test_rows),
		cmocka_unit_test(test_negative), cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_verdict),	 cmocka_unit_test(test_decode),
		cmocka_unit_test(test_join),	 cmocka_unit_test(test_since),
		cmocka_unit_test(test_needle),	 cmocka_unit_test(test_journal),
		cmocka_unit_test(test_repeats),
	};

	srcdir = test_srcdir(argc, argv);
	if (!srcdir)
		return 1;
	setenv("TZ", "UTC", 1);
	return cmocka_run_group_tests(tests, load, unload);
}
