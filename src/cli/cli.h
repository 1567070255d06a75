/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef VGPUCTL_CLI_H
#define VGPUCTL_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctx.h"
#include "read-host.h"
#include "model.h"
#include "sysfs.h"

struct vgpu_catalogue;

/*
 * What a command function (cmd_*, and the option parsers they call)
 * returns; main() turns it into the exit status.  Four are the exit status
 * itself:
 *   EXIT_SUCCESS (0)  done
 *   EXIT_FAILURE (1)  failed, said on stderr (assert: could not check)
 *   EXIT_USAGE (2)    a usage error, said on stderr
 *   EXIT_DIFFERS (3)  assert: the host differs from the config
 * CLI_HELP is none: the command was asked for --help, and main() prints
 * its help on stdout and exits 0.  No command returns anything else (no
 * negative value, no -errno: a library's -errno is said, then EXIT_FAILURE).
 */
enum cli_result {
	EXIT_USAGE = 2,
	EXIT_DIFFERS = 3,
	CLI_HELP = 0x100, /* above every exit status: it cannot be mistaken for one */
};

struct cli {
	const char *sysroot;
	bool json;
	FILE *out;
	FILE *err;
	struct vgpu_ctx ctx; /* the library's errors and warnings */
	struct vgpu_sysfs *fs;
	struct vgpu_model *model; /* NULL until cli_read_host() */
	struct vgpu_records recs; /* the owner records cli_read_host() read with it */
	const char *nvml_path; /* --nvml */
	const char *nvfm_path; /* --nvfm: Fabric Manager's SDK library */
	const char *connect; /* global -c/--connect URI, before the command (virsh's place) */
	const char *columns; /* -o/--output: text columns by header, comma-separated */
	bool no_headings; /* -n/--noheadings */
	bool raw; /* -r/--raw: one space between values, "-" for none */
	bool bytes; /* -b/--bytes: text sizes in bytes, not human-readable (lsblk -b) */
	struct vgpu_nvml *nvml; /* loaded by cli_nvml(); NULL when absent */
	bool nvml_tried;
	struct vgpu_catalogue *cat; /* loaded by cli_catalogue(); NULL when absent */
	bool cat_tried;
	/* inventory: the host is read once, and each listing is one member of one
	 * JSON document ("NAME": [...], after a comma, no braces) */
	bool model_ready; /* cli_read_host() keeps c->model as it is */
	bool json_member;
	char *hook_xml; /* the hook: the domain XML read from stdin, NUL-terminated */
	size_t hook_xml_len;
};

struct cli_columns;
struct cli_command {
	const char *name;
	/* a command: returns an enum cli_result; NULL: in the XML module */
	int (*run)(struct cli *c, int argc, char **argv);
	const char *summary;
	const char *usage; /* options after the command name */
	const char *options; /* one line per option, for COMMAND --help; NULL none */
	/* a listing: its columns, for --help and -o/--output; NULL when it prints no table */
	const struct cli_columns *columns;
	/* true: the command takes the shared options itself (cli_getopt()), not main.c */
	bool getopt;
};

/*
 * A column: text header, JSON key, how JSON renders it, text alignment.
 * COL_SIZE_MIB: a size in MiB, set with cli_cell_num(): a number in JSON,
 * human-readable in text ("251.6G", as lsblk), in bytes with -b/--bytes.
 */
enum col_kind { COL_STR, COL_NUM, COL_ARRAY /* newline-separated items */, COL_SIZE_MIB };
struct col {
	const char *header;
	const char *key;
	enum col_kind kind;
	unsigned flags; /* COL_RIGHT (true), COL_JSON_ONLY */
};
/* A listing's columns, for its --help */
struct cli_columns {
	const struct col *cols;
	const char *const *desc; /* one line per column, as lsblk --help says its columns */
	size_t n;
	const char *note; /* a line after them, or NULL */
};
/* The cli_columns of @cols and @desc, which must be as long. */
#define CLI_COLUMNS(cols, desc, note)                                                              \
	{                                                                                          \
		(cols), (desc),                                                                    \
			ARRAY_SIZE(cols) +                                                         \
				0 * sizeof(char[ARRAY_SIZE(cols) == ARRAY_SIZE(desc) ? 1 : -1]),   \
			(note)                                                                     \
	}
/* "Columns:" and one line per column of @cc, as lsblk --help lists them. */
void cli_columns_help(FILE *f, const struct cli_columns *cc);
/* The columns of each listing (next to the code that fills them). */
extern const struct cli_columns cli_gpus_columns, cli_vfs_columns, cli_types_columns,
	cli_topology_columns, cli_why_columns, cli_vgpus_columns, cli_mig_show_columns,
	cli_inventory_columns, cli_diagnose_columns, cli_scheduler_columns;
enum {
	COL_RIGHT = 1, /* right-aligned text */
	COL_JSON_ONLY = 2 /* a key of the JSON output, no text column */
};

struct cli_table;
struct cli_line;

void cli_error(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The library's log callback: "vgpuctl: warning: MSG" on c->err, each message once. */
void cli_log_cb(void *data, int priority, const char *msg);
/* Free the host, the model and the context. */
void cli_cleanup(struct cli *c);
int cli_usage_error(struct cli *c, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The domain a command reads: DOMAIN (through libvirt, -c) or --from FILE,
 * one of them; -o OUT only with --from (@out: NULL where -o is not the
 * domain's way out); a name libvirt can have.  Return: 0 or EXIT_USAGE (said).
 */
int cli_domain_source(struct cli *c, const char *cmd, const char *domain, const char *from,
		      const char *out, const char *uri);
/*
 * Open the host (--sysroot) and read it into c->model with @what
 * (VGPU_READ_* flags), after option parsing; failures are printed.
 * Return: 0 or an exit code.
 */
/* cli_read_host(): also ask NVML (MIG mode, GIs, the driver's type table) */
#define CLI_READ_NVML 0x100
/* cli_read_host(): a listing of GPUs: say "no NVIDIA GPU found" when there is none */
#define CLI_READ_GPUS 0x200
int cli_read_host(struct cli *c, unsigned what);
/* Whether this binary is the one in its build tree's src/ (it reads the build tree's data). */
bool cli_from_build_tree(void);
/*
 * NVML for this run, loaded on first use: NULL when it is absent, or when
 * --sysroot names another host and --nvml does not say which NVML speaks
 * for it.  A library named with --nvml that cannot be used is warned about.
 */
struct vgpu_nvml *cli_nvml(struct cli *c);
struct vgpu_fm;
/*
 * Fabric Manager for this run (libnvfm, --nvfm): *out NULL and 0 when
 * --sysroot names another host and --nvfm does not say which library speaks
 * for it.  Return: 0, or vgpu_fm_open()'s -errno with its message in c->ctx.
 */
int cli_nvfm(struct cli *c, struct vgpu_fm **out);
struct vgpu_fabric;
/*
 * The fabric partitions into *@out when this host's Fabric Manager runs in
 * vGPU mode (out->mode VGPU_FABRIC_VGPU): c->model must be read; NVML's
 * module IDs are read into it when it lacks them.  Elsewhere, or with
 * --sysroot and no --nvfm, out->mode says the mode and nothing is read.
 * Return: 0, or -errno with the message in c->ctx; clear *@out with
 * vgpu_fabric_clear().
 */
int cli_fabric(struct cli *c, struct vgpu_fabric *out);
/*
 * --gpu ARG of @cmd (NULL: no prefix) as a GPU of the host read: *out NULL
 * when @arg is NULL.  Return: 0, or EXIT_FAILURE with the error said.
 */
int cli_find_gpu(struct cli *c, const char *cmd, const char *arg, const struct vgpu_gpu **out);
/* The libvirt URI when no -c is given, as virsh picks it: LIBVIRT_DEFAULT_URI, else qemu:///system.
 */
const char *cli_default_uri(void);
/* SIGINT, SIGTERM, SIGHUP only leave vgpu_interrupt()'s flag: the change unwinds first. */
void cli_catch_stops(void);
/* Die of the signal that interrupted the command, if one did (after its output). */
void cli_reraise_stop(void);
/* A table named @name (the JSON array) with @n columns; rows are filled in order. */
struct cli_table *cli_table(struct cli *c, const char *name, const struct col *cols, size_t n);
/* Start the next row; the cell setters fill it. An unset cell is absent (null). */
struct cli_line *cli_line_new(struct cli_table *t);
/* Copy @s (NULL: leave absent). */
void cli_cell_str(struct cli_line *ln, size_t col, const char *s);
/* Same, and free @data. */
void cli_cell(struct cli_line *ln, size_t col, char *data);
void cli_cell_num(struct cli_line *ln, size_t col, long v, bool present);
/* @prefix then @v in decimal ("nvidia-%ld"). */
void cli_cell_num_after(struct cli_line *ln, size_t col, const char *prefix, long v);
/* @s as a JSON string ("null" for NULL) on @f. */
void cli_json_str(FILE *f, const char *s);
/* Free the table unprinted (a command that fails half-way prints nothing of it). */
void cli_table_discard(struct cli_table *t);
/* Print as text or JSON, then free the table. */
int cli_table_print(struct cli *c, struct cli_table *t);

int cmd_gpus(struct cli *c, int argc, char **argv);
int cmd_vfs(struct cli *c, int argc, char **argv);
/*
 * One line on stderr when a GPU (@only, or any) has its SR-IOV VFs off: vfs
 * and types list nothing for it, which would otherwise look like no vGPU support.
 */
void cli_hint_vfs_off(struct cli *c, const struct vgpu_gpu *only);
struct option;
/*
 * The nearest of @names to @word (a typo: at most 1 edit for short words, 2
 * for longer), or NULL.
 */
const char *cli_nearest(const char *word, const char *const *names, size_t n);
/*
 * A command's options: its own, and the shared ones every command takes
 * after its name (--json/-J, --sysroot, --nvml, --bytes; for a table also
 * -o/--output LIST, -n/--noheadings, -r/--raw, -b).  Set @cmd, @own,
 * @own_short and @table; the rest is cli_getopt()'s.
 */
struct cli_opts {
	const char *cmd; /* in messages: "why", "mig plan" */
	const struct option *own; /* the command's long options, ending in { 0 } */
	const char *own_short; /* its short ones, e.g. "h" */
	bool table; /* a listing */
	bool started;
	struct option all[40]; /* own + shared, built on the first call */
	char shorts[32];
};
/*
 * getopt_long() over @argv with @o's options, permuted as every getopt
 * tool does ("why PROFILE --gpu BDF"; "--" ends the options); the shared
 * ones are applied to @c here.  Return: the command's next option, -1 at the
 * end (optind: the first argument), or '?' after a usage error it printed.
 */
int cli_getopt(struct cli *c, struct cli_opts *o, int argc, char **argv);
/*
 * getopt_long() refused argv[optind - 1] (opterr is 0: we say it): a missing
 * argument, or an unknown option with the nearest of @opts suggested.
 * Return: EXIT_USAGE.
 */
int cli_bad_option(struct cli *c, const char *cmd, const struct option *opts, char **argv);
int cmd_types(struct cli *c, int argc, char **argv);
int cmd_why(struct cli *c, int argc, char **argv);
int cmd_topology(struct cli *c, int argc, char **argv);
/* In the module vgpuctl-xml.so (cmd-xml.c), looked up by name. */
int cmd_xml(struct cli *c, int argc, char **argv);
int cmd_plan(struct cli *c, int argc, char **argv);
int cmd_assign(struct cli *c, int argc, char **argv);
int cmd_release(struct cli *c, int argc, char **argv);
/* (cmd-orphans.c, module) vgpus --orphans; release --orphans|--stale */
int cmd_vgpus_orphans(struct cli *c, int argc, char **argv);
int cmd_release_orphans(struct cli *c, int argc, char **argv);
int cmd_params(struct cli *c, int argc, char **argv);
int cmd_nccl_topo(struct cli *c, int argc, char **argv);
/* The hook's filter (core): the work, once stdin must be parsed, is cmd_hook_live (module). */
int cmd_hook(struct cli *c, int argc, char **argv);
int cmd_hook_live(struct cli *c, int argc, char **argv);
/*
 * (cmd-hook.c, module) May a vGPU migrating here change its interface: this
 * host's libvirt library (no connection) is 11.0 or later?  @why says why
 * not, for the refusal.  The hook and migrate-offer ask the same.
 */
bool cli_iface_change_allowed(struct vgpu_ctx *ctx, char *why, size_t len);
/*
 * (cmd-hook.c, module) A migrating domain's <vcpu> (1 when none) and memory
 * in KiB (0: not checked), as the hook and migrate-xml read them; 0 or -EINVAL.
 */
struct _xmlDoc;
int cli_migrate_size(struct vgpu_ctx *ctx, struct _xmlDoc *doc, unsigned *vcpus,
		     uint64_t *memory_kib);
/* Run cmd_@name from the XML module. */
int cli_run_module(struct cli *c, const char *name, int argc, char **argv);
int cmd_vgpus(struct cli *c, int argc, char **argv);
struct vgpu_rows;
/*
 * The rows of vgpus (vgpu_rows_read()) from the model and records
 * cli_read_host() read, the runs read only when some vGPU is unclaimed.
 * Free with vgpu_rows_clear().
 */
void cli_vgpus_read(struct cli *c, struct vgpu_rows *out);
/*
 * The vgpus table named @name, rows of @rows whose state is in @states (a
 * mask of 1 << VGPU_STATE_*; ~0u: all).
 */
int cli_list_vgpus(struct cli *c, const struct vgpu_rows *rows, const char *name, unsigned states);
int cmd_inventory(struct cli *c, int argc, char **argv);
int cmd_metrics(struct cli *c, int argc, char **argv);
/* vgpuctl diagnose: a vGPU's or VM's log lines matched against the message catalogue. */
int cmd_diagnose(struct cli *c, int argc, char **argv);
/*
 * After a failed write (assign, release, apply, the hook): the first root
 * cause the kernel logs have from @since (Unix seconds, the command's start)
 * on, as "vgpuctl: cause: ..." and "vgpuctl: next: ..." lines on stderr;
 * nothing when no catalogue row matches (or the catalogue is not there).
 */
void cli_explain_failure(struct cli *c, long long since);
/*
 * The message catalogue (diagnose's: the build tree's, beside the
 * executable, or installed), loaded once; NULL when it cannot be found or
 * read (the caller's library call warns of what it then leaves out).
 */
const struct vgpu_catalogue *cli_catalogue(struct cli *c);
/* vgpuctl scheduler: the vGPU scheduler per GPU, live, configured and pending; --set. */
int cmd_scheduler(struct cli *c, int argc, char **argv);
/* vgpuctl fabric [activate ID [--vf BDF]... | deactivate ID | resync]: HGX partitions */
int cmd_fabric(struct cli *c, int argc, char **argv);
extern const struct cli_columns cli_fabric_columns;
/* In the module (cmd-migrate.c, libvirt and libxml2), looked up by name. */
/* The target's side of a migration check: the manifest on stdin, the offer on stdout. */
int cmd_migrate_offer(struct cli *c, int argc, char **argv);
/* The source's side: the checks of a live migration, the verdict last (exit 0, 3, 1). */
int cmd_migrate_check(struct cli *c, int argc, char **argv);
/* The domain XML the target's hook would give: validated, its changes on stderr. */
int cmd_migrate_xml(struct cli *c, int argc, char **argv);
struct vgpu_mig_results;
/*
 * migrate-check with @argv as its own (argv[0] the command), its lines
 * printed; with @keep set the answers are moved there (free them with
 * vgpu_mig_results_free()) when the checks ran.  Return: its exit status.
 */
int cli_migrate_check(struct cli *c, int argc, char **argv, struct vgpu_mig_results *keep);
/*
 * The argv that runs `vgpuctl WHAT` on the target: @cmd (given as option
 * @opt) split at blanks (no quoting, no shell), else `ssh HOST vgpuctl
 * WHAT` for a qemu+ssh:// @uri; argv[0] NULL when there is no way.  The
 * words point into @buf of @len (at least strlen(@uri) + strlen(@cmd) + 1);
 * @argv holds CLI_TARGET_WORDS + 1.  Return: 0 or EXIT_USAGE (said, as command @name).
 */
#define CLI_TARGET_WORDS 64
int cli_migrate_target_argv(struct cli *c, const char *name, const char *uri, const char *cmd,
			    const char *opt, const char *what, char *buf, size_t len,
			    const char **argv);
/* The migrate commands' options besides --to and --offer-command (cli_migrate_args()). */
#define CLI_MIG_POSTCOPY 0x1u /* --postcopy, --bandwidth MIB (migrate-check) */
#define CLI_MIG_OUTPUT 0x2u /* -o/--output FILE (migrate-xml) */
#define CLI_MIG_RUN 0x4u /* --target-command, --migrate-uri, --force (migrate) */
struct cli_mig_args {
	const char *domain, *to, *cmd, *output, *target_cmd, *migrate_uri;
	bool postcopy, force;
	unsigned long bandwidth;
};
/*
 * DOMAIN --to URI [--offer-command CMD] and the options @opts names
 * (CLI_MIG_*), as command @name takes them.  Return: 0, CLI_HELP or
 * EXIT_USAGE (said).
 */
int cli_migrate_args(struct cli *c, const char *name, unsigned opts, int argc, char **argv,
		     struct cli_mig_args *a);
/* vgpuctl migrate DOMAIN --to URI (module: libvirt): check, migrate live, verify the target. */
int cmd_migrate(struct cli *c, int argc, char **argv);
/*
 * A vGPU type a VF holds that no list names (a full vendor-VFIO GPU lists
 * nothing; H100 type 1059 beside free GIs of other profiles): ask NVML, the
 * only one that names it, loaded for that alone (cli_nvml()'s rules).
 */
void cli_name_held_types(struct cli *c);
/* The host name of the host read: SYSROOT/proc/sys/kernel/hostname; NULL when unreadable. */
char *cli_host_name(struct cli *c);
/* mig SUB-COMMAND: dispatches on argv[1] ("plan"). */
int cmd_mig(struct cli *c, int argc, char **argv);
int cmd_mig_show(struct cli *c, int argc, char **argv);
/* apply and assert: in the module (libyaml, libvirt for the domains) */
int cmd_apply(struct cli *c, int argc, char **argv);
int cmd_assert(struct cli *c, int argc, char **argv);

#endif
