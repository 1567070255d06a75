// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Every golden domain XML defines on libvirt's in-process test driver
 * (test:///default) with RNG validation, and reads back with its vGPU
 * hostdev, vCPU pinning and our metadata intact.
 *   test-define SRCDIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "domxml.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void silent(void *d, virErrorPtr e)
{
	(void)d;
	(void)e;
}

static int check_one(virConnectPtr conn, const char *path)
{
	char *xml = slurp(path), *back = NULL, *md = NULL;
	virDomainPtr dom = NULL;
	int fail = 0;

	if (!xml) {
		printf("FAIL: cannot read %s\n", path);
		return 1;
	}
	dom = virDomainDefineXMLFlags(conn, xml, VIR_DOMAIN_DEFINE_VALIDATE);
	if (!dom) {
		printf("FAIL: %s does not define: %s\n", path, virGetLastErrorMessage());
		free(xml);
		return 1;
	}
	back = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
	md = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, VGPU_XML_NS,
				  VIR_DOMAIN_AFFECT_CONFIG);
	if (!back || !strstr(back, "<hostdev mode='subsystem'")) {
		printf("FAIL: %s: hostdev lost\n", path);
		fail = 1;
	}
	if (!back || !strstr(back, "<vcpupin vcpu='0' cpuset=")) {
		printf("FAIL: %s: vcpupin lost\n", path);
		fail = 1;
	}
	if (!back || !strstr(back, "<memory mode='strict' nodeset=")) {
		printf("FAIL: %s: numatune lost\n", path);
		fail = 1;
	}
	if (!md || !strstr(md, "<vgpu ") || !strstr(md, "type-id=")) {
		printf("FAIL: %s: metadata lost: %s\n", path, md ? md : virGetLastErrorMessage());
		fail = 1;
	}
	if (!fail)
		printf("ok: %s\n", path);
	virDomainUndefine(dom);
	virDomainFree(dom);
	free(back);
	free(md);
	free(xml);
	return fail;
}

int main(int argc, char **argv)
{
	char dir[4096];
	struct dirent **ents;
	virConnectPtr conn;
	int n, fail = 0, count = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: test-define SRCDIR\n");
		return 2;
	}
	virSetErrorFunc(NULL, silent);
	conn = virConnectOpen("test:///default");
	if (!conn) {
		printf("FAIL: test:///default: %s\n", virGetLastErrorMessage());
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/tests/data/expected/xml", argv[1]);
	n = scandir(dir, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);
		char path[8192];

		if (l > 4 && strcmp(ents[i]->d_name + l - 4, ".xml") == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			/* an empty golden is a case that failed on purpose */
			char *x = slurp(path);

			if (x && *x) {
				fail |= check_one(conn, path);
				count++;
			}
			free(x);
		}
		free(ents[i]);
	}
	free(ents);
	virConnectClose(conn);
	if (count < 5) {
		printf("FAIL: only %d golden domains found in %s\n", count, dir);
		return 1;
	}
	return fail;
}
