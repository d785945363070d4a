/* Unit tests for boot/cmdline: tokens, every option kind, the hypervisor's table, every message. */
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "lib/cmdline.c"
#include "lib/printk.c"

/* printk.c writes to the console; these tests use only its formatting. */
void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}

#define MAX_MSGS 8

struct msgs {
	int n;
	char m[MAX_MSGS][CMDLINE_MSG_MAX];
};

static void collect(void *ctx, const char *msg)
{
	struct msgs *c = ctx;

	if (c->n < MAX_MSGS)
		snprintf(c->m[c->n], sizeof(c->m[0]), "%s", msg);
	c->n++;
}

/* Parse line, then check the problem count, the messages (in order) and the guest arguments. */
static void parse_and_check(const struct cmdline_opt *opts, size_t nopts, const char *line,
			    const char *const *want_msgs, const char *want_args,
			    struct cmdline_parser *out)
{
	struct msgs got = { 0 };
	struct cmdline_parser p = { .opts = opts, .nopts = nopts, .report = collect, .ctx = &got };
	int want_n = 0, problems = cmdline_parse(&p, line);

	while (want_msgs[want_n])
		want_n++;
	check(problems == want_n && got.n == want_n, "'%s': %d problems, %d messages (want %d)",
	      line, problems, got.n, want_n);
	for (int i = 0; i < want_n && i < got.n && i < MAX_MSGS; i++)
		if (!check(!strcmp(got.m[i], want_msgs[i]), "'%s': %s", line, want_msgs[i]))
			printf("    got: %s\n", got.m[i]);
	if (want_args)
		check(p.args && !strcmp(p.args, want_args), "'%s': args '%s' (want '%s')", line,
		      p.args ? p.args : "(none)", want_args);
	else
		check(!p.args, "'%s': no args (got '%s')", line, p.args ? p.args : "");
	if (out)
		*out = p;
}

static void test_tokens(void)
{
	static const struct {
		const char *key, *val;
	} want[] = {
		{ "a", "b" }, { "c", NULL }, { "", "d" }, { "e", "=f" }, { "g", "" },
		{ "--", NULL }, { "x/y", NULL },
	};
	const char *pos = "  a=b \t c\n=d  e==f g= -- x/y\r\n ";
	struct cmdline_token t;
	size_t i;

	for (i = 0; cmdline_next(&pos, &t); i++) {
		if (!check(i < sizeof(want) / sizeof(want[0]), "token %zu expected", i))
			return;
		check(t.key_len == strlen(want[i].key) && !strncmp(t.key, want[i].key, t.key_len),
		      "token %zu key '%.*s' (want '%s')", i, (int)t.key_len, t.key, want[i].key);
		if (want[i].val)
			check(t.val && t.val_len == strlen(want[i].val) &&
			      !strncmp(t.val, want[i].val, t.val_len),
			      "token %zu value '%.*s' (want '%s')", i, (int)t.val_len,
			      t.val ? t.val : "", want[i].val);
		else
			check(!t.val, "token %zu has no value", i);
	}
	check(i == sizeof(want) / sizeof(want[0]), "%zu tokens", i);
	check(*pos == '\0', "position at the end after the last token");
	pos = "";
	check(!cmdline_next(&pos, &t), "no token in an empty string");
}

/* The hypervisor's own table, as the lead will write it. */
static const char *const console_words[] = { "serial", "e9", "both", NULL };
static const char *const pmu_words[] = { "arch", "soft", "off", "auto", NULL };
static const char *const migrate_words[] = { "none", "random", NULL };

struct hv_opts {
	uint64_t loglevel, slice, seed;
	unsigned console, pmu, migrate;
};

static const struct hv_opts hv_defaults = { 4, 10000, 1, 0, 3, 0 };

static void test_hv_table(void)
{
	static const struct {
		const char *line;
		struct hv_opts want;
		const char *args;
		const char *msgs[4];
	} cases[] = {
		{ "", { 4, 10000, 1, 0, 3, 0 }, NULL, { NULL } },
		{ "/boot/perfvisor.elf loglevel=7 console=both pmu=soft slice=500 migrate=random "
		  "seed=42",
		  { 7, 500, 42, 2, 1, 1 }, NULL, { NULL } },
		{ "loglevel=0 console=e9 pmu=arch slice=100 seed=0", { 0, 100, 0, 1, 0, 0 }, NULL,
		  { NULL } },
		{ "pmu=off slice=1000000 seed=0xFFFFFFFFFFFFFFFF",
		  { 4, 1000000, UINT64_MAX, 0, 2, 0 }, NULL, { NULL } },
		{ "\tloglevel=6\n pmu=auto\r\n", { 6, 10000, 1, 0, 3, 0 }, NULL, { NULL } },
		{ "loglevel=8", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '8' for 'loglevel' (expected 0..7), using 4", NULL } },
		{ "loglevel=x", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value 'x' for 'loglevel' (expected 0..7), using 4", NULL } },
		{ "loglevel=", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '' for 'loglevel' (expected 0..7), using 4", NULL } },
		{ "loglevel", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "missing value for 'loglevel' (expected 0..7), using 4", NULL } },
		{ "loglevel=5=6 loglevel=-1", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '5=6' for 'loglevel' (expected 0..7), using 4",
		    "option 'loglevel' given more than once, the last one counts",
		    "bad value '-1' for 'loglevel' (expected 0..7), using 4", NULL } },
		{ "foo=1 bar loglevel=2", { 2, 10000, 1, 0, 3, 0 }, NULL,
		  { "unknown option 'foo' ignored", "unknown option 'bar' ignored", NULL } },
		{ "console=vga", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value 'vga' for 'console' (expected serial|e9|both), using serial",
		    NULL } },
		{ "console=e9 console=serial,e9", { 4, 10000, 1, 1, 3, 0 }, NULL,
		  { "option 'console' given more than once, the last one counts",
		    "bad value 'serial,e9' for 'console' (expected serial|e9|both), using e9",
		    NULL } },
		{ "pmu=Arch", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value 'Arch' for 'pmu' (expected arch|soft|off|auto), using auto",
		    NULL } },
		{ "slice=99", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '99' for 'slice' (expected 100..1000000), using 10000", NULL } },
		{ "slice=1000001", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '1000001' for 'slice' (expected 100..1000000), using 10000",
		    NULL } },
		{ "slice=1M", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '1M' for 'slice' (expected 100..1000000), using 10000", NULL } },
		{ "migrate=rand", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value 'rand' for 'migrate' (expected none|random), using none", NULL } },
		{ "seed=18446744073709551616", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '18446744073709551616' for 'seed' "
		    "(expected 0..18446744073709551615), using 1", NULL } },
		{ "seed=0x", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '0x' for 'seed' (expected 0..18446744073709551615), using 1",
		    NULL } },
		{ "seed=0x1_0", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '0x1_0' for 'seed' (expected 0..18446744073709551615), using 1",
		    NULL } },
		{ "loglevel=1 loglevel=5", { 5, 10000, 1, 0, 3, 0 }, NULL,
		  { "option 'loglevel' given more than once, the last one counts", NULL } },
		{ "loglevel=3 -- loglevel=7 foo", { 3, 10000, 1, 0, 3, 0 }, "loglevel=7 foo",
		  { NULL } },
		{ "--", { 4, 10000, 1, 0, 3, 0 }, "", { NULL } },
		{ "/boot/perfvisor -- a", { 4, 10000, 1, 0, 3, 0 }, "a", { NULL } },
		{ "seed=2 --   a  b ", { 4, 10000, 2, 0, 3, 0 }, "a  b ", { NULL } },
		{ "--x -x", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "unknown option '--x' ignored", "unknown option '-x' ignored", NULL } },
		{ "loglevel=2 /boot/perfvisor", { 2, 10000, 1, 0, 3, 0 }, NULL,
		  { "unknown option '/boot/perfvisor' ignored", NULL } },
		{ "a/b=1 c/d", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "unknown option 'a/b' ignored", "unknown option 'c/d' ignored", NULL } },
		{ "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1", { 4, 10000, 1, 0, 3, 0 },
		  NULL, { "unknown option 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' ignored",
			  NULL } },
		{ "slice=11111111112222222222333333333344444444445", { 4, 10000, 1, 0, 3, 0 }, NULL,
		  { "bad value '1111111111222222222233333333334444444444...' for 'slice' "
		    "(expected 100..1000000), using 10000", NULL } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hv_opts v = hv_defaults;
		const struct cmdline_opt opts[] = {
			{ .name = "loglevel", .kind = CMDLINE_UINT, .dest = &v.loglevel, .max = 7 },
			{ .name = "console", .kind = CMDLINE_ENUM, .dest = &v.console,
			  .words = console_words },
			{ .name = "pmu", .kind = CMDLINE_ENUM, .dest = &v.pmu, .words = pmu_words },
			{ .name = "slice", .kind = CMDLINE_UINT, .dest = &v.slice, .min = 100,
			  .max = 1000000 },
			{ .name = "migrate", .kind = CMDLINE_ENUM, .dest = &v.migrate,
			  .words = migrate_words },
			{ .name = "seed", .kind = CMDLINE_UINT, .dest = &v.seed,
			  .max = UINT64_MAX },
		};
		const struct hv_opts *w = &cases[i].want;

		parse_and_check(opts, 6, cases[i].line, cases[i].msgs, cases[i].args, NULL);
		check(v.loglevel == w->loglevel && v.slice == w->slice && v.seed == w->seed &&
		      v.console == w->console && v.pmu == w->pmu && v.migrate == w->migrate,
		      "'%s': values %lu %lu %lu %u %u %u", cases[i].line, v.loglevel, v.slice,
		      v.seed, v.console, v.pmu, v.migrate);
	}
}

static const char *const ev_words[] = { "cycles", "instructions", "llc_misses", NULL };

/* Every other kind, a fatal option and an expectation override; one option per case. */
struct vals {
	bool quiet;
	uint64_t heap, ev, n;
	char label[9], id[5];
	struct cmdline_list cpus, pins;
};

static void fill_table(struct vals *v, struct cmdline_opt opts[8])
{
	const struct cmdline_opt t[8] = {
		{ .name = "quiet", .kind = CMDLINE_BOOL, .dest = &v->quiet },
		{ .name = "heap", .kind = CMDLINE_UINT, .dest = &v->heap, .min = 4096,
		  .max = 1ull << 30, .align = 4096, .suffix = true },
		{ .name = "label", .kind = CMDLINE_STR, .dest = v->label, .max = 8 },
		{ .name = "id", .kind = CMDLINE_STR, .dest = v->id, .min = 2, .max = 4,
		  .chars = "abc", .expect = "2..4 of a b c" },
		{ .name = "cpus", .kind = CMDLINE_LIST, .dest = &v->cpus, .max = 100 },
		{ .name = "pins", .kind = CMDLINE_LIST, .dest = &v->pins, .min = 2, .max = 5 },
		{ .name = "ev", .kind = CMDLINE_SET, .dest = &v->ev, .words = ev_words },
		{ .name = "n", .kind = CMDLINE_UINT, .dest = &v->n, .min = 1, .max = 8,
		  .fatal = true },
	};

	memcpy(opts, t, sizeof(t));
}

static void reset(struct vals *v)
{
	memset(v, 0, sizeof(*v));
	v->heap = 1 << 20;
	strcpy(v->label, "x");
	strcpy(v->id, "ab");
	v->pins.count = 2;
	v->pins.v[0] = 2;
	v->pins.v[1] = 3;
	v->ev = 2;
	v->n = 1;
}

static void test_kinds(void)
{
	static const struct {
		const char *line;
		const char *want;	/* the resulting value, shown as describe_value() does */
		unsigned fatal;
		const char *msgs[4];
	} cases[] = {
		{ "quiet", "on", 0, { NULL } },
		{ "quiet=0", "off", 0, { NULL } },
		{ "quiet=1", "on", 0, { NULL } },
		{ "quiet=yes", "on", 0, { NULL } },
		{ "quiet=off", "off", 0, { NULL } },
		{ "quiet=true", "on", 0, { NULL } },
		{ "quiet=false", "off", 0, { NULL } },
		{ "quiet=maybe", "off", 0,
		  { "bad value 'maybe' for 'quiet' (expected on|off), using off" } },
		{ "quiet=", "off", 0, { "bad value '' for 'quiet' (expected on|off), using off" } },
		{ "heap=16M", "16M", 0, { NULL } },
		{ "heap=16m", "16M", 0, { NULL } },
		{ "heap=2048k", "2M", 0, { NULL } },
		{ "heap=1G", "1G", 0, { NULL } },
		{ "heap=0x3000", "12K", 0, { NULL } },
		{ "heap=4K", "4K", 0, { NULL } },
		{ "heap=5000", "1M", 0,
		  { "bad value '5000' for 'heap' (expected 4K..1G, a multiple of 4K), using 1M" } },
		{ "heap=2K", "1M", 0,
		  { "bad value '2K' for 'heap' (expected 4K..1G, a multiple of 4K), using 1M" } },
		{ "heap=2G", "1M", 0,
		  { "bad value '2G' for 'heap' (expected 4K..1G, a multiple of 4K), using 1M" } },
		{ "heap=16MM", "1M", 0,
		  { "bad value '16MM' for 'heap' (expected 4K..1G, a multiple of 4K), using 1M" } },
		{ "heap=M", "1M", 0,
		  { "bad value 'M' for 'heap' (expected 4K..1G, a multiple of 4K), using 1M" } },
		{ "heap=16T", "1M", 0,
		  { "bad value '16T' for 'heap' (expected 4K..1G, a multiple of 4K), using 1M" } },
		{ "heap=17179869185G", "1M", 0,
		  { "bad value '17179869185G' for 'heap' (expected 4K..1G, a multiple of 4K), "
		    "using 1M" } },
		{ "label=abc", "'abc'", 0, { NULL } },
		{ "label=", "''", 0, { NULL } },
		{ "label=12345678", "'12345678'", 0, { NULL } },
		{ "label=123456789", "'x'", 0,
		  { "bad value '123456789' for 'label' (expected 0..8 characters), using 'x'" } },
		{ "id=cab", "'cab'", 0, { NULL } },
		{ "id=abd", "'ab'", 0,
		  { "bad value 'abd' for 'id' (expected 2..4 of a b c), using 'ab'" } },
		{ "id=a", "'ab'", 0,
		  { "bad value 'a' for 'id' (expected 2..4 of a b c), using 'ab'" } },
		{ "cpus=0,1", "0,1", 0, { NULL } },
		{ "cpus=0-3", "0,1,2,3", 0, { NULL } },
		{ "cpus=0-2,6,6", "0,1,2,6,6", 0, { NULL } },
		{ "cpus=5-5,100", "5,100", 0, { NULL } },
		{ "cpus=3-1", "none", 0,
		  { "bad value '3-1' for 'cpus' (expected a list like 0,2-3 of numbers in 0..100), "
		    "using none" } },
		{ "cpus=0,,1", "none", 0,
		  { "bad value '0,,1' for 'cpus' (expected a list like 0,2-3 of numbers in "
		    "0..100), using none" } },
		{ "cpus=101", "none", 0,
		  { "bad value '101' for 'cpus' (expected a list like 0,2-3 of numbers in 0..100), "
		    "using none" } },
		{ "cpus=1,", "none", 0,
		  { "bad value '1,' for 'cpus' (expected a list like 0,2-3 of numbers in 0..100), "
		    "using none" } },
		{ "cpus=1-", "none", 0,
		  { "bad value '1-' for 'cpus' (expected a list like 0,2-3 of numbers in 0..100), "
		    "using none" } },
		{ "cpus=-1", "none", 0,
		  { "bad value '-1' for 'cpus' (expected a list like 0,2-3 of numbers in 0..100), "
		    "using none" } },
		{ "cpus=1-2-3", "none", 0,
		  { "bad value '1-2-3' for 'cpus' (expected a list like 0,2-3 of numbers in "
		    "0..100), using none" } },
		{ "cpus=", "none", 0,
		  { "bad value '' for 'cpus' (expected a list like 0,2-3 of numbers in 0..100), "
		    "using none" } },
		{ "cpus=0-64", "none", 0,
		  { "bad value '0-64' for 'cpus' (expected a list like 0,2-3 of numbers in "
		    "0..100), using none" } },
		{ "cpus=0-59,1-4,99", "none", 0,
		  { "bad value '0-59,1-4,99' for 'cpus' (expected a list like 0,2-3 of numbers in "
		    "0..100), using none" } },
		{ "pins=1", "2,3", 0,
		  { "bad value '1' for 'pins' (expected a list like 0,2-3 of numbers in 2..5), "
		    "using 2,3" } },
		{ "pins=4-6", "2,3", 0,
		  { "bad value '4-6' for 'pins' (expected a list like 0,2-3 of numbers in 2..5), "
		    "using 2,3" } },
		{ "ev=cycles,llc_misses", "cycles,llc_misses", 0, { NULL } },
		{ "ev=llc_misses,cycles,cycles", "cycles,llc_misses", 0, { NULL } },
		{ "ev=cycles,foo", "instructions", 0,
		  { "bad value 'cycles,foo' for 'ev' (expected a comma list of "
		    "cycles|instructions|llc_misses), using instructions" } },
		{ "ev=cycles,", "instructions", 0,
		  { "bad value 'cycles,' for 'ev' (expected a comma list of "
		    "cycles|instructions|llc_misses), using instructions" } },
		{ "ev=cycle", "instructions", 0,
		  { "bad value 'cycle' for 'ev' (expected a comma list of "
		    "cycles|instructions|llc_misses), using instructions" } },
		{ "n=8", "8", 0, { NULL } },
		{ "n=abc", "1", 1, { "bad value 'abc' for 'n' (expected 1..8)" } },
		{ "n", "1", 1, { "missing value for 'n' (expected 1..8)" } },
		{ "n=9 n=0", "1", 2,
		  { "bad value '9' for 'n' (expected 1..8)",
		    "option 'n' given more than once, the last one counts",
		    "bad value '0' for 'n' (expected 1..8)" } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmdline_opt opts[8];
		struct cmdline_parser p;
		const struct cmdline_opt *o = NULL;
		char got[CMDLINE_MSG_MAX];
		struct vals v;

		reset(&v);
		fill_table(&v, opts);
		for (size_t k = 0; k < 8; k++)
			if (!strncmp(cases[i].line, opts[k].name, strlen(opts[k].name)))
				o = &opts[k];
		parse_and_check(opts, 8, cases[i].line, cases[i].msgs, NULL, &p);
		check(p.fatal == cases[i].fatal, "'%s': %u fatal (want %u)", cases[i].line, p.fatal,
		      cases[i].fatal);
		describe_value(o, got, sizeof(got));
		check(!strcmp(got, cases[i].want), "'%s': value %s (want %s)", cases[i].line, got,
		      cases[i].want);
	}
}

static void test_no_reporter(void)
{
	uint64_t level = 4;
	const struct cmdline_opt opt = { .name = "loglevel", .kind = CMDLINE_UINT, .dest = &level,
					 .max = 7 };
	struct cmdline_parser p = { .opts = &opt, .nopts = 1 };

	check(cmdline_parse(&p, "foo loglevel=9 loglevel=3") == 3 && level == 3,
	      "without a reporter problems are still counted and values still set");
}

int main(void)
{
	test_tokens();
	test_hv_table();
	test_kinds();
	test_no_reporter();
	return unit_summary();
}
