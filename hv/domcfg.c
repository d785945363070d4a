/* One domain's configuration from its module string, through the boot/cmdline option parser. */
#include <stdarg.h>
#include <stdbool.h>

#include "lib/cmdline.h"
#include "lib/printk.h"
#include "lib/string.h"
#include "hv/domcfg.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define NAME_CHARS	"abcdefghijklmnopqrstuvwxyz0123456789_-"
#define NAME_EXPECT	"1..15 characters of a-z 0-9 _ -"

static const char *const acct_words[] = { "guest", "vcpu", "hybrid", NULL };
static const char *const tsc_words[] = { "vcpu", "host", NULL };

/* Puts "domain <index> (<name>): " in front of every message. */
struct dom_reporter {
	void (*report)(void *ctx, const char *msg);
	void *ctx;
	char prefix[48];
};

static void prefixed(void *ctx, const char *msg)
{
	struct dom_reporter *r = ctx;
	char line[sizeof(r->prefix) + CMDLINE_MSG_MAX];

	snprintk(line, sizeof(line), "%s%s", r->prefix, msg);
	r->report(r->ctx, line);
}

__attribute__((format(printf, 2, 3)))
static void dom_say(struct dom_reporter *r, const char *fmt, ...)
{
	char msg[CMDLINE_MSG_MAX];
	va_list ap;

	if (!r->report)
		return;
	va_start(ap, fmt);
	vsnprintk(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	prefixed(r, msg);
}

enum dom_verdict dom_config_parse(unsigned index, const char *modstr, unsigned npcpus,
				  const char *const *event_names,
				  void (*report)(void *ctx, const char *msg), void *ctx,
				  struct dom_config *cfg)
{
	uint64_t vcpus = 1, mem = DOM_MEM_DEFAULT;
	unsigned acct = DOM_ACCT_GUEST, tsc = DOM_TSC_VCPU, fatal;
	struct cmdline_list pin = { 0 };
	struct dom_reporter r = { report, ctx, "" };
	/* Bad resources or measurement semantics are fatal: a default would mislead. */
	const struct cmdline_opt opts[] = {
		{ .name = "name", .kind = CMDLINE_STR, .dest = cfg->name, .min = 1,
		  .max = DOM_NAME_MAX, .chars = NAME_CHARS, .expect = NAME_EXPECT },
		{ .name = "vcpus", .kind = CMDLINE_UINT, .dest = &vcpus, .min = 1,
		  .max = DOM_VCPUS_MAX, .fatal = true },
		{ .name = "mem", .kind = CMDLINE_UINT, .dest = &mem, .min = DOM_MEM_MIN,
		  .max = DOM_MEM_MAX, .align = DOM_MEM_ALIGN, .suffix = true, .fatal = true },
		{ .name = "pin", .kind = CMDLINE_LIST, .dest = &pin, .max = npcpus - 1,
		  .fatal = true },
		{ .name = "acct", .kind = CMDLINE_ENUM, .dest = &acct, .words = acct_words,
		  .fatal = true },
		{ .name = "tsc", .kind = CMDLINE_ENUM, .dest = &tsc, .words = tsc_words,
		  .fatal = true },
		{ .name = "x2apic", .kind = CMDLINE_BOOL, .dest = &cfg->x2apic, .fatal = true },
		{ .name = "events", .kind = CMDLINE_SET, .dest = &cfg->events,
		  .words = event_names, .fatal = true },
		{ .name = "timeout", .kind = CMDLINE_UINT, .dest = &cfg->timeout_ms, .min = 1,
		  .max = 86400000, .fatal = true },
		{ .name = "initrd", .kind = CMDLINE_STR, .dest = cfg->initrd, .min = 1,
		  .max = DOM_NAME_MAX, .chars = NAME_CHARS, .expect = NAME_EXPECT, .fatal = true },
		{ .name = "testdev", .kind = CMDLINE_BOOL, .dest = &cfg->testdev, .fatal = true },
	};
	/* A silent first pass finds the name, so that every message can carry it. */
	struct cmdline_parser p = { .opts = opts, .nopts = 1 };
	int problems;

	__builtin_memset(cfg, 0, sizeof(*cfg));
	cfg->x2apic = true;
	snprintk(cfg->name, sizeof(cfg->name), "dom%u", index);
	cmdline_parse(&p, modstr);
	snprintk(r.prefix, sizeof(r.prefix), "domain %u (%s): ", index, cfg->name);

	p = (struct cmdline_parser){ .opts = opts, .nopts = ARRAY_SIZE(opts),
				     .report = report ? prefixed : NULL, .ctx = &r };
	problems = cmdline_parse(&p, modstr);
	fatal = p.fatal;
	/* One PCPU for all VCPUs, or one each; a bad vcpus= already stopped the domain. */
	if (!fatal && pin.count > 1 && pin.count != vcpus) {
		if (vcpus == 1)
			dom_say(&r, "'pin' lists %u PCPUs for 1 VCPU (expected 1)", pin.count);
		else
			dom_say(&r, "'pin' lists %u PCPUs for %u VCPUs (expected 1 or %u)",
				pin.count, (unsigned)vcpus, (unsigned)vcpus);
		fatal++;
	}
	/* Module strings stay where the loader put them: the arguments need no copy, no limit. */
	cfg->args = p.args ? p.args : "";

	cfg->vcpus = (unsigned)vcpus;
	cfg->mem = mem;
	cfg->acct = (enum dom_acct)acct;
	cfg->tsc = (enum dom_tsc)tsc;
	if (fatal) {
		dom_say(&r, "not started");
		return DOM_CFG_FATAL;
	}
	cfg->npin = pin.count;
	__builtin_memcpy(cfg->pin, pin.v, pin.count * sizeof(pin.v[0]));
	return problems ? DOM_CFG_WARN : DOM_CFG_OK;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int dom_config_data(const char *modstr, char name[DOM_NAME_MAX + 1])
{
	const struct cmdline_opt opt = { .name = "data", .kind = CMDLINE_STR, .dest = name,
					 .min = 1, .max = DOM_NAME_MAX, .chars = NAME_CHARS };
	struct cmdline_parser p = { .opts = &opt, .nopts = 1 };
	const char *w = skip_blanks(modstr), *end = w;
	bool slash = false, equals = false;

	/* The first word may be the image's path, skipped as the parser skips it (lib/cmdline.h). */
	for (; *end && *end != ' ' && *end != '\t'; end++) {
		slash |= *end == '/';
		equals |= *end == '=';
	}
	if (slash && !equals)
		w = skip_blanks(end);
	if (strncmp(w, "data=", 5))
		return 0;
	name[0] = '\0';
	/* Any other word, an argument list or a bad name is a problem the parser counts. */
	return cmdline_parse(&p, modstr) || p.args || !name[0] ? -1 : 1;
}
