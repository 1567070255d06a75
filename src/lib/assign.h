/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * assign.h - the use cases on one domain: plan its vGPUs and CPUs, assign
 * vGPUs to it, release them.  The domain is a parsed definition; where it
 * came from and where the new one goes is the caller's (struct
 * vgpu_domain_target): a libvirt connection, a file, or back to the caller.
 *
 * assign and release are each one transaction under the host lock: claim
 * (the owner record, written before any sysfs write), create or destroy,
 * put the new definition; a failure undoes every earlier step.  Defined in
 * assign.c (read, plan, assign) and release.c (release, release.h).
 */
#ifndef VGPU_ASSIGN_H
#define VGPU_ASSIGN_H

#include <stdbool.h>

#include "ctx.h"
#include "domxml.h"
#include "model.h"
#include "plan.h"
#include "release.h"
#include "sysfs.h"

/* libvirt accepts an unmanaged VF on a variant driver (nvidia) from 10.0.0 */
#define VGPU_LIBVIRT_VENDOR_VFIO 10000000UL

struct vgpu_virt;

/**
 * vgpu_domain_read() - vgpu_domain_info_read() for the host below @fs: the
 * guest is checked against its architecture, when it says.  The one reading
 * of a domain that planning, assign and release decide on.
 * @fs: the host root
 * @doc: the domain
 * @out: overwritten; clear it with vgpu_domain_info_clear()
 */
void vgpu_domain_read(struct vgpu_sysfs *fs, struct _xmlDoc *doc, struct vgpu_domain_info *out);

/**
 * vgpu_domain_plan() - plan @req for a domain against everything taken: the
 * host as vgpu_host_read() sees it (owner records count), and with @virt
 * the CPUs the connection's other domains pin.  The plan carries every
 * choice, UUIDs included.
 * @ctx: errors and warnings (types outside NVIDIA's grammar are warned about)
 * @fs: the host root
 * @virt: a libvirt connection whose domains' pins are taken, or NULL
 * @dom: the domain being planned (vgpu_domain_read()), or NULL (a plan
 *       without a definition); with @virt, the domain of its name or UUID
 *       is the one re-planned and its own pins do not count
 * @existing: @dom is an existing domain: keep its UUID and its vGPUs' mdev
 *            UUIDs where @req gives none (a template's are not kept)
 * @req: the request; its memory_kib and hugepages are set here from @o (the
 *       memory: @o's, else @dom's <memory>), and vcpus from an @existing
 *       @dom's <vcpu> when 0
 * @o: the definition's options (name, memory, hugepages, emulator CPUs)
 * @model: the host as read, on success (NULL: not wanted)
 * @out: the plan, on success
 * Return: 0 or -errno with a message in @ctx; caller frees *@model and *@out.
 */
int vgpu_domain_plan(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct vgpu_virt *virt,
		     const struct vgpu_domain_info *dom, bool existing, struct vgpu_request *req,
		     const struct vgpu_domain_opts *o, struct vgpu_model **model,
		     struct vgpu_plan **out);

/**
 * vgpu_assign() - give the domain @doc the vGPUs @req asks for, pinned as
 * @o says: plan, claim each vGPU with its owner record, create it (unless
 * @o->per_start: the hook creates it at each start), and put the new
 * definition where @t says; a failure undoes every step done.
 * @ctx: errors and warnings
 * @fs: the host root; its lock is taken for the change and released after
 * @doc: the domain, edited in place
 * @dom: @doc as vgpu_domain_read() read it before this call
 * @req: what to plan; vcpus 0 takes the domain's <vcpu>
 * @o: the definition's options
 * @t: where the new definition goes
 * @xml: the new definition when @t hands it back (dry run, no output), else NULL
 * Return: 0 or -errno with a message in @ctx (-EEXIST: the domain has
 * vGPUs from vgpuctl already; -ENOTSUP: libvirt too old for vendor VFIO).
 */
int vgpu_assign(struct vgpu_ctx *ctx, struct vgpu_sysfs *fs, struct _xmlDoc *doc,
		const struct vgpu_domain_info *dom, struct vgpu_request *req,
		const struct vgpu_domain_opts *o, const struct vgpu_domain_target *t, char **xml);

#endif
