// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vgpuctl - inventory, plan and assign NVIDIA vGPUs on KVM/libvirt hosts.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#ifndef VGPUCTL_VERSION
#define VGPUCTL_VERSION "0"
#endif

/* the options of xml and plan (assign and release take them too) */
#define XML_OPTIONS                                                                                \
	"      --name NAME          domain name (default with --from: the file's)\n"               \
	"      --vgpu PROFILE[,...] vGPU type(s): short name, full name or type ID\n"              \
	"      --vcpus N            vCPUs, pinned to whole cores of the GPU's node\n"              \
	"                           (default with --from: the file's <vcpu>)\n"                    \
	"      --memory SIZE        guest memory: 32G, 4096M; a bare number is MiB\n"              \
	"      --uuid UUID          domain UUID (default: kept from --from, else random)\n"        \
	"      --mdev-uuid UUID     mdev UUID of the next mdev vGPU (repeatable)\n"                \
	"      --gpu BDF            choose among this GPU's VFs only\n"                            \
	"      --vf BDF             use exactly this VF\n"                                         \
	"      --template FILE      start from this skeleton, not the installed domain.xml\n"      \
	"      --from FILE          edit an existing definition, keeping what it has\n"            \
	"      --exclude-cpus LIST  never pin to these host CPUs (their cores are skipped)\n"      \
	"      --emulator-cpus LIST pin QEMU's emulator threads here\n"                            \
	"      --hugepages          back guest memory with 1 GiB pages\n"                          \
	"      --virt-type kvm|qemu domain type (default kvm)\n"                                   \
	"      --guest-topology mirror  lay the guest out like the host: a NUMA cell per\n"        \
	"                           node of its GPUs, each GPU behind an expander bus there\n"     \
	"  -c, --connect URI        avoid CPUs the connection's other domains pin\n"

static const struct cli_command commands[] = {
	{ "gpus", cmd_gpus, "list NVIDIA GPUs (physical functions)", "", NULL, &cli_gpus_columns,
	  true },
	{ "vfs", cmd_vfs, "list SR-IOV VFs and other vGPU parents", "[GPU]",
	  "  GPU                      this GPU's only: a PCI address or NVIDIA's index\n",
	  &cli_vfs_columns, true },
	{ "types", cmd_types, "list vGPU types and what can be created now",
	  "[--gpu BDF] [--vf BDF] [--available] [--per-vf]",
	  "      --gpu BDF            this GPU's types only (a PCI address or NVIDIA's index)\n"
	  "      --vf BDF             this VF's types only (per VF)\n"
	  "      --available          only types with AVAILABLE > 0\n"
	  "      --per-vf             one row per VF and type, as mdevctl types\n",
	  &cli_types_columns, true },
	{ "topology", cmd_topology, "show NUMA nodes, CPUs, thread siblings and GPUs", "", NULL,
	  &cli_topology_columns, true },
	{ "xml", NULL, "print a NUMA-pinned libvirt domain with a vGPU (dry run)",
	  "--name NAME --vgpu PROFILE[,PROFILE...] --vcpus N --memory SIZE [options]", XML_OPTIONS,
	  NULL, false },
	{ "plan", NULL, "explain which VF, node and CPUs 'xml' would use", "(same options as xml)",
	  XML_OPTIONS, NULL, false },
	{ "assign", NULL, "create vGPUs for a domain and put them in its definition",
	  "([-c URI] DOMAIN | --from FILE [-o OUT]) --vgpu PROFILE[,...] [--no-pin] [--per-start] [--dry-run] [xml options]",
	  "  -o, --output OUT         with --from: write the domain to the file OUT\n"
	  "                           (default stdout); a file here, not table columns\n"
	  "      --no-pin             leave the domain's CPU pinning as it is\n"
	  "      --per-start          claim the VFs only: the hook creates the vGPUs at\n"
	  "                           each start and frees them at its end\n"
	  "      --dry-run            print the domain, change nothing\n" XML_OPTIONS,
	  NULL, false },
	{ "release", NULL, "free a domain's vGPUs and take them out of its definition",
	  "([-c URI] DOMAIN | --from FILE [-o OUT]) [--vf BDF] [--dry-run]",
	  "  -c, --connect URI        the domain's libvirt connection\n"
	  "      --from FILE          a definition file instead of a libvirt domain\n"
	  "  -o, --output OUT         with --from: write the domain to the file OUT\n"
	  "                           (default stdout); a file here, not table columns\n"
	  "      --vf BDF             only the vGPU on this VF\n"
	  "      --dry-run            print the domain, change nothing\n"
	  "      --orphans            instead of DOMAIN: free the vGPUs nobody names or holds\n"
	  "      --stale              free the vGPUs whose record's domain is gone or drops them\n"
	  "      --grace SECONDS      an orphan is older than this (default 300)\n"
	  "      --clear-wedged ID    the vGPU (mdev UUID or VF) is clear: plan and assign\n"
	  "                           take it again\n",
	  NULL, false },
	{ "params", NULL, "keep a domain's NVIDIA vgpu_params set, written at each start",
	  "([-c URI] DOMAIN | --from FILE [-o OUT]) [--set KEY=VALUE]... [--unset KEY]... [--clear] [--raw]",
	  "  -c, --connect URI        the domain's libvirt connection (it is redefined)\n"
	  "      --from FILE          a definition file instead of a libvirt domain\n"
	  "  -o, --output OUT         with --from: write the domain to the file OUT\n"
	  "                           (default stdout); a file here, not table columns\n"
	  "      --set KEY=VALUE      set a parameter (repeatable)\n"
	  "      --unset KEY          drop a parameter (repeatable)\n"
	  "      --clear              drop them all (the file is cleared at the next start)\n"
	  "      --raw                accept a parameter NVIDIA does not document\n",
	  NULL, false },
	{ "nccl-topo", NULL, "print the NCCL topology file (NCCL_TOPO_FILE) of a guest with vGPUs",
	  "([-c URI] DOMAIN | --from FILE) [-o FILE]",
	  "  -c, --connect URI        the domain's libvirt connection\n"
	  "      --from FILE          a definition file instead of a libvirt domain\n"
	  "  -o, --output FILE        write the file to FILE (default stdout)\n",
	  NULL, true },
	{ "mig", cmd_mig, "plan MIG GPU instances, or show those that exist and their vGPUs",
	  "plan (--gpu BDF | --board NAME) [--lgi FILE] PROFILE[xN]...\n"
	  "       vgpuctl [global options] mig show [--gpu BDF] [--nvidia-smi PATH]",
	  "  plan --gpu BDF           plan for this GPU's board, beside its GIs (--lgi)\n"
	  "  plan --board NAME        plan for a board by name (A30, H100, DC, ...)\n"
	  "  plan --lgi FILE          the GIs that exist, as nvidia-smi mig -lgi prints them\n"
	  "  show --gpu BDF           this GPU only\n"
	  "  show --nvidia-smi PATH   nvidia-smi to ask where NVML does not answer\n",
	  &cli_mig_show_columns, true },
	{ "apply", NULL, "bring the host to a config: MIG mode, VFs, GPU instances, vGPUs, domains",
	  "-f FILE --config LABEL [--dry-run] [-c URI] [--nvidia-smi PATH] [--sriov-manage PATH]",
	  "  -f, --file FILE          the host config (mig-parted / vgpu-device-manager YAML)\n"
	  "      --config LABEL       the label to apply\n"
	  "      --dry-run            print every command and write, change nothing\n"
	  "  -c, --connect URI        where start-domains are started\n"
	  "      --nvidia-smi PATH    nvidia-smi (default /usr/bin/nvidia-smi)\n"
	  "      --sriov-manage PATH  sriov-manage (default /usr/lib/nvidia/sriov-manage)\n",
	  NULL, false },
	{ "assert", NULL,
	  "exit 0 when the host matches a config, 3 with each difference, 1 when it cannot tell",
	  "-f FILE --config LABEL [-c URI] [--nvidia-smi PATH] [--sriov-manage PATH]",
	  "  -f, --file FILE          the host config\n"
	  "      --config LABEL       the label to check\n"
	  "  -c, --connect URI        where start-domains must be running\n"
	  "      --nvidia-smi PATH    nvidia-smi (default /usr/bin/nvidia-smi)\n"
	  "      --sriov-manage PATH  sriov-manage (default /usr/lib/nvidia/sriov-manage)\n",
	  NULL, false },
	{ "why", cmd_why, "per GPU, how many more of a vGPU type fit now, or why none does",
	  "PROFILE [--gpu BDF]",
	  "      --gpu BDF            this GPU only (a PCI address or NVIDIA's index)\n",
	  &cli_why_columns, true },
	{ "vgpus", cmd_vgpus, "list vGPUs and reservations with their owners and state",
	  "[--orphans [-c URI] [--grace SECONDS]]",
	  "      --orphans            each vGPU's evidence and class (in-use, foreign, wedged,\n"
	  "                           stale, orphan); -c URI names the domains' libvirt\n"
	  "      --grace SECONDS      an orphan is older than this (default 300)\n",
	  &cli_vgpus_columns, true },
	{ "inventory", cmd_inventory,
	  "the whole host in one document: GPUs, VFs, types, GIs, vGPUs, topology", "[--json]",
	  NULL, &cli_inventory_columns, true },
	{ "scheduler", cmd_scheduler,
	  "the vGPU scheduler per GPU: live, configured in modprobe.d, pending a reload",
	  "[GPU...] [--set POLICY [--timeslice MS | --average-factor N --frequency HZ] [--dry-run]]",
	  "      --set POLICY         best-effort, equal-share or fixed-share: write\n"
	  "                           /etc/modprobe.d/vgpuctl-scheduler.conf, for every GPU,\n"
	  "                           or per device for the GPUs named\n"
	  "      --timeslice MS       the legacy scheduler's time slice, 1 to 30 ms\n"
	  "      --average-factor N   adaptive round robin's averaging factor, 1 to 60\n"
	  "      --frequency HZ       adaptive round robin's frequency, 63 to 960 Hz\n"
	  "      --dry-run            print the file, write nothing\n",
	  &cli_scheduler_columns, true },
	{ "fabric", cmd_fabric,
	  "NVSwitch partitions on HGX boards: Fabric Manager's mode, partitions, their domains",
	  "[--json]\n"
	  "       vgpuctl [global options] fabric activate ID [--vf BDF]...\n"
	  "       vgpuctl [global options] fabric deactivate ID\n"
	  "       vgpuctl [global options] fabric resync",
	  "  activate ID              activate partition ID (host lock); in vGPU mode with\n"
	  "                           one VF per GPU: the VFs of the domain whose vGPUs are\n"
	  "                           on its GPUs, else each GPU's first free VF\n"
	  "      --vf BDF             activate with these VFs instead, one per GPU\n"
	  "  deactivate ID            deactivate partition ID (host lock)\n"
	  "  resync                   tell a restarted Fabric Manager which partitions are\n"
	  "                           active: those whose GPUs hold a domain's vGPUs (records)\n",
	  &cli_fabric_columns, true },
	{ "metrics", cmd_metrics, "vGPU state for Prometheus (text exposition format)",
	  "[--textfile DIR]",
	  "      --textfile DIR       write DIR/vgpuctl.prom atomically (node-exporter's\n"
	  "                           textfile collector), not stdout\n",
	  NULL, true },
	{ "diagnose", cmd_diagnose,
	  "why a vGPU or VM failed: its log lines matched against known driver messages",
	  "[DOMAIN|UUID|BDF] [--since TIME] [--json]",
	  "      --since TIME         lines from TIME on (2026-11-28 19:02, or an age: 30m, 2h)\n"
	  "      --catalogue          list the message catalogue instead (alone, or with --json)\n"
	  "      --journalctl PATH    the journal of nvidia-vgpu-mgr and nvidia-vgpud from PATH -o json\n"
	  "                           (default /usr/bin/journalctl; with --sysroot none unless named)\n",
	  &cli_diagnose_columns, true },
	{ "migrate-check", NULL,
	  "will a domain's vGPUs survive a live migration? go, no-go or unknown",
	  "DOMAIN --to URI [--json] [--offer-command CMD] [--postcopy] [--bandwidth MIB_S]",
	  "      --to URI             the target: qemu+ssh://HOST/system is asked over ssh\n"
	  "      --offer-command CMD  run CMD (words split at blanks, no shell) as the\n"
	  "                           target's 'vgpuctl migrate-offer', manifest on stdin\n"
	  "      --postcopy           the migration would use post-copy (refused)\n"
	  "      --bandwidth MIB_S    the migration link's bandwidth in MiB/s, for\n"
	  "                           downtime (default 1192, 10 Gbit/s)\n"
	  "  -c, --connect URI        (before the command) the source's libvirt: the\n"
	  "                           domain, versions and max downtime\n",
	  NULL, true },
	{ "migrate-xml", NULL,
	  "print the domain XML the target's hook would give a migrating domain",
	  "DOMAIN --to URI [--offer-command CMD] [-o FILE]",
	  "      --to URI             the target: qemu+ssh://HOST/system is asked over ssh\n"
	  "      --offer-command CMD  run CMD as the target's 'vgpuctl migrate-offer'\n"
	  "  -o, --output FILE        write the XML to FILE (default stdout)\n"
	  "  -c, --connect URI        (before the command) the source's libvirt\n",
	  NULL, true },
	{ "migrate-offer", NULL,
	  "a migration's target: the GPUs and devices it would give (manifest on stdin)", "",
	  "  -c, --connect URI        (before the command) this host's libvirt, for its\n"
	  "                           versions (default as virsh, none with --sysroot)\n",
	  NULL, true },
	{ "migrate", NULL,
	  "migrate a running domain live after migrate-check, then check its vGPUs there",
	  "DOMAIN --to URI [--force] [--migrate-uri URI] [--offer-command CMD] [--target-command CMD]",
	  "      --to URI             the target's libvirt (peer to peer: as the source's\n"
	  "                           libvirt reaches it); qemu+ssh://HOST/system\n"
	  "      --force              migrate when the verdict is unknown (never no-go)\n"
	  "      --migrate-uri URI    where QEMU's stream goes (tcp://HOST:PORT, unix:///PATH)\n"
	  "      --offer-command CMD  as migrate-check's\n"
	  "      --target-command CMD run CMD (words split at blanks, no shell) as the\n"
	  "                           target's 'vgpuctl vgpus --json' afterwards\n"
	  "  -c, --connect URI        (before the command) the source's libvirt\n",
	  NULL, true },
	{ "hook", cmd_hook, "libvirt qemu hook: re-create vGPUs at prepare, free at release",
	  "DOMAIN OPERATION SUB-OPERATION EXTRA  (domain XML on stdin)", NULL, NULL, false },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("Usage: vgpuctl [-c URI] [--sysroot DIR] [--nvml LIB] [-J|-o LIST|-n|-r|-b] COMMAND [ARGS]\n\n"
	      "Inventory, plan and assign NVIDIA vGPUs on KVM/libvirt hosts.\n\n"
	      "Global options:\n"
	      "      --sysroot DIR  read sysfs/procfs below DIR instead of /\n"
	      "  -c, --connect URI  libvirt connection for the commands that use one\n"
	      "                     (as virsh: before the command; default\n"
	      "                     $LIBVIRT_DEFAULT_URI, else qemu:///system)\n"
	      "      --nvml LIB     NVIDIA's NVML library (default: libnvidia-ml.so.1,\n"
	      "                     not loaded with --sysroot unless named)\n"
	      "      --nvfm LIB     Fabric Manager's SDK library (default: libnvfm.so.1,\n"
	      "                     not loaded with --sysroot unless named)\n"
	      "  -J, --json         JSON output\n"
	      "  -o, --output LIST  text columns to print, by header (e.g. GPU,PROFILE,AVAILABLE;\n"
	      "                     a listing's --help names its columns)\n"
	      "  -n, --noheadings   no header line\n"
	      "  -r, --raw          one space between values, '-' for none (no alignment)\n"
	      "  -b, --bytes        sizes in bytes, not human-readable (e.g. 251.6G)\n"
	      "  -h, --help         show this help\n"
	      "  -V, --version      show the version\n\n"
	      "Options go before or after the command and its arguments ('vgpuctl gpus -n -o\n"
	      "ADDRESS'); '--' ends them.  A GPU is named by its PCI address or NVIDIA's index.\n\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'vgpuctl COMMAND --help' for a command's options; see vgpuctl(8).\n", f);
}

static void command_usage(FILE *f, const struct cli_command *cmd)
{
	fprintf(f, "Usage: vgpuctl [global options] %s%s%s\n\n%s.\n", cmd->name,
		*cmd->usage ? " " : "", cmd->usage, cmd->summary);
	if (cmd->options)
		fprintf(f, "\nOptions:\n%s", cmd->options);
	else
		fputs("\nOptions:\n", f);
	fputs("  -J, --json               JSON output (also before the command)\n", f);
	if (cmd->columns)
		fputs("  -o, --output LIST        text columns to print, by header (see Columns)\n"
		      "  -n, --noheadings         no header line\n"
		      "  -r, --raw                one space between values, '-' for none\n"
		      "  -b, --bytes              sizes in bytes, not human-readable\n",
		      f);
	fputs("  -h, --help               this help\n", f);
	if (cmd->columns)
		cli_columns_help(f, cmd->columns);
	fputs("\nGlobal options (before or after the command): vgpuctl --help.  See vgpuctl(8).\n",
	      f);
}

/* the commands that print tables, which -o/--output, -n and -r shape */
#define LISTINGS "gpus, vfs, types, topology, why, vgpus, mig show, inventory and scheduler"

/* Exit quietly on a closed pipe (vgpuctl types | head -1), loudly on other write errors. */
static int close_stdout(int rc)
{
	bool failed = ferror(stdout) != 0;
	int err = errno;

	if (fclose(stdout) != 0) {
		failed = true;
		err = errno;
	}
	if (failed && err != EPIPE) {
		fprintf(stderr, "vgpuctl: write error: %s\n", strerror(err));
		return EXIT_FAILURE;
	}
	return rc;
}

/*
 * Started with stdin, stdout or stderr closed (a hook, a unit with odd
 * settings), the first file we open would become fd 0-2 and a message for
 * stderr would land in the lock file or a record: /dev/null takes them first.
 */
static void open_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", fd ? O_WRONLY : O_RDONLY) < 0)
			abort(); /* no /dev/null: nothing safe to write to */
	}
}

/*
 * The exit status of @cmd's result @rc (enum cli_result): CLI_HELP prints
 * the command's help on stdout and exits 0; the exit codes are themselves.
 */
/* The commands whose failure may be a driver's refusal of a write (a cause: line follows). */
static bool writes_host(const char *name)
{
	static const char *const names[] = { "assign", "release", "apply", "hook" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static int command_exit(const struct cli_command *cmd, int rc)
{
	if (rc == CLI_HELP) {
		command_usage(stdout, cmd);
		return EXIT_SUCCESS;
	}
	if (rc < EXIT_SUCCESS || rc > EXIT_DIFFERS) {
		/* a bug: said rather than taken for help or wrapped into an odd exit status */
		fprintf(stderr, "vgpuctl: %s: internal error: result %d is no exit status\n",
			cmd->name, rc);
		return EXIT_FAILURE;
	}
	return rc;
}

int main(int argc, char **argv)
{
	enum { OPT_SYSROOT = 256, OPT_NVML, OPT_NVFM };
	static const struct option opts[] = {
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		{ "nvml", required_argument, NULL, OPT_NVML },
		{ "nvfm", required_argument, NULL, OPT_NVFM },
		{ "connect", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "raw", no_argument, NULL, 'r' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct cli c = { .out = stdout, .err = stderr };
	int o, rc;

	open_std_fds();
	vgpu_ctx_init(&c.ctx, cli_log_cb, &c);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Installed as libvirt's hook (qemu.d/50-vgpuctl, a link to us), libvirt
	 * runs PATH DOMAIN OP SUB-OP EXTRA: that is "vgpuctl hook ...".
	 */
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	size_t bl = strlen(base);

	if (bl > 8 && strcmp(base + bl - 8, "-vgpuctl") == 0) {
		long long t0 = (long long)time(NULL);

		argv[0] = "hook";
		rc = cmd_hook(&c, argc, argv);
		if (rc == EXIT_FAILURE)
			cli_explain_failure(&c, t0);
		cli_cleanup(&c);
		/* libvirt asks for no help: a help request is a failed hook, as before */
		return rc == CLI_HELP ? EXIT_FAILURE : rc;
	}
	/* large text listings go out in 64 KiB writes rather than 4 KiB ones (glibc
	 * ignores the size unless it is given the buffer); JSON tables write
	 * 16 KiB buffers of their own (table.c) */
	static char outbuf[1 << 16];

	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	opterr = 0; /* cli_bad_option() says what was wrong, with one "vgpuctl:" */
	/* '+': stop at the command name; each command parses its own options */
	while ((o = getopt_long(argc, argv, "+c:o:nrbJhV", opts, NULL)) != -1) {
		switch (o) {
		case OPT_SYSROOT:
			c.sysroot = optarg;
			break;
		case OPT_NVML:
			c.nvml_path = optarg;
			break;
		case OPT_NVFM:
			c.nvfm_path = optarg;
			break;
		case 'c':
			c.connect = optarg;
			break;
		case 'o':
			c.columns = optarg;
			break;
		case 'n':
			c.no_headings = true;
			break;
		case 'r':
			c.raw = true;
			break;
		case 'b':
			c.bytes = true;
			break;
		case 'J':
			c.json = true;
			break;
		case 'h':
			usage(stdout);
			return close_stdout(EXIT_SUCCESS);
		case 'V':
			printf("vgpuctl %s\n", VGPUCTL_VERSION);
			return close_stdout(EXIT_SUCCESS);
		default:
			return cli_bad_option(&c, NULL, opts, argv);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* "vgpuctl help [COMMAND]", as git and virsh take it */
	if (strcmp(argv[optind], "help") == 0) {
		if (optind + 1 >= argc) {
			usage(stdout);
			return close_stdout(EXIT_SUCCESS);
		}
		for (size_t i = 0; i < N_COMMANDS; i++)
			if (strcmp(argv[optind + 1], commands[i].name) == 0) {
				command_usage(stdout, &commands[i]);
				return close_stdout(EXIT_SUCCESS);
			}
		return cli_usage_error(&c, NULL, "help: unknown command '%s'", argv[optind + 1]);
	}
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(argv[optind], commands[i].name) != 0)
			continue;
		/* command-level --json / --sysroot are accepted too: "vgpuctl gpus --json" */
		char **sub = argv + optind;
		int subc = argc - optind, k = 1;
		/*
		 * The table options belong to the listings; assign and release have
		 * an --output FILE of their own, and the others print no table
		 * (an option there that changes nothing is refused, not ignored).
		 */
		bool table = commands[i].columns != NULL;

		if (!table && (c.columns || c.no_headings || c.raw))
			return cli_usage_error(
				&c, NULL,
				"%s prints no table: -o/--output, -n/--noheadings and -r/--raw are for %s",
				commands[i].name, LISTINGS);
		/* the listings parse these with their own options (cli_getopt()) */
		if (commands[i].getopt)
			k = subc;
		for (int j = k; j < subc; j++) {
			if (strcmp(sub[j], "--") == 0) {
				for (; j < subc; j++)
					sub[k++] = sub[j];
				break;
			}
			if (strcmp(sub[j], "--json") == 0 || strcmp(sub[j], "-J") == 0)
				c.json = true;
			else if (strcmp(sub[j], "--sysroot") == 0 && j + 1 < subc)
				c.sysroot = sub[++j];
			else if (strncmp(sub[j], "--sysroot=", 10) == 0)
				c.sysroot = sub[j] + 10;
			else if (table && strcmp(sub[j], "--noheadings") == 0)
				c.no_headings = true;
			else if (table && strcmp(sub[j], "--raw") == 0)
				c.raw = true;
			else if (strcmp(sub[j], "--bytes") == 0)
				c.bytes = true; /* not -b: mig plan's --board */
			else if (table && strcmp(sub[j], "--output") == 0 && j + 1 < subc)
				c.columns = sub[++j];
			else if (table && strncmp(sub[j], "--output=", 9) == 0)
				c.columns = sub[j] + 9;
			else if (strcmp(sub[j], "--nvml") == 0 && j + 1 < subc)
				c.nvml_path = sub[++j];
			else if (strncmp(sub[j], "--nvml=", 7) == 0)
				c.nvml_path = sub[j] + 7;
			else if (strcmp(sub[j], "--nvfm") == 0 && j + 1 < subc)
				c.nvfm_path = sub[++j];
			else if (strncmp(sub[j], "--nvfm=", 7) == 0)
				c.nvfm_path = sub[j] + 7;
			else
				sub[k++] = sub[j];
		}
		subc = k;
		if (c.sysroot && !*c.sysroot) {
			cli_error(&c, "--sysroot '': an empty root is not a directory");
			cli_cleanup(&c);
			return EXIT_FAILURE;
		}
		long long t0 = (long long)time(NULL);

		rc = commands[i].run ? commands[i].run(&c, subc, sub) :
				       cli_run_module(&c, commands[i].name, subc, sub);
		rc = command_exit(&commands[i], rc);
		/* a failed write: what the driver logged meanwhile, when the catalogue knows it */
		if (rc == EXIT_FAILURE && writes_host(commands[i].name))
			cli_explain_failure(&c, t0);
		cli_cleanup(&c);
		return close_stdout(rc);
	}
	{
		const char *names[N_COMMANDS + 1];
		const char *near;

		for (size_t i = 0; i < N_COMMANDS; i++)
			names[i] = commands[i].name;
		names[N_COMMANDS] = "help";
		near = cli_nearest(argv[optind], names, N_COMMANDS + 1);
		if (near)
			return cli_usage_error(&c, NULL, "unknown command '%s'; did you mean '%s'?",
					       argv[optind], near);
		return cli_usage_error(&c, NULL, "unknown command '%s'", argv[optind]);
	}
}
