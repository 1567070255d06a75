// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stand-in libvirt.so.0 for test-failpaths: the symbols virt.c
 * loads, failing where $FAKE_LIBVIRT_FAIL says, so that every failure path
 * of vgpu_virt_open() and vgpu_virt_pinned_cpus() can be forced without a
 * libvirt daemon or driver.  test-failpaths finds it before the real one
 * through its RUNPATH.
 *
 * FAKE_LIBVIRT_FAIL: unset or "" (everything works: two domains), "event"
 * (no event loop), "connect", "list", "xml" (no domain's XML can be read),
 * "xml-then-garbage" (the first domain's XML cannot be read, the second is
 * not XML).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

/* test-failpaths looks this up to know it talks to the stand-in */
int fake_libvirt_stand_in = 1;

static char conn_token, dom_tokens[2];
static char last_error[128] = "no error";

static bool failing(const char *what)
{
	const char *mode = getenv("FAKE_LIBVIRT_FAIL");

	return mode && strcmp(mode, what) == 0;
}

static void set_error(const char *what)
{
	strcpy(last_error, "fake libvirt: ");
	strncat(last_error, what, sizeof(last_error) - strlen(last_error) - 1);
}

int virEventRegisterDefaultImpl(void)
{
	if (failing("event")) {
		set_error("no event loop");
		return -1;
	}
	return 0;
}

void virSetErrorFunc(void *data, virErrorFunc fn)
{
	(void)data;
	(void)fn;
}

const char *virGetLastErrorMessage(void)
{
	return last_error;
}

virConnectPtr virConnectOpen(const char *uri)
{
	(void)uri;
	if (failing("connect")) {
		set_error("no such driver");
		return NULL;
	}
	return (virConnectPtr)&conn_token;
}

int virConnectClose(virConnectPtr conn)
{
	(void)conn;
	return 0;
}

int virConnectListAllDomains(virConnectPtr conn, virDomainPtr **doms, unsigned int flags)
{
	virDomainPtr *list;

	(void)conn;
	(void)flags;
	if (failing("list")) {
		set_error("connection lost");
		return -1;
	}
	list = malloc(2 * sizeof(*list));
	if (!list)
		return -1;
	list[0] = (virDomainPtr)&dom_tokens[0];
	list[1] = (virDomainPtr)&dom_tokens[1];
	*doms = list;
	return 2;
}

char *virDomainGetXMLDesc(virDomainPtr dom, unsigned int flags)
{
	bool first = dom == (virDomainPtr)&dom_tokens[0];

	(void)flags;
	if (failing("xml") || (failing("xml-then-garbage") && first)) {
		set_error("domain vanished");
		return NULL;
	}
	if (failing("xml-then-garbage"))
		return strdup("this is not <xml");
	/* the CPUs tell the test it talks to this library, not the real one */
	return strdup(first ? "<domain><name>fake1</name><vcpu cpuset='3'>1</vcpu></domain>" :
			      "<domain><name>fake2</name><vcpu cpuset='5'>1</vcpu></domain>");
}

int virDomainFree(virDomainPtr dom)
{
	(void)dom;
	return 0;
}

/* assign / release (virt.c loads them with the others): look-up, define, state, version */
virDomainPtr virDomainLookupByName(virConnectPtr conn, const char *name)
{
	(void)conn;
	if (failing("lookup") || strcmp(name, "fake1") != 0) {
		set_error("domain not found");
		return NULL;
	}
	return (virDomainPtr)&dom_tokens[0];
}

virDomainPtr virDomainDefineXML(virConnectPtr conn, const char *xml)
{
	(void)conn;
	(void)xml;
	if (failing("define")) {
		set_error("define refused");
		return NULL;
	}
	return (virDomainPtr)&dom_tokens[0];
}

int virDomainIsActive(virDomainPtr dom)
{
	(void)dom;
	return 0;
}

int virDomainCreate(virDomainPtr dom)
{
	(void)dom;
	return -1;
}

int virConnectGetLibVersion(virConnectPtr conn, unsigned long *version)
{
	(void)conn;
	if (failing("version")) {
		set_error("no version");
		return -1;
	}
	*version = 9000000;
	return 0;
}

char *virConnectGetHostname(virConnectPtr conn)
{
	(void)conn;
	if (failing("hostname")) {
		set_error("no hostname");
		return NULL;
	}
	return strdup("fakehost");
}

/* migrate-check's calls: no domain by UUID, the test driver's type, no max downtime */
virDomainPtr virDomainLookupByUUIDString(virConnectPtr conn, const char *uuid)
{
	(void)conn;
	(void)uuid;
	set_error("no such domain");
	return NULL;
}

const char *virConnectGetType(virConnectPtr conn)
{
	(void)conn;
	return "Test";
}

int virConnectGetVersion(virConnectPtr conn, unsigned long *version)
{
	(void)conn;
	*version = 2;
	return 0;
}

int virDomainMigrateGetMaxDowntime(virDomainPtr dom, unsigned long long *downtime,
				   unsigned int flags)
{
	(void)dom;
	(void)flags;
	*downtime = 0;
	set_error("not supported");
	return -1;
}
