/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virt.h - a thin libvirt wrapper.  libvirt is loaded with dlopen() on first
 * use: linking it pulls ~55 shared libraries and ~12 ms into every start of
 * every command, while only those given -c URI talk to libvirt (and the
 * hook must never do so).
 */
#ifndef VGPU_VIRT_H
#define VGPU_VIRT_H

#include <stdbool.h>

#include "cleanup.h"
#include "cpuset.h"
#include "ctx.h"
#include "orphans.h"
#include "util.h"

struct vgpu_virt;

/**
 * vgpu_virt_open() - load libvirt and connect to @uri.
 * @ctx: where errors go
 * @uri: the connection URI (-c URI), as virConnectOpen() takes it
 * @out: the connection, on success
 * Return: 0 or -errno with a message in @ctx (-ENOENT: libvirt.so.0 cannot be
 * loaded or lacks a symbol; -EIO: the connection failed); close with
 * vgpu_virt_close().
 */
int vgpu_virt_open(struct vgpu_ctx *ctx, const char *uri, struct vgpu_virt **out);
struct vgpu_sysfs;
/**
 * vgpu_virt_open_host() - vgpu_virt_open() for a command that also works on
 * the host @fs reads: sysfs work is local, so a connection to libvirt on
 * another host (qemu+ssh://, qemu+tls://) is refused, naming both hosts.
 * The host names compared are libvirt's (virConnectGetHostname()) and
 * @fs's proc/sys/kernel/hostname; a tree without that file (a fixture) is
 * not checked.
 * @ctx: where errors go
 * @uri: the connection URI
 * @fs: the host root vgpuctl reads
 * @out: the connection, on success
 * Return: 0 or -errno with a message in @ctx (-EXDEV: another host).
 */
int vgpu_virt_open_host(struct vgpu_ctx *ctx, const char *uri, struct vgpu_sysfs *fs,
			struct vgpu_virt **out);
/**
 * vgpu_virt_close() - disconnect and unload libvirt (NULL is fine).
 * @v: from vgpu_virt_open(), or NULL
 */
void vgpu_virt_close(struct vgpu_virt *v);
VGPU_DEFINE_AUTOPTR(virt, struct vgpu_virt, vgpu_virt_close)
/**
 * vgpu_virt_pinned_cpus() - host CPUs pinned by the connection's other
 * domains (vcpupin, emulatorpin, iothreadpin, <vcpu cpuset>), active or not,
 * added to @out.  A domain named @self_name or with UUID @self_uuid is
 * skipped (re-planning it).  A definition that cannot be parsed is warned about.
 * @ctx: errors, and warnings about definitions that cannot be parsed
 * @v: the connection
 * @self_name: the domain being planned, skipped by name (NULL: none)
 * @self_uuid: the domain being planned, skipped by UUID (NULL: none)
 * @out: the CPUs are added to it (it is not cleared); read from each domain's
 *       persistent definition
 * @vfs: the PCI functions the other domains' hostdevs name are appended
 *       (a VF a defined domain names is taken, running or not), or NULL
 * Return: 0 or -EIO with a message in @ctx.
 */
int vgpu_virt_pinned_cpus(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *self_name,
			  const char *self_uuid, struct vgpu_cpuset *out, struct vgpu_strv *vfs);

/**
 * vgpu_virt_domains() - every domain of the connection, defined or running,
 * with the mdevs and PCI functions its definitions (persistent and live)
 * name, whoever added them.
 * @ctx: where errors go
 * @v: the connection
 * @out: the domains, on success; free with vgpu_odoms_free()
 * @n: how many
 * Return: 0 or -EIO with a message in @ctx (a domain whose XML cannot be
 * read or parsed is an error: what it names is not known).
 */
int vgpu_virt_domains(struct vgpu_ctx *ctx, struct vgpu_virt *v, struct vgpu_odom **out, size_t *n);
/**
 * vgpu_virt_domain_xml() - the persistent definition of domain @name (with
 * secrets, for redefining it) and whether it runs.
 * @ctx: where errors go
 * @v: the connection
 * @name: the domain's name
 * @xml: the definition, on success
 * @active: whether the domain runs now
 * Return: 0 or -errno with a message in @ctx (-ENOENT: no such domain; -EIO:
 * its XML cannot be read); caller frees *xml.
 */
int vgpu_virt_domain_xml(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name, char **xml,
			 bool *active);
/**
 * vgpu_virt_define() - define (or redefine) a domain.
 * @ctx: where errors go
 * @v: the connection
 * @xml: the domain's full definition, as virDomainDefineXML() takes it
 * Return: 0 or -EIO with libvirt's message in @ctx.
 */
int vgpu_virt_define(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *xml);
/**
 * vgpu_virt_domain_start() - start domain @name unless it runs; *@started
 * says whether it was not running (with @dry_run: would be started).
 * @ctx: where errors go
 * @v: the connection
 * @name: the domain's name
 * @dry_run: only say whether it would be started; start nothing
 * @started: true when it was started (or would be); false first in every case
 * Return: 0 or -errno with a message in @ctx (-ENOENT: no such domain; -EIO:
 * libvirt could not start it).
 */
int vgpu_virt_domain_start(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name,
			   bool dry_run, bool *started);
/**
 * vgpu_virt_version() - the daemon's libvirt version (major * 1000000 + minor * 1000 + micro).
 * @ctx: where errors go
 * @v: the connection
 * @version: the version, from virConnectGetLibVersion(), on success
 * Return: 0 or -EIO with libvirt's message in @ctx.
 */
int vgpu_virt_version(struct vgpu_ctx *ctx, struct vgpu_virt *v, unsigned long *version);
/**
 * vgpu_virt_versions() - the versions a live migration needs: libvirt's and,
 * on the QEMU driver, QEMU's (virConnectGetVersion() is the hypervisor's).
 * @ctx: where errors go
 * @v: the connection
 * @libvirt: virConnectGetLibVersion(), on success
 * @qemu: QEMU's version, 0 on another driver (the test driver's is its own)
 * Return: 0 or -EIO with libvirt's message in @ctx.
 */
int vgpu_virt_versions(struct vgpu_ctx *ctx, struct vgpu_virt *v, unsigned long *libvirt,
		       unsigned long *qemu);
/**
 * vgpu_virt_domain_migratable() - what a live migration sends of @domain:
 * its XML as virDomainGetXMLDesc(VIR_DOMAIN_XML_MIGRATABLE) gives it, and
 * its current max downtime (virDomainMigrateGetMaxDowntime()).
 * @ctx: where errors go
 * @v: the connection
 * @domain: the domain's name or UUID
 * @xml: the migratable XML, on success; the caller frees it
 * @active: whether the domain runs
 * @max_downtime_ms: the max downtime in ms; 0 when not known (a domain that
 *                   does not run, a driver that does not say)
 * Return: 0 or -errno with a message in @ctx (-ENOENT: no such domain; -EIO:
 * its XML cannot be read).
 */
int vgpu_virt_domain_migratable(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *domain,
				char **xml, bool *active, unsigned long long *max_downtime_ms);
/**
 * vgpu_virt_validate() - check a domain XML against libvirt's schema with
 * virt-xml-validate (run as "virt-xml-validate - domain", the XML on stdin).
 * @ctx: where errors go
 * @xml: the domain's text
 * Return: 0 when it validates, -ENOENT when virt-xml-validate is not installed
 * (with a message), -EINVAL with its last line of output when it does not
 * validate, or another -errno of running it.
 */
int vgpu_virt_validate(struct vgpu_ctx *ctx, const char *xml);

/* ---- live migration (vgpuctl migrate, #28): its symbols are looked up when called ---- */

/**
 * vgpu_virt_migrate() - migrate a running domain live, peer to peer
 * (VIR_MIGRATE_LIVE | PEER2PEER | PERSIST_DEST | UNDEFINE_SOURCE; never
 * post-copy), after setting its maximum downtime.
 * @ctx: where errors go
 * @v: the source's connection
 * @name: the domain
 * @dconnuri: the target's libvirt URI, as the source's libvirt daemon reaches it
 * @migrate_uri: where QEMU's stream goes ("tcp://HOST:PORT", "unix:///PATH"),
 *               or NULL for libvirt's choice
 * @downtime_ms: the maximum downtime to set first; 0 leaves the domain's
 * Return: 0 once the domain runs on the target, or -ENOENT (no such domain) /
 * -EIO (libvirt's message; the domain still runs here) with a message in @ctx.
 */
int vgpu_virt_migrate(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name,
		      const char *dconnuri, const char *migrate_uri,
		      unsigned long long downtime_ms);
/**
 * vgpu_virt_local_version() - the version of the libvirt library on this
 * host, without a connection (virGetVersion(); the hook may not connect):
 * major * 1000000 + minor * 1000 + micro.
 * @ctx: where errors go
 * @version: the version, on success
 * Return: 0, -ENOENT (no libvirt.so.0) or -EIO, with a message in @ctx.
 */
int vgpu_virt_local_version(struct vgpu_ctx *ctx, unsigned long *version);

#endif
