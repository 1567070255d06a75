// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Thin libvirt wrapper.  libvirt is loaded with dlopen() on first use:
 * linking it pulls ~55 shared libraries and ~12 ms into every start of
 * every command, while only those given -c URI talk to libvirt (and the
 * hook must never do so).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "domxml.h"
#include "exec.h"
#include "sysfs.h"
#include "virt.h"

struct virt_api {
	virConnectPtr (*connect_open)(const char *);
	int (*connect_close)(virConnectPtr);
	int (*list_all)(virConnectPtr, virDomainPtr **, unsigned int);
	char *(*get_xml)(virDomainPtr, unsigned int);
	int (*dom_free)(virDomainPtr);
	const char *(*last_error)(void);
	void (*set_error_func)(void *, virErrorFunc);
	int (*event_register_default)(void);
	virDomainPtr (*lookup_name)(virConnectPtr, const char *);
	virDomainPtr (*define_xml)(virConnectPtr, const char *);
	int (*is_active)(virDomainPtr);
	int (*lib_version)(virConnectPtr, unsigned long *);
	int (*create)(virDomainPtr);
	char *(*hostname)(virConnectPtr);
	/* migrate-check: the domain, the versions, the max downtime */
	virDomainPtr (*lookup_uuid)(virConnectPtr, const char *);
	const char *(*conn_type)(virConnectPtr);
	int (*hv_version)(virConnectPtr, unsigned long *);
	int (*max_downtime)(virDomainPtr, unsigned long long *, unsigned int);
};

struct vgpu_virt {
	void *dl;
	struct virt_api api;
	virConnectPtr conn;
};

static void silent_error(void *data, virErrorPtr e)
{
	(void)data;
	(void)e;
}

static int load_api(struct vgpu_ctx *ctx, struct vgpu_virt *v)
{
	static const struct {
		const char *sym;
		size_t off;
	} syms[] = {
		{ "virConnectOpen", offsetof(struct virt_api, connect_open) },
		{ "virConnectClose", offsetof(struct virt_api, connect_close) },
		{ "virConnectListAllDomains", offsetof(struct virt_api, list_all) },
		{ "virDomainGetXMLDesc", offsetof(struct virt_api, get_xml) },
		{ "virDomainFree", offsetof(struct virt_api, dom_free) },
		{ "virGetLastErrorMessage", offsetof(struct virt_api, last_error) },
		{ "virSetErrorFunc", offsetof(struct virt_api, set_error_func) },
		{ "virEventRegisterDefaultImpl",
		  offsetof(struct virt_api, event_register_default) },
		{ "virDomainLookupByName", offsetof(struct virt_api, lookup_name) },
		{ "virDomainDefineXML", offsetof(struct virt_api, define_xml) },
		{ "virDomainIsActive", offsetof(struct virt_api, is_active) },
		{ "virConnectGetLibVersion", offsetof(struct virt_api, lib_version) },
		{ "virDomainCreate", offsetof(struct virt_api, create) },
		{ "virConnectGetHostname", offsetof(struct virt_api, hostname) },
		{ "virDomainLookupByUUIDString", offsetof(struct virt_api, lookup_uuid) },
		{ "virConnectGetType", offsetof(struct virt_api, conn_type) },
		{ "virConnectGetVersion", offsetof(struct virt_api, hv_version) },
		{ "virDomainMigrateGetMaxDowntime", offsetof(struct virt_api, max_downtime) },
	};

	v->dl = dlopen("libvirt.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!v->dl)
		return vgpu_error(ctx, -ENOENT, "cannot load libvirt (libvirt.so.0): %s",
				  dlerror());
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		void *f = dlsym(v->dl, syms[i].sym);

		if (!f)
			return vgpu_error(ctx, -ENOENT, "libvirt.so.0 lacks %s", syms[i].sym);
		memcpy((char *)&v->api + syms[i].off, &f, sizeof(f));
	}
	return 0;
}

int vgpu_virt_open(struct vgpu_ctx *ctx, const char *uri, struct vgpu_virt **out)
{
	VGPU_AUTOPTR(virt) v = vgpu_xcalloc(1, sizeof(*v));
	int r = load_api(ctx, v);

	if (r < 0)
		return r;
	v->api.set_error_func(NULL, silent_error);
	/* embedded drivers (qemu:///embed) refuse to open without an event loop impl */
	if (v->api.event_register_default() < 0)
		return vgpu_error(ctx, -EIO, "cannot set up libvirt's event loop: %s",
				  v->api.last_error());
	v->conn = v->api.connect_open(uri);
	if (!v->conn)
		return vgpu_error(ctx, -EIO, "cannot connect to '%s': %s", uri,
				  v->api.last_error());
	*out = vgpu_steal_ptr(&v);
	return 0;
}

/* Host names name one host when their first labels match, any case (one may be FQDN). */
static bool same_host(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	return la == lb && strncasecmp(a, b, la) == 0;
}

int vgpu_virt_open_host(struct vgpu_ctx *ctx, const char *uri, struct vgpu_sysfs *fs,
			struct vgpu_virt **out)
{
	VGPU_AUTOPTR(virt) v = NULL;
	VGPU_AUTOFREE char *there = NULL;
	struct vgpu_sysdir root;
	char here[256];
	int r = vgpu_virt_open(ctx, uri, &v);

	if (r < 0)
		return r;
	vgpu_sysdir_root(fs, &root);
	there = v->api.hostname(v->conn);
	/* a tree that does not say its name (a fixture) or a daemon that will not: no check */
	if (there &&
	    vgpu_sysfs_read_str(&root, here, sizeof(here), "proc/sys/kernel/hostname") == 0 &&
	    *here && !same_host(here, there))
		return vgpu_error(
			ctx, -EXDEV,
			"-c '%s' is libvirt on host '%s', but the VFs, vGPUs and CPUs vgpuctl plans with are read from this host's sysfs ('%s'): only the libvirt part can be remote; run vgpuctl on '%s' (ssh %s vgpuctl ...)",
			uri, there, here, there, there);
	*out = vgpu_steal_ptr(&v);
	return 0;
}

void vgpu_virt_close(struct vgpu_virt *v)
{
	if (!v)
		return;
	if (v->conn)
		v->api.connect_close(v->conn);
	if (v->dl)
		dlclose(v->dl);
	free(v);
}

int vgpu_virt_pinned_cpus(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *self_name,
			  const char *self_uuid, struct vgpu_cpuset *out, struct vgpu_strv *vfs)
{
	virDomainPtr *doms = NULL;
	int n = v->api.list_all(v->conn, &doms, 0);
	int r = 0;

	if (n < 0)
		return vgpu_error(ctx, -EIO, "cannot list domains: %s", v->api.last_error());
	for (int i = 0; i < n; i++) {
		/* the persistent definition: what the domain will pin when it starts */
		char *xml = v->api.get_xml(doms[i], VIR_DOMAIN_XML_INACTIVE);
		VGPU_AUTOPTR(xmldoc) doc = NULL;
		/* a bad definition is a warning: its message must not replace an error in @ctx */
		struct vgpu_ctx parse_ctx;

		vgpu_ctx_init(&parse_ctx, NULL, NULL);
		if (!xml)
			r = vgpu_error(ctx, -EIO, "cannot read a domain's XML: %s",
				       v->api.last_error());
		else if (vgpu_domain_parse(&parse_ctx, xml, strlen(xml), "domain XML from libvirt",
					   &doc) < 0)
			vgpu_warn(ctx, "a domain's pinned CPUs are not known: %s",
				  vgpu_ctx_error(&parse_ctx));
		else if (!vgpu_domain_doc_is(doc, self_name, self_uuid)) {
			VGPU_AUTOSTRV mdevs = { 0 };

			vgpu_domain_doc_pinned_cpus(doc, out);
			if (vfs)
				vgpu_domain_hostdevs(doc, &mdevs, vfs);
		}
		vgpu_ctx_clear(&parse_ctx);
		free(xml);
		v->api.dom_free(doms[i]);
	}
	free(doms);
	return r;
}

/* What one of a domain's definitions (@flags) names, added to @d. */
static int dom_names(struct vgpu_ctx *ctx, struct vgpu_virt *v, virDomainPtr dom, unsigned flags,
		     struct vgpu_odom *d)
{
	char *xml = v->api.get_xml(dom, flags);
	VGPU_AUTOPTR(xmldoc) doc = NULL;
	int r;

	if (!xml)
		return vgpu_error(ctx, -EIO, "cannot read a domain's XML: %s", v->api.last_error());
	r = vgpu_domain_parse(ctx, xml, strlen(xml), "domain XML from libvirt", &doc);
	free(xml);
	if (r < 0)
		return -EIO;
	if (!d->name) {
		struct vgpu_domain_info info;

		vgpu_domain_info_read(doc, NULL, &info);
		d->name = vgpu_xstrdup(info.name ? info.name : "");
		snprintf(d->uuid, sizeof(d->uuid), "%s", info.uuid);
		vgpu_domain_info_clear(&info);
	}
	vgpu_domain_hostdevs(doc, &d->mdevs, &d->vfs);
	return 0;
}

int vgpu_virt_domains(struct vgpu_ctx *ctx, struct vgpu_virt *v, struct vgpu_odom **out, size_t *n)
{
	virDomainPtr *doms = NULL;
	int nd = v->api.list_all(v->conn, &doms, 0), r = 0;
	struct vgpu_odom *d;

	if (nd < 0)
		return vgpu_error(ctx, -EIO, "cannot list domains: %s", v->api.last_error());
	d = vgpu_xcalloc(nd ? (size_t)nd : 1, sizeof(*d));
	for (int i = 0; i < nd; i++) {
		if (r == 0)
			r = dom_names(ctx, v, doms[i], VIR_DOMAIN_XML_INACTIVE, &d[i]);
		if (r == 0 && v->api.is_active(doms[i]) == 1) {
			d[i].active = true;
			r = dom_names(ctx, v, doms[i], 0, &d[i]);
		}
		v->api.dom_free(doms[i]);
	}
	free(doms);
	if (r < 0) {
		vgpu_odoms_free(d, (size_t)nd);
		return r;
	}
	*out = d;
	*n = (size_t)nd;
	return 0;
}

int vgpu_virt_domain_xml(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name, char **xml,
			 bool *active)
{
	virDomainPtr d = v->api.lookup_name(v->conn, name);
	char *x;

	if (!d)
		return vgpu_error(ctx, -ENOENT, "domain '%s': %s", name, v->api.last_error());
	*active = v->api.is_active(d) == 1;
	x = v->api.get_xml(d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
	v->api.dom_free(d);
	if (!x)
		return vgpu_error(ctx, -EIO, "cannot read domain '%s': %s", name,
				  v->api.last_error());
	*xml = x;
	return 0;
}

int vgpu_virt_define(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *xml)
{
	virDomainPtr d = v->api.define_xml(v->conn, xml);

	if (!d)
		return vgpu_error(ctx, -EIO, "libvirt refused the domain: %s", v->api.last_error());
	v->api.dom_free(d);
	return 0;
}

int vgpu_virt_version(struct vgpu_ctx *ctx, struct vgpu_virt *v, unsigned long *version)
{
	if (v->api.lib_version(v->conn, version) < 0)
		return vgpu_error(ctx, -EIO, "cannot ask libvirt its version: %s",
				  v->api.last_error());
	return 0;
}

int vgpu_virt_domain_start(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name,
			   bool dry_run, bool *started)
{
	virDomainPtr d = v->api.lookup_name(v->conn, name);
	int r = 0;

	*started = false;
	if (!d)
		return vgpu_error(ctx, -ENOENT, "domain '%s': %s", name, v->api.last_error());
	if (v->api.is_active(d) != 1) {
		if (!dry_run && v->api.create(d) < 0)
			r = vgpu_error(ctx, -EIO, "cannot start domain '%s': %s", name,
				       v->api.last_error());
		*started = r == 0;
	}
	v->api.dom_free(d);
	return r;
}

int vgpu_virt_versions(struct vgpu_ctx *ctx, struct vgpu_virt *v, unsigned long *libvirt,
		       unsigned long *qemu)
{
	const char *type;
	unsigned long hv = 0;

	if (vgpu_virt_version(ctx, v, libvirt) < 0)
		return -EIO;
	/* virConnectGetVersion() is the hypervisor's: QEMU's only for the QEMU driver */
	type = v->api.conn_type(v->conn);
	*qemu = 0;
	if (type && !strcasecmp(type, "QEMU") && v->api.hv_version(v->conn, &hv) == 0)
		*qemu = hv;
	return 0;
}

int vgpu_virt_domain_migratable(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *domain,
				char **xml, bool *active, unsigned long long *max_downtime_ms)
{
	virDomainPtr d = v->api.lookup_name(v->conn, domain);
	unsigned long long ms = 0;
	char *x;

	if (!d && vgpu_uuid_valid(domain))
		d = v->api.lookup_uuid(v->conn, domain);
	if (!d)
		return vgpu_error(ctx, -ENOENT, "domain '%s': %s", domain, v->api.last_error());
	*active = v->api.is_active(d) == 1;
	/* QEMU answers for a running domain only; the test driver not at all: 0, unknown */
	if (!*active || v->api.max_downtime(d, &ms, 0) < 0)
		ms = 0;
	x = v->api.get_xml(d, VIR_DOMAIN_XML_MIGRATABLE);
	v->api.dom_free(d);
	if (!x)
		return vgpu_error(ctx, -EIO, "cannot read domain '%s': %s", domain,
				  v->api.last_error());
	*xml = x;
	*max_downtime_ms = ms;
	return 0;
}

int vgpu_virt_validate(struct vgpu_ctx *ctx, const char *xml)
{
	static const char *const argv[] = { "virt-xml-validate", "-", "domain", NULL };
	struct vgpu_exec_result res;
	char line[256];
	int r = vgpu_exec_input(ctx, argv, xml, strlen(xml), 60000, &res);

	if (r == -ENOENT)
		return vgpu_error(
			ctx, -ENOENT,
			"virt-xml-validate is not installed: the domain XML is not checked against libvirt's schema");
	if (r < 0)
		return r;
	if (res.status != 0) {
		/* its first line names the first error; the last says only "- fails to validate" */
		const char *t = res.err && *res.err ? res.err : res.out ? res.out : "";

		t += strspn(t, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(t, "\n"), t);
		vgpu_exec_clear(&res);
		return vgpu_error(ctx, -EINVAL, "the domain XML does not validate: %s", line);
	}
	vgpu_exec_clear(&res);
	return 0;
}

/* ---- live migration (vgpuctl migrate, #28) ---- */

/* @sym of the loaded libvirt, or NULL with a message in @ctx. */
static void *virt_sym(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *sym)
{
	void *f = dlsym(v->dl, sym);

	if (!f)
		vgpu_error(ctx, -ENOENT, "libvirt.so.0 lacks %s", sym);
	return f;
}

int vgpu_virt_migrate(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name,
		      const char *dconnuri, const char *migrate_uri, unsigned long long downtime_ms)
{
	int (*set_downtime)(virDomainPtr, unsigned long long, unsigned int);
	int (*migrate)(virDomainPtr, const char *, virTypedParameterPtr, unsigned int,
		       unsigned int);
	virTypedParameter params[1];
	unsigned n = 0;
	virDomainPtr d;
	int r = 0;

	*(void **)&set_downtime = virt_sym(ctx, v, "virDomainMigrateSetMaxDowntime");
	*(void **)&migrate = virt_sym(ctx, v, "virDomainMigrateToURI3");
	if (!set_downtime || !migrate)
		return -ENOENT;
	memset(params, 0, sizeof(params));
	if (migrate_uri) {
		snprintf(params[0].field, sizeof(params[0].field), "%s", VIR_MIGRATE_PARAM_URI);
		params[0].type = VIR_TYPED_PARAM_STRING;
		params[0].value.s = (char *)migrate_uri;
		n = 1;
	}
	d = v->api.lookup_name(v->conn, name);
	if (!d)
		return vgpu_error(ctx, -ENOENT, "domain '%s': %s", name, v->api.last_error());
	if (downtime_ms && set_downtime(d, downtime_ms, 0) < 0)
		r = vgpu_error(ctx, -EIO,
			       "cannot set domain '%s''s maximum downtime to %llu ms: %s", name,
			       downtime_ms, v->api.last_error());
	/* never VIR_MIGRATE_POSTCOPY: NVIDIA and RHEL do not support it for vGPUs */
	if (r == 0 && migrate(d, dconnuri, params, n,
			      VIR_MIGRATE_LIVE | VIR_MIGRATE_PEER2PEER | VIR_MIGRATE_PERSIST_DEST |
				      VIR_MIGRATE_UNDEFINE_SOURCE) < 0)
		r = vgpu_error(ctx, -EIO, "libvirt did not migrate domain '%s' to '%s': %s", name,
			       dconnuri, v->api.last_error());
	v->api.dom_free(d);
	return r;
}

int vgpu_virt_local_version(struct vgpu_ctx *ctx, unsigned long *version)
{
	/* never unmapped: virGetVersion() initializes libvirt (thread keys with destructors) */
	void *dl = dlopen("libvirt.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	int (*get)(unsigned long *, const char *, unsigned long *);
	void *f;
	int r = 0;

	if (!dl)
		return vgpu_error(ctx, -ENOENT, "cannot load libvirt (libvirt.so.0): %s",
				  dlerror());
	f = dlsym(dl, "virGetVersion");
	memcpy(&get, &f, sizeof(get));
	if (!f)
		r = vgpu_error(ctx, -ENOENT, "libvirt.so.0 lacks virGetVersion");
	else if (get(version, NULL, NULL) < 0)
		r = vgpu_error(ctx, -EIO, "libvirt does not say its version");
	dlclose(dl);
	return r;
}
