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

struct vgpu_virt;

/**
 * vgpu_virt_open() - load libvirt and connect to @uri.
 * Return: 0 or -errno with a message in @ctx; close with vgpu_virt_close().
 */
int vgpu_virt_open(struct vgpu_ctx *ctx, const char *uri, struct vgpu_virt **out);
/** vgpu_virt_close() - disconnect and unload libvirt (NULL is fine). */
void vgpu_virt_close(struct vgpu_virt *v);
VGPU_DEFINE_AUTOPTR(virt, struct vgpu_virt, vgpu_virt_close)
/**
 * vgpu_virt_pinned_cpus() - host CPUs pinned by the connection's other
 * domains (vcpupin, emulatorpin, iothreadpin, <vcpu cpuset>), active or not,
 * added to @out.  A domain named @self_name or with UUID @self_uuid is
 * skipped (re-planning it).  A definition that cannot be parsed is warned about.
 * Return: 0 or -EIO with a message in @ctx.
 */
int vgpu_virt_pinned_cpus(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *self_name,
			  const char *self_uuid, struct vgpu_cpuset *out);

/**
 * vgpu_virt_domain_xml() - the persistent definition of domain @name (with
 * secrets, for redefining it) and whether it runs.
 * Return: 0 or -errno with a message in @ctx; caller frees *xml.
 */
int vgpu_virt_domain_xml(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name, char **xml,
			 bool *active);
/** vgpu_virt_define() - define (or redefine) a domain. Return: 0 or -EIO with a message. */
int vgpu_virt_define(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *xml);
/** vgpu_virt_version() - the daemon's libvirt version (major * 1000000 + minor * 1000 + micro). */
/**
 * vgpu_virt_domain_start() - start domain @name unless it runs; *@started
 * says whether it was not running (with @dry_run: would be started).
 */
int vgpu_virt_domain_start(struct vgpu_ctx *ctx, struct vgpu_virt *v, const char *name,
			   bool dry_run, bool *started);
int vgpu_virt_version(struct vgpu_ctx *ctx, struct vgpu_virt *v, unsigned long *version);

#endif
