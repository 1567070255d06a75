// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-params - a domain's vgpu_params set (src/lib/params.c): what is
 * accepted, how sets merge and format as the driver's file takes them, the
 * profiling refusal, and the set kept in our metadata (domxml).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domxml.h"
#include "params.h"
#include "records.h"
#include "test-util.h"

static char text[VGPU_PARAMS_TEXT_MAX];

static const char *fmt(const struct vgpu_params *p)
{
	return vgpu_params_format(p, text, sizeof(text));
}

/* Documented keys take 0 or 1; others only with raw; names and values are checked. */
static void test_validate(void **state)
{
	struct vgpu_params p = { .n = 0 };
	struct vgpu_ctx ctx;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_params_set(&ctx, &p, "frame_rate_limiter", "0", false), 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "disable_vnc", "2", false), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "disable_vnc takes 0 or 1, not '2'"));
	assert_int_equal(vgpu_params_set(&ctx, &p, "enable_uvm", "yes", true), -EINVAL);
	assert_int_equal(vgpu_params_set(&ctx, &p, "loglevel", "5", false), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "not one of NVIDIA's documented"));
	assert_int_equal(vgpu_params_set(&ctx, &p, "loglevel", "5", true), 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "vgpu-placement-id", "3", true), 0);
	/* the file's separators and blanks never get into a name or value */
	assert_int_equal(vgpu_params_set(&ctx, &p, "a,b", "1", true), -EINVAL);
	assert_int_equal(vgpu_params_set(&ctx, &p, "x", "1,enable_uvm=1", true), -EINVAL);
	assert_int_equal(vgpu_params_set(&ctx, &p, "x", "a b", true), -EINVAL);
	assert_int_equal(vgpu_params_set(&ctx, &p, "x", "", true), -EINVAL);
	assert_int_equal(vgpu_params_set(&ctx, &p, "", "1", true), -EINVAL);
	assert_string_equal(fmt(&p), "frame_rate_limiter=0,loglevel=5,vgpu-placement-id=3");
	assert_true(vgpu_param_documented("enable_profiling"));
	assert_false(vgpu_param_documented("loglevel"));
	vgpu_ctx_clear(&ctx);
}

/* Keys stay sorted and unique; set replaces, unset drops; too many is refused. */
static void test_merge(void **state)
{
	struct vgpu_params p = { .n = 0 };
	struct vgpu_ctx ctx;
	char key[16];

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_params_set(&ctx, &p, "enable_uvm", "1", false), 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "disable_vnc", "1", false), 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "enable_uvm", "0", false), 0);
	assert_string_equal(fmt(&p), "disable_vnc=1,enable_uvm=0");
	assert_string_equal(vgpu_params_get(&p, "enable_uvm"), "0");
	assert_true(vgpu_params_unset(&p, "disable_vnc"));
	assert_false(vgpu_params_unset(&p, "disable_vnc"));
	assert_string_equal(fmt(&p), "enable_uvm=0");
	assert_null(vgpu_params_get(&p, "disable_vnc"));
	p.n = 0;
	for (int i = 0; i < VGPU_PARAMS_MAX; i++) {
		snprintf(key, sizeof(key), "k%02d", i);
		assert_int_equal(vgpu_params_set(&ctx, &p, key, "1", true), 0);
	}
	assert_int_equal(vgpu_params_set(&ctx, &p, "k99", "1", true), -E2BIG);
	assert_int_equal(vgpu_params_set(&ctx, &p, "k00", "2", true), 0); /* a replace fits */
	vgpu_ctx_clear(&ctx);
}

/* The driver's text: parsed leniently, written whole; the empty set is a space. */
static void test_parse_format(void **state)
{
	struct vgpu_params a, b;
	struct vgpu_ctx ctx;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_params_parse(&ctx, "frame_rate_limiter=0, disable_vnc=1,\n", &a), 0);
	assert_string_equal(fmt(&a), "disable_vnc=1,frame_rate_limiter=0");
	assert_int_equal(vgpu_params_parse(&ctx, "disable_vnc=1,frame_rate_limiter=0", &b), 0);
	assert_true(vgpu_params_equal(&a, &b));
	assert_int_equal(vgpu_params_parse(&ctx, "disable_vnc=0,frame_rate_limiter=0", &b), 0);
	assert_false(vgpu_params_equal(&a, &b));
	assert_int_equal(vgpu_params_parse(&ctx, " \n", &b), 0);
	assert_int_equal(b.n, 0);
	assert_false(vgpu_params_equal(&a, &b));
	assert_string_equal(vgpu_params_file_text(&b, text, sizeof(text)), " ");
	assert_string_equal(vgpu_params_file_text(&a, text, sizeof(text)),
			    "disable_vnc=1,frame_rate_limiter=0");
	assert_int_equal(vgpu_params_parse(&ctx, "loglevel=5,intervaltime", &b), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "'intervaltime' is not name=value"));
	vgpu_ctx_clear(&ctx);
}

/* enable_uvm, enable_debugging and enable_profiling block live migration when on. */
static void test_migration(void **state)
{
	struct vgpu_param uvm = { "enable_uvm", "1" }, uvm0 = { "enable_uvm", "0" };
	struct vgpu_param dbg = { "enable_debugging", "1" }, prof = { "enable_profiling", "1" };
	struct vgpu_param frl = { "frame_rate_limiter", "0" };

	(void)state;
	assert_true(vgpu_param_blocks_migration(&uvm));
	assert_true(vgpu_param_blocks_migration(&dbg));
	assert_true(vgpu_param_blocks_migration(&prof));
	assert_false(vgpu_param_blocks_migration(&uvm0));
	assert_false(vgpu_param_blocks_migration(&frl));
}

static bool profiling_on(void *data, const struct vgpu_record *r)
{
	const char *who = data;

	return strcmp(r->domain, who) == 0;
}

static void rec(struct vgpu_record *r, const char *dom, const char *uuid, const char *gpu,
		const char *vf, enum vgpu_record_state st)
{
	*r = test_record(dom, uuid, gpu, vf, 0, "");
	r->state = st;
}

#define U1 "11111111-2222-4333-8444-555555555555"
#define U2 "22222222-2222-4333-8444-555555555555"
#define U3 "33333333-2222-4333-8444-555555555555"

/* Profiling: one domain per GPU, running or migrating in; another GPU is no conflict. */
static void test_profiling(void **state)
{
	struct vgpu_record v[3];
	struct vgpu_records recs = { .v = v, .n = 3 };
	struct vgpu_params p = { .n = 0 };
	struct vgpu_ctx ctx;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	rec(&v[0], "a", U1, "0000:3b:00.0", "0000:3b:00.4", VGPU_RECORD_ACTIVE);
	rec(&v[1], "b", U2, "0000:3b:00.0", "0000:3b:00.5", VGPU_RECORD_ACTIVE);
	rec(&v[2], "c", U3, "0000:af:00.0", "0000:af:00.4", VGPU_RECORD_ACTIVE);
	/* without profiling in the set nothing is asked */
	assert_int_equal(vgpu_params_check_profiling(&ctx, &recs, U1, &p, profiling_on, "b"), 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "enable_profiling", "1", false), 0);
	assert_int_equal(vgpu_params_check_profiling(&ctx, &recs, U1, &p, profiling_on, "b"),
			 -EBUSY);
	assert_non_null(strstr(vgpu_ctx_error(&ctx),
			       "domain 'b' (" U2 ") has profiling on GPU 0000:3b:00.0"));
	/* the one with profiling on another GPU, or nobody: fine */
	assert_int_equal(vgpu_params_check_profiling(&ctx, &recs, U1, &p, profiling_on, "c"), 0);
	assert_int_equal(vgpu_params_check_profiling(&ctx, &recs, U1, &p, profiling_on, "x"), 0);
	/* its own record is not another domain */
	assert_int_equal(vgpu_params_check_profiling(&ctx, &recs, U1, &p, profiling_on, "a"), 0);
	/* a domain migrating here (incoming) runs here once it arrives: it counts */
	v[1].state = VGPU_RECORD_INCOMING;
	assert_int_equal(vgpu_params_check_profiling(&ctx, &recs, U1, &p, profiling_on, "b"),
			 -EBUSY);
	assert_non_null(strstr(vgpu_ctx_error(&ctx),
			       "domain 'b' (" U2 ") has profiling on GPU 0000:3b:00.0"));
	/* profiling=0 is off */
	v[1].state = VGPU_RECORD_ACTIVE;
	assert_int_equal(vgpu_params_set(&ctx, &p, "enable_profiling", "0", false), 0);
	assert_int_equal(vgpu_params_check_profiling(&ctx, &recs, U1, &p, profiling_on, "b"), 0);
	vgpu_ctx_clear(&ctx);
}

static const char dom_xml[] =
	"<domain type='kvm'><name>vm1</name><uuid>" U1 "</uuid><metadata>"
	"<vgpuctl:vgpus xmlns:vgpuctl='urn:vgpuctl:domain:1' owner='" U1 "' node='0'>"
	"<vgpuctl:vgpu profile='A30-6C' type-id='684' interface='mdev' backing='time-sliced' "
	"gpu='0000:3b:00.0' vf='0000:3b:00.4' mdev-uuid='" U2 "'/>"
	"<vgpuctl:saved><vcpu>2</vcpu></vgpuctl:saved>"
	"</vgpuctl:vgpus></metadata></domain>";

/* The set in our metadata: written, read back, replaced, emptied; none without our metadata. */
static void test_metadata(void **state)
{
	struct _xmlDoc *doc = NULL;
	struct vgpu_params p = { .n = 0 }, got;
	struct vgpu_meta m;
	struct vgpu_ctx ctx;
	bool present = true;
	char *out = NULL;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_domain_parse(&ctx, dom_xml, strlen(dom_xml), "t", &doc), 0);
	assert_int_equal(vgpu_domain_read_params(&ctx, doc, &got, &present), 0);
	assert_false(present);
	assert_int_equal(got.n, 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "disable_vnc", "1", false), 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "loglevel", "5", true), 0);
	assert_int_equal(vgpu_domain_set_params(&ctx, doc, &p), 0);
	assert_int_equal(vgpu_params_set(&ctx, &p, "disable_vnc", "0", false), 0);
	assert_int_equal(vgpu_domain_set_params(&ctx, doc, &p), 0); /* replaces, not a second one */
	assert_int_equal(vgpu_domain_format(&ctx, doc, &out), 0);
	assert_non_null(strstr(out, "<vgpuctl:params>\n"
				    "        <vgpuctl:param name=\"disable_vnc\" value=\"0\"/>\n"
				    "        <vgpuctl:param name=\"loglevel\" value=\"5\"/>\n"
				    "      </vgpuctl:params>\n"
				    "      <vgpuctl:saved>"));
	assert_int_equal(vgpu_domain_read_meta(&ctx, doc, &m), 0);
	assert_true(m.has_params);
	assert_true(vgpu_params_equal(&m.params, &p));
	assert_int_equal(m.n_vgpus, 1);
	vgpu_meta_clear(&m);
	p.n = 0;
	assert_int_equal(vgpu_domain_set_params(&ctx, doc, &p), 0);
	assert_int_equal(vgpu_domain_read_params(&ctx, doc, &got, &present), 0);
	assert_true(present); /* an empty set is kept: the file is cleared at the next start */
	assert_int_equal(got.n, 0);
	free(out);
	vgpu_xml_doc_free(doc);
	/* a domain without our vGPUs has nowhere to keep a set */
	assert_int_equal(vgpu_domain_parse(&ctx, "<domain><name>x</name></domain>", 31, "t", &doc),
			 0);
	assert_int_equal(vgpu_domain_set_params(&ctx, doc, &p), -ENOENT);
	vgpu_xml_doc_free(doc);
	vgpu_ctx_clear(&ctx);
}

/* A damaged parameter in the metadata is refused, named. */
static void test_metadata_damaged(void **state)
{
	static const char bad[] =
		"<domain><name>x</name><metadata><v:vgpus xmlns:v='urn:vgpuctl:domain:1' "
		"owner='" U1 "'><v:params><v:param name='a,b' value='1'/></v:params></v:vgpus>"
		"</metadata></domain>";
	struct _xmlDoc *doc = NULL;
	struct vgpu_params got;
	struct vgpu_ctx ctx;
	bool present;

	(void)state;
	vgpu_ctx_init(&ctx, NULL, NULL);
	assert_int_equal(vgpu_domain_parse(&ctx, bad, strlen(bad), "t", &doc), 0);
	assert_int_equal(vgpu_domain_read_params(&ctx, doc, &got, &present), -EINVAL);
	assert_non_null(strstr(vgpu_ctx_error(&ctx), "'a,b' is not a parameter name"));
	vgpu_xml_doc_free(doc);
	vgpu_ctx_clear(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate),	 cmocka_unit_test(test_merge),
		cmocka_unit_test(test_parse_format),	 cmocka_unit_test(test_migration),
		cmocka_unit_test(test_profiling),	 cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_metadata_damaged),
	};

	return cmocka_run_group_tests_name("params", tests, NULL, NULL);
}
