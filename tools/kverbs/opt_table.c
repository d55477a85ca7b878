// SPDX-License-Identifier: GPL-2.0
/*
 * A command's options as data: one row per option (struct kv_opt), from
 * which getopt_long()'s long options and option string, the command's
 * --help and the refusals of an option given where it does not belong
 * all come, as iproute2's rdma tool dispatches through command tables:
 * a command's options are written once, not in four lists kept in step.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "kverbs.h"

/* getopt_long()'s value for a long option with no short one: above any char. */
#define KV_OPT_LONG	256

/* Whether the command's variant takes @opt: perf's tests take different ones. */
static bool kv_opt_taken(const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	return !opt->takes || (opt->takes & cl->has);
}

static int kv_opt_val(const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	return opt->key ? opt->key : KV_OPT_LONG + (int)(opt - cl->opts);
}

/* The row getopt_long() returned @val for, or NULL for none. */
static const struct kv_opt *kv_opt_of(const struct kv_cmdline *cl, int val)
{
	unsigned int i;

	if (val >= KV_OPT_LONG)
		return val - KV_OPT_LONG < (int)cl->nopts ? &cl->opts[val - KV_OPT_LONG] : NULL;
	for (i = 0; i < cl->nopts; i++)
		if (cl->opts[i].key == val)
			return &cl->opts[i];
	return NULL;
}

/*
 * getopt_long()'s long options and option string, from the table: a
 * leading ':' so that a missing value is told from an unknown option.
 */
static void kv_cmdline_getopt(const struct kv_cmdline *cl, struct option *longopts,
			      char *optstring)
{
	const struct kv_opt *opt;
	unsigned int i;
	char *s = optstring;

	*s++ = ':';
	for (i = 0; i < cl->nopts; i++) {
		opt = &cl->opts[i];
		*longopts++ = (struct option){
			opt->name, opt->arg ? required_argument : no_argument, NULL,
			kv_opt_val(cl, opt),
		};
		if (opt->alias)
			*longopts++ = (struct option){
				opt->alias, opt->arg ? required_argument : no_argument, NULL,
				kv_opt_val(cl, opt),
			};
		if (!opt->key)
			continue;
		*s++ = opt->key;
		if (opt->arg)
			*s++ = ':';
	}
	*s = '\0';
	*longopts = (struct option){ NULL, 0, NULL, 0 };
}

/**
 * kv_opt_shown - how messages name an option
 * @opt: its row
 * @buf: room for "-k" or "--name"
 * @len: its size
 *
 * Return: @opt->shown if the row has one, else "-k" if it has a short
 * option, else "--name".
 */
const char *kv_opt_shown(const struct kv_opt *opt, char *buf, size_t len)
{
	if (opt->shown)
		return opt->shown;
	if (opt->key)
		snprintf(buf, len, "-%c", opt->key);
	else
		snprintf(buf, len, "--%s", opt->name);
	return buf;
}

/*
 * A refusal written in the table: @text, with "%t" the variant's name and
 * "%n" its note.
 */
static void kv_cmdline_refuse(const struct kv_cmdline *cl, const char *text)
{
	char msg[512];
	size_t n = 0;
	const char *sub;

	for (; *text && n < sizeof(msg) - 1; text++) {
		if (text[0] != '%' || (text[1] != 't' && text[1] != 'n')) {
			msg[n++] = *text;
			continue;
		}
		sub = *++text == 't' ? cl->variant : cl->note;
		n += snprintf(msg + n, sizeof(msg) - n, "%s", sub ? sub : "");
		if (n > sizeof(msg) - 1)
			n = sizeof(msg) - 1;
	}
	msg[n] = '\0';
	kv_usage_error(cl->cmd, "%s", msg);
}

/**
 * kv_cmdline_parse - read a command's options, as its table says
 * @cl: the command and its table; @cl->given is set to the options given
 * @argc: arguments, the command's name first
 * @argv: them; getopt_long() moves the ones that are not options to the
 *	end, where optind points at the first
 *
 * Each option, in the order given, is looked up in the table, refused
 * if the variant does not take it, and handed to its parser, or sets its
 * flag; -h prints @cl->usage on stdout.  An unknown option, a missing
 * value and a refusal end it.
 *
 * Return: 0, 1 when --help was printed, or -1 after a usage error was
 * printed.
 */
int kv_cmdline_parse(struct kv_cmdline *cl, int argc, char **argv)
{
	struct option longopts[2 * KV_OPTS_MAX + 1];
	char optstring[2 * KV_OPTS_MAX + 2], buf[8];
	const struct kv_opt *opt;
	int val, ret;

	kv_cmdline_getopt(cl, longopts, optstring);
	cl->given = 0;
	/* 0, not 1: also forget a group of options a previous parse left half-read. */
	optind = 0;
	opterr = 0;
	while ((val = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (val == ':') {
			kv_usage_error(cl->cmd, "option '%s' needs a value", argv[optind - 1]);
			return -1;
		}
		opt = val == '?' ? NULL : kv_opt_of(cl, val);
		if (!opt) {
			kv_usage_error(cl->cmd, "unknown option '%s'",
				       kv_bad_option(argv, optstring, buf, sizeof(buf)));
			return -1;
		}
		if (opt->key == 'h') {
			cl->usage(stdout, cl);
			return 1;
		}
		if (!kv_opt_taken(cl, opt)) {
			kv_cmdline_refuse(cl, opt->alt_when & cl->has ? opt->not_for_alt :
					  opt->not_for);
			return -1;
		}
		ret = 0;
		cl->opt = opt;
		cl->arg = optarg;
		if (opt->parse)
			ret = opt->parse(cl);
		else if (opt->flag)
			*(bool *)((char *)cl->flags + opt->flag - 1) = true;
		if (ret < 0)
			return -1;
		if (ret)
			cl->given &= ~KV_BIT(opt - cl->opts);
		else
			cl->given |= KV_BIT(opt - cl->opts);
	}
	return 0;
}

/**
 * kv_cmdline_check - refuse the options given that the table rules out
 * @cl: after kv_cmdline_parse()
 * @role: KVERBS_ROLE_CLIENT or KVERBS_ROLE_SERVER, as the command line
 *	decided (perf: an address or none); 0: the command has no roles
 *
 * In the table's order: first an option that @role does not take, then
 * two options that exclude each other, each said as the rows say it.
 *
 * Return: 0, or -1 after a usage error was printed.
 */
int kv_cmdline_check(const struct kv_cmdline *cl, int role)
{
	const struct kv_opt *opt, *other;
	char a[32], b[32];
	unsigned int i, j;

	for (i = 0; i < cl->nopts; i++) {
		opt = &cl->opts[i];
		if (!(cl->given & KV_BIT(i)) || !opt->role || !role || opt->role == role)
			continue;
		kv_usage_error(cl->cmd, "%s is for the %s%s%s", kv_opt_shown(opt, a, sizeof(a)),
			       opt->role == KVERBS_ROLE_SERVER ? "server" : "client",
			       opt->role_why ? ": " : "", opt->role_why ? opt->role_why : "");
		return -1;
	}
	for (i = 0; i < cl->nopts; i++) {
		opt = &cl->opts[i];
		if (!(cl->given & KV_BIT(i)) || !(cl->given & opt->excludes))
			continue;
		for (j = 0; !(cl->given & opt->excludes & KV_BIT(j)); j++)
			;
		other = &cl->opts[j];
		kv_usage_error(cl->cmd, "%s and %s exclude each other%s%s",
			       kv_opt_shown(opt, a, sizeof(a)), kv_opt_shown(other, b, sizeof(b)),
			       opt->excl_why ? ": " : "", opt->excl_why ? opt->excl_why : "");
		return -1;
	}
	return 0;
}

/* Whether @opt has a line in --help, and so a place in the synopsis. */
static bool kv_opt_helped(const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	return kv_opt_taken(cl, opt) && (!opt->help_takes || (opt->help_takes & cl->has)) &&
	       (opt->help || opt->help_fn);
}

/* One word of the synopsis at column @col, on a new line if it would pass 79. */
static int kv_synopsis_word(FILE *f, int indent, int col, const char *word)
{
	if (col > indent && col + 1 + (int)strlen(word) > 79) {
		fprintf(f, "\n%*s", indent, "");
		col = indent;
	}
	return col + fprintf(f, " %s", word);
}

/**
 * kv_cmdline_synopsis - the first lines of --help: "usage: kverbs CMD ..."
 * @f: where to print them
 * @cl: the command and its table
 * @before: words after the command's name, before the options, or NULL
 * @after: words after the options ("[ADDR]"), or NULL
 *
 * The options the variant takes, each as its row's .usage says, wrapped
 * within 79 columns under the first.
 */
void kv_cmdline_synopsis(FILE *f, const struct kv_cmdline *cl, const char *before,
			 const char *after)
{
	int indent = fprintf(f, "usage: %s %s", kv_prog, cl->cmd), col = indent;
	const struct kv_opt *opt;
	unsigned int i;
	char word[64];

	if (before)
		col = kv_synopsis_word(f, indent, col, before);
	for (i = 0; i < cl->nopts; i++) {
		opt = &cl->opts[i];
		if (!kv_opt_helped(cl, opt) || (opt->usage && !*opt->usage))
			continue;
		if (opt->usage)
			snprintf(word, sizeof(word), "%s", opt->usage);
		else if (opt->key)
			snprintf(word, sizeof(word), "[-%c%s%s]", opt->key, opt->arg ? " " : "",
				 opt->arg ? opt->arg : "");
		else
			snprintf(word, sizeof(word), "[--%s%s%s]", opt->name, opt->arg ? " " : "",
				 opt->arg ? opt->arg : "");
		col = kv_synopsis_word(f, indent, col, word);
	}
	if (after)
		kv_synopsis_word(f, indent, col, after);
	fputc('\n', f);
}

/**
 * kv_cmdline_head - an option's line of --help, up to its description
 * @f: where to print it
 * @cl: the command, for the column its descriptions begin in
 * @opt: the option
 * @arg: its value as shown, for one that --help shows as a number (-s 8);
 *	NULL: @opt->arg
 *
 * "  -k, --name ARG", padded to the column, or on a line of its own when
 * it reaches it.
 */
void kv_cmdline_head(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt,
		     const char *arg)
{
	int len;

	if (!arg)
		arg = opt->arg;
	if (opt->key)
		len = fprintf(f, "  -%c, ", opt->key);
	else
		len = fprintf(f, "      ");
	len += fprintf(f, "--%s%s%s%s%s", opt->name, opt->alias ? ", --" : "",
		       opt->alias ? opt->alias : "", arg ? " " : "", arg ? arg : "");
	if (len < cl->help_col)
		fprintf(f, "%*s", cl->help_col - len, "");
	else
		fprintf(f, "\n%*s", cl->help_col, "");
}

/**
 * kv_cmdline_help - the options' part of --help
 * @f: where to print it
 * @cl: the command and its table
 *
 * Each option the variant takes, in the table's order.
 */
void kv_cmdline_help(FILE *f, const struct kv_cmdline *cl)
{
	const struct kv_opt *opt;
	unsigned int i;

	for (i = 0; i < cl->nopts; i++) {
		opt = &cl->opts[i];
		if (!kv_opt_helped(cl, opt))
			continue;
		if (opt->heading)
			fputs(opt->heading, f);
		if (opt->help_fn) {
			opt->help_fn(f, cl, opt);
			continue;
		}
		kv_cmdline_head(f, cl, opt, NULL);
		fprintf(f, "%s\n", opt->help);
	}
}
