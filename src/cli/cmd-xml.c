// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli.h"
int cmd_xml(struct cli *c, int argc, char **argv)
{
	(void)c; (void)argc; (void)argv;
	return 1;
}
int cmd_plan(struct cli *c, int argc, char **argv)
{
	(void)c; (void)argc; (void)argv;
	return 1;
}
