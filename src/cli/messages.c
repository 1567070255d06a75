// SPDX-License-Identifier: GPL-2.0-or-later
/* Messages: "vgpuctl: MESSAGE" on stderr, and usage errors with where to look. */
#include <stdarg.h>
#include <stdlib.h>

#include "cli.h"
#include "util.h"

/* "vgpuctl: MESSAGE\n", control characters (a name given with a newline) escaped. */
static void print_message(struct cli *c, const char *fmt, va_list ap)
{
	char *msg = vgpu_escape_controls(vgpu_vasprintf(fmt, ap));

	fprintf(c->err, "vgpuctl: %s\n", msg);
	free(msg);
}

void cli_error(struct cli *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_message(c, fmt, ap);
	va_end(ap);
}

int cli_usage_error(struct cli *c, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_message(c, fmt, ap);
	va_end(ap);
	fprintf(c->err, "Try 'vgpuctl %s%s--help' for more information.\n", cmd ? cmd : "",
		cmd ? " " : "");
	return EXIT_USAGE;
}

int cli_domain_source(struct cli *c, const char *cmd, const char *domain, const char *from,
		      const char *out, const char *uri)
{
	if (from && domain)
		return cli_usage_error(c, cmd, "give DOMAIN or --from FILE, not both");
	if (!from && !domain)
		return cli_usage_error(c, cmd, "DOMAIN (or --from FILE) is required");
	if (out && !from)
		return cli_usage_error(c, cmd, "-o OUT goes with --from FILE");
	if (from && uri)
		return cli_usage_error(c, cmd, "--from FILE works without libvirt: drop -c");
	if (domain && vgpu_domain_name_check(domain))
		return cli_usage_error(c, cmd, "'%s': not a domain name (%s)", domain,
				       vgpu_domain_name_check(domain));
	return 0;
}
