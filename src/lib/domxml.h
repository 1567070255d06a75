/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domxml.h - libvirt domain XML on libxml2's tree API (no I/O): the one
 * hardened parser, the builder that applies a plan, and the reader of our
 * metadata element that the hook uses.  Defined in domxml.c (parse, format,
 * read), domxml-build.c (vgpu_domain_build()) and domxml-strip.c
 * (vgpu_domain_strip()).
 */
#ifndef VGPU_DOMXML_H
#define VGPU_DOMXML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "cpuset.h"
#include "ctx.h"
#include "params.h"
#include "plan.h"
#include "util.h"

#define VGPU_XML_NS "urn:vgpuctl:domain:1"
#define VGPU_XML_NS_PREFIX "vgpuctl"
#define VGPU_XML_MAX_SIZE (4u << 20)

struct _xmlDoc;
struct vgpu_domain_info;
/**
 * vgpu_xml_doc_free() - free a parsed domain.
 * @doc: from vgpu_domain_parse(), or NULL
 */
void vgpu_xml_doc_free(struct _xmlDoc *doc);
VGPU_DEFINE_AUTOPTR(xmldoc, struct _xmlDoc, vgpu_xml_doc_free)

struct vgpu_domain_opts {
	const char *name; /* NULL: keep the template's / --from's */
	uint64_t memory_kib; /* 0: keep existing */
	const char *virt_type; /* "kvm", "qemu" or NULL to keep */
	bool hugepages;
	const struct vgpu_cpuset *emulator_cpus; /* NULL: the VM's own CPUs */
	bool no_pin; /* leave <vcpu>, <cputune>, <numatune> and <cpu> alone */
	bool per_start; /* metadata: the hook creates at each start, frees at each stop */
	bool existing; /* an existing domain: keep what is replaced, release restores it */
	/* the domain as vgpu_domain_info_read() read it; NULL: the builder reads what it needs */
	const struct vgpu_domain_info *read;
};

/**
 * vgpu_domain_parse() - parse untrusted domain XML: no network, no entity
 * expansion, no DTD, at most VGPU_XML_MAX_SIZE bytes, root <domain> in no
 * namespace.  libxml2 prints nothing; its first error is in the message.
 * @ctx: where errors go
 * @buf: the XML text (need not be NUL-terminated)
 * @len: its length in bytes
 * @what: names the input in messages (a path)
 * @out: the parsed document, on success
 * Return: 0 or -EINVAL / -EFBIG with a message in @ctx; free *@out with
 * vgpu_xml_doc_free().
 */
int vgpu_domain_parse(struct vgpu_ctx *ctx, const char *buf, size_t len, const char *what,
		      struct _xmlDoc **out);
/**
 * vgpu_domain_build() - render @plan into @doc (a libvirt domain): vGPU
 * hostdevs, vCPU pinning, strict memory on the GPU's node, guest CPU
 * topology, the plan's UUIDs, and metadata for the hook.  Everything else
 * in @doc is kept; vGPUs we added before are replaced.  Chooses nothing:
 * every identity comes from the plan (vgpu_plan_set_ids()).
 * @ctx: where errors go
 * @doc: the domain, edited in place
 * @plan: a plan whose UUIDs are set
 * @o: name, memory, virt type, hugepages, emulator CPUs, no_pin, per_start
 * Return: 0 or -errno with a message in @ctx (@doc may then be half-edited):
 * -EINVAL (no or a bad name, no usable memory, a plan without UUIDs,
 * hugepages for a part of a GiB), -EEXIST (a hostdev we did not add for the
 * same mdev or VF).
 */
int vgpu_domain_build(struct vgpu_ctx *ctx, struct _xmlDoc *doc, const struct vgpu_plan *plan,
		      const struct vgpu_domain_opts *o);
struct vgpu_meta;
struct vgpu_meta_vgpu;
/* What vgpu_domain_retarget() may change besides the hostdevs' sources. */
struct vgpu_retarget_opts {
	bool iface_change; /* a vGPU may change its interface (mdev <-> VF: libvirt >= 11.0) */
	int node; /* the target GPUs' NUMA node; -1: the pinning stays as it is */
	const struct vgpu_cpuset *cpus; /* the domain's host CPUs there (emulatorpin) */
	const unsigned *pins; /* pins[i]: vCPU i's host CPU; NULL: @cpus' CPUs in order */
	size_t n_pins;
};
/**
 * vgpu_domain_retarget() - point the domain's vGPU hostdevs and our
 * metadata at other host devices (a migration: the destination's).  Only
 * each hostdev's <source><address> changes (the mdev UUID, or the VF's
 * domain, bus, slot and function) and our metadata's interface, type-id,
 * gpu, vf and mdev-uuid of that vGPU (so an mdev that keeps its UUID on
 * another parent changes our metadata only); what the guest sees (the
 * hostdev's own <address>, <alias>, <rom>, display, type) is left as it
 * is.  With @o->iface_change a vGPU may change its interface: its hostdev
 * takes the other form (type='mdev' model='vfio-pci' display='off', or
 * type='pci' managed='no'), its other children kept.  When we pinned the
 * domain (@from->pinned) and @o->node is set, the host side of the
 * pinning follows, as vgpu_domain_build() pins: each <vcpupin> to its
 * vCPU's CPU there, <emulatorpin> to @o->cpus, the nodesets of <numatune>'s
 * <memory> and <memnode> and our metadata's node to @o->node; <vcpu>, the
 * guest topology and cells stay.  A vGPU without its hostdev (named in our
 * metadata only) changes our metadata only.
 * @ctx: where errors go
 * @doc: the domain
 * @from: our metadata as read from @doc (vgpu_domain_read_meta())
 * @to: for each vGPU of @from, in its order, the device it gets
 * @n: how many @to holds (@from's n_vgpus)
 * @o: the interface change and the pinning there; NULL: neither
 * Return: how many vGPUs changed, plus one when the pinning did (0: @doc
 * is as it was), or, with @doc left as it was and a message in @ctx:
 * -EINVAL (another interface not allowed, @n not @from's count, a vCPU
 * without a CPU there), -ENOTSUP (an mdev with a display or ramfb would
 * become a VF).
 */
int vgpu_domain_retarget(struct vgpu_ctx *ctx, struct _xmlDoc *doc, const struct vgpu_meta *from,
			 const struct vgpu_choice *to, size_t n,
			 const struct vgpu_retarget_opts *o);
/**
 * vgpu_domain_hostdev_display() - does the hostdev of our metadata's vGPU
 * @v show a display (display='on' or ramfb='on'), which only an mdev can?
 * @doc: the domain
 * @v: a vGPU of its metadata
 * Return: true when it does; false also when @doc has no hostdev for @v.
 */
bool vgpu_domain_hostdev_display(struct _xmlDoc *doc, const struct vgpu_meta_vgpu *v);
/**
 * vgpu_domain_format() - serialise without XML declaration, 2-space indent.
 * @ctx: where errors go
 * @doc: the domain
 * @out: the text, on success; caller frees
 * Return: 0 or -EINVAL (a document without a root element) with a message in @ctx.
 */
int vgpu_domain_format(struct vgpu_ctx *ctx, struct _xmlDoc *doc, char **out);
/**
 * vgpu_domain_memory_kib() - the domain's <memory> in KiB (libvirt units,
 * rounded up).
 * @ctx: where errors go
 * @doc: the domain
 * @out: the size, on success
 * Return: 0, -ENOENT (none) or -EINVAL (unusable) with a message in @ctx.
 */
int vgpu_domain_memory_kib(struct vgpu_ctx *ctx, struct _xmlDoc *doc, uint64_t *out);
/**
 * vgpu_domain_field() - the text of <domain>'s child @name (not in a
 * namespace), blanks stripped.
 * @doc: the domain
 * @name: the element ("name", "uuid", "vcpu")
 * Return: a copy the caller frees, or NULL when there is no such element.
 */
char *vgpu_domain_field(struct _xmlDoc *doc, const char *name);

/* Our metadata element, as the hook reads it. */
struct vgpu_meta_vgpu {
	char *profile;
	unsigned type_id;
	enum vgpu_iface iface;
	enum vgpu_backing backing;
	char *gi_profile; /* NULL when none */
	char gpu[VGPU_BDF_LEN];
	char vf[VGPU_BDF_LEN];
	char mdev_uuid[VGPU_UUID_LEN]; /* "" for vendor VFIO */
};
struct vgpu_meta {
	char owner[VGPU_UUID_LEN];
	int node;
	bool pinned; /* we wrote the vCPU pins and the memory binding */
	bool per_start;
	struct vgpu_meta_vgpu vgpus[VGPU_MAX_VGPUS];
	size_t n_vgpus;
	bool has_params; /* <vgpuctl:params> is there (empty: the file is cleared) */
	struct vgpu_params params; /* the set the hook writes to each vGPU's vgpu_params */
};
/**
 * vgpu_domain_check_guest() - refuse a guest vGPUs cannot go to: another
 * architecture than x86_64 and aarch64, a machine type without a PCI bus,
 * or an architecture other than the host's.
 * @ctx: where errors go
 * @doc: the domain
 * @host_arch: the host's architecture (vgpu_host_arch()), NULL when unknown
 * Return: 0 or -ENOTSUP with a message in @ctx.
 */
int vgpu_domain_check_guest(struct vgpu_ctx *ctx, struct _xmlDoc *doc, const char *host_arch);
/**
 * vgpu_domain_read_meta() - our metadata from a domain, every value checked.
 * @ctx: where errors go
 * @doc: the domain
 * @out: the metadata, on success
 * Return: 0, -ENOENT (the domain has none) or -EINVAL (damaged, naming the
 * attribute), with a message in @ctx; clear *@out with vgpu_meta_clear().
 */
int vgpu_domain_read_meta(struct vgpu_ctx *ctx, struct _xmlDoc *doc, struct vgpu_meta *out);
/**
 * vgpu_domain_read_params() - the vgpu_params set of our metadata
 * (<vgpuctl:params> in <vgpuctl:vgpus>, one <vgpuctl:param name= value=/>
 * per parameter), every name and value checked.
 * @ctx: where errors go
 * @doc: the domain
 * @out: the set, on success (empty when there is none)
 * @present: whether the domain has the element (an empty one clears the file)
 * Return: 0 (also without our metadata), or -EINVAL (a damaged parameter,
 * named) with a message in @ctx.
 */
int vgpu_domain_read_params(struct vgpu_ctx *ctx, struct _xmlDoc *doc, struct vgpu_params *out,
			    bool *present);
/**
 * vgpu_domain_set_params() - keep @set in our metadata as <vgpuctl:params>,
 * replacing the one there: it moves with the definition, and assign run
 * again keeps it (vgpu_domain_build()).
 * @ctx: where errors go
 * @doc: the domain, edited in place
 * @set: the set (empty: the file is cleared at the next start)
 * Return: 0 or -ENOENT (the domain has no vgpuctl metadata: no vGPU of
 * ours to write it to) with a message in @ctx.
 */
int vgpu_domain_set_params(struct vgpu_ctx *ctx, struct _xmlDoc *doc,
			   const struct vgpu_params *set);
/**
 * vgpu_meta_clear() - free what vgpu_domain_read_meta() filled in.
 * @m: the metadata (zeroed: fine)
 */
void vgpu_meta_clear(struct vgpu_meta *m);

/*
 * One domain as the use cases need it, read once (vgpu_domain_info_read()):
 * who it is, what it asks of the host, whether a vGPU can go to it, and the
 * vGPUs our metadata gives it.  The definition itself stays in the document,
 * which the builder edits.
 */
struct vgpu_domain_info {
	char *name; /* <name>, blanks stripped; NULL when none */
	char *uuid_text; /* <uuid> as written, blanks stripped; NULL when none */
	char uuid[VGPU_UUID_LEN]; /* uuid_text normalized; "" when none or not a UUID */
	unsigned vcpus; /* <vcpu>; 0 when none (libvirt's default is 1) or unusable */
	bool vcpus_bad; /* there is a <vcpu>, but not a count of 1 to 4096 */
	uint64_t memory_kib; /* <memory> (vgpu_domain_memory_kib()); 0 when none or unusable */
	int guest; /* vgpu_domain_check_guest(): 0 or -ENOTSUP */
	char *guest_error; /* its message when it refuses; NULL otherwise */
	int meta_r; /* vgpu_domain_read_meta(): 0, -ENOENT or -EINVAL */
	char *meta_error; /* its message when meta_r is -EINVAL; NULL otherwise */
	struct vgpu_meta meta; /* our metadata when meta_r is 0, else zeroed */
	char prev_mdevs[VGPU_MAX_VGPUS][VGPU_UUID_LEN]; /* vgpu_domain_prev_mdevs() */
	size_t n_prev_mdevs;
};

/**
 * vgpu_domain_info_read() - read everything the use cases need of @doc at
 * once: name, UUID, vCPUs, memory, the guest check and our metadata.
 * Nothing is refused here: each check's result is kept for the caller to
 * act on in its own order.
 * @doc: the domain
 * @host_arch: the host's architecture for the guest check, NULL when unknown
 * @out: overwritten; clear it with vgpu_domain_info_clear()
 */
void vgpu_domain_info_read(struct _xmlDoc *doc, const char *host_arch,
			   struct vgpu_domain_info *out);
/**
 * vgpu_domain_info_clear() - free what vgpu_domain_info_read() filled in.
 * @info: the domain's information (zeroed: fine)
 */
void vgpu_domain_info_clear(struct vgpu_domain_info *info);

/**
 * vgpu_domain_prev_mdevs() - the mdev UUIDs our metadata in @doc gives its
 * vGPUs, in order, damaged entries skipped (a VM keeps its mdev identity
 * when its vGPUs are made again).
 * @doc: a parsed domain
 * @out: room for VGPU_MAX_VGPUS UUIDs
 * Return: how many were found.
 */
size_t vgpu_domain_prev_mdevs(struct _xmlDoc *doc, char (*out)[VGPU_UUID_LEN]);
/**
 * vgpu_domain_strip() - undo vgpu_domain_build() for the vGPUs on @vf:
 * drop their hostdevs and metadata entries; once none is left, drop our
 * metadata element and the vCPU pins and memory binding we wrote.
 * @doc: the domain, edited in place
 * @vf: the parent whose vGPU goes, or NULL for all
 * Return: how many vGPUs were dropped.
 */
size_t vgpu_domain_strip(struct _xmlDoc *doc, const char *vf);
/**
 * vgpu_domain_hostdevs() - the devices @doc's hostdevs name: mdev UUIDs
 * (normalized) and PCI functions (as "DDDD:BB:SS.F"), whoever added them.
 * @doc: the domain
 * @mdevs: the mdev UUIDs are appended
 * @vfs: the PCI addresses are appended
 */
void vgpu_domain_hostdevs(struct _xmlDoc *doc, struct vgpu_strv *mdevs, struct vgpu_strv *vfs);
struct vgpu_mig_domain;
/**
 * vgpu_domain_mig_facts() - what a domain says that QEMU will not migrate
 * (migrate-check's qemu-blockers): a guest <iommu>, enable-migration=off in
 * <qemu:commandline> or <qemu:override>, ramfb (a hostdev's ramfb='on' or a
 * ramfb video device) with the machine type, and its VFIO devices (mdev and
 * PCI hostdevs), counting those that are not our vGPUs apart.
 * @doc: the domain (its migratable XML)
 * @meta: our metadata of @doc, or NULL (then every VFIO device is another's)
 * @out: overwritten
 */
void vgpu_domain_mig_facts(struct _xmlDoc *doc, const struct vgpu_meta *meta,
			   struct vgpu_mig_domain *out);
/**
 * vgpu_domain_pinned_cpus() - add to @out the host CPUs one domain definition
 * pins (vcpupin, emulatorpin, iothreadpin, <vcpu cpuset>; libvirt's "^N"
 * exclusions honoured).
 * @ctx: where errors go
 * @xml: the definition's text
 * @out: the CPUs are added here
 * Return: 0 or -EINVAL (not a domain) with a message in @ctx.
 */
int vgpu_domain_pinned_cpus(struct vgpu_ctx *ctx, const char *xml, struct vgpu_cpuset *out);
/**
 * vgpu_domain_doc_pinned_cpus() - vgpu_domain_pinned_cpus() for a parsed domain.
 * @doc: the domain
 * @out: the CPUs are added here
 */
void vgpu_domain_doc_pinned_cpus(struct _xmlDoc *doc, struct vgpu_cpuset *out);
/**
 * vgpu_domain_doc_is() - is @doc the domain named @self_name or with UUID @self_uuid?
 * @doc: the domain
 * @self_name: a name, or NULL
 * @self_uuid: a UUID in any case, or NULL
 * Return: true when either matches.
 */
bool vgpu_domain_doc_is(struct _xmlDoc *doc, const char *self_name, const char *self_uuid);

#endif
