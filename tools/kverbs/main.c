// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs: drive the kverbs kernel module's RDMA tests.
 */
#include <stdio.h>
#include <string.h>

#include "kverbs.h"

const char *kv_prog = "kverbs";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [OPTIONS]\n"
		"\n"
		"Run RDMA tests in the kernel, through the kverbs module (" KV_DEVICE_PATH ").\n"
		"\n"
		"commands:\n"
		"  devices    the RDMA devices the module sees, their ports and limits\n"
		"  ping       rping-compatible ping: -s to serve, -c -a ADDR to ping\n",
		kv_prog);
	kv_perf_commands(f);
	fprintf(f,
		"  serve      a server for every perf test, several clients at once\n");
	kv_lesson_commands(f);
	fprintf(f,
		"\n"
		"'%s COMMAND --help' describes each command's options; '%s --version'\n"
		"prints the uAPI's ABI version the tool was built for.\n"
		"\n"
		"exit status:\n"
		"  0    success\n"
		"  1    the test ran and failed\n"
		"  2    bad command line, or arguments the module refused\n"
		"  3    cannot use " KV_DEVICE_PATH ": the module is not loaded, no\n"
		"       permission, a module of another ABI version, or one too old for\n"
		"       the test\n"
		"  130  interrupted before the test was complete\n",
		kv_prog, kv_prog);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "devices", kv_cmd_devices },
		{ "ping", kv_cmd_ping },
		{ "serve", kv_cmd_serve },
		{ "lesson", kv_cmd_lesson },
	};
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return KV_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return KV_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("%s (ABI %u)\n", kv_prog, KVERBS_ABI_VERSION);
		return KV_EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	/* write_bw, read_lat, ...: the perf tests' table has them. */
	if (kv_perf_is_cmd(argv[1]))
		return kv_cmd_perf(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s'\n\n", kv_prog, argv[1]);
	usage(stderr);
	return KV_EXIT_USAGE;
}
