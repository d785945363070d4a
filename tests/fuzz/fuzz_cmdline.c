/* Fuzz target for lib/cmdline.c: cmdline_parse() with the hypervisor's options and every kind. */
#include "lib/cmdline.c"
#include "lib/multiboot.h"
#define FZ_PRINTK
#include "tests/fuzz/fakes.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const console_words[] = { "serial", "e9", "both", NULL };
static const char *const migrate_words[] = { "none", "random", NULL };
static const char *const pmu_words[] = { "auto", "arch", "soft", "off", NULL };
/* 64 words: the most a CMDLINE_SET takes. */
static const char *const set_words[] = {
	"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "b0", "b1", "b2", "b3", "b4", "b5", "b6",
	"b7", "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "d0", "d1", "d2", "d3", "d4", "d5",
	"d6", "d7", "e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "f0", "f1", "f2", "f3", "f4",
	"f5", "f6", "f7", "g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "h0", "h1", "h2", "h3",
	"h4", "h5", "h6", "h7", NULL,
};

static uint64_t loglevel, slice, cpus, seed, size;
static unsigned console, migrate, pmu;
static bool verbose;
static char label[9], word[CMDLINE_MSG_MAX];
static struct cmdline_list list;
static uint64_t set;

/* boot/main.c's table (same kinds, ranges and defaults), then one option of each other kind. */
static const struct cmdline_opt opts[] = {
	{ .name = "loglevel", .kind = CMDLINE_UINT, .dest = &loglevel, .min = 0, .max = 7 },
	{ .name = "console", .kind = CMDLINE_ENUM, .dest = &console, .words = console_words },
	{ .name = "slice", .kind = CMDLINE_UINT, .dest = &slice, .min = 100, .max = 1000000 },
	{ .name = "migrate", .kind = CMDLINE_ENUM, .dest = &migrate, .words = migrate_words },
	{ .name = "pmu", .kind = CMDLINE_ENUM, .dest = &pmu, .words = pmu_words },
	{ .name = "cpus", .kind = CMDLINE_UINT, .dest = &cpus, .min = 1, .max = 8 },
	{ .name = "seed", .kind = CMDLINE_UINT, .dest = &seed, .min = 0, .max = UINT64_MAX },
	{ .name = "size", .kind = CMDLINE_UINT, .dest = &size, .min = 4096, .max = 1ull << 40,
	  .align = 4096, .suffix = true, .fatal = true },
	{ .name = "verbose", .kind = CMDLINE_BOOL, .dest = &verbose },
	{ .name = "label", .kind = CMDLINE_STR, .dest = label, .min = 1, .max = sizeof(label) - 1,
	  .chars = "abcdefghijklmnopqrstuvwxyz-" },
	{ .name = "word", .kind = CMDLINE_STR, .dest = word, .min = 0, .max = sizeof(word) - 1 },
	{ .name = "list", .kind = CMDLINE_LIST, .dest = &list, .min = 2, .max = 200 },
	{ .name = "set", .kind = CMDLINE_SET, .dest = &set, .words = set_words, .fatal = true },
};

static unsigned reports;

static void report(void *ctx, const char *msg)
{
	(void)ctx;
	FZ_CHECK(fz_terminated(msg, CMDLINE_MSG_MAX), "message longer than CMDLINE_MSG_MAX");
	FZ_CHECK(msg[0], "empty message");
	reports++;
}

/* Every value is its default or one the option allows. */
static void check_values(void)
{
	FZ_CHECK(loglevel <= 7 && console < 3 && migrate < 2 && pmu < 4, "enums");
	FZ_CHECK(slice >= 100 && slice <= 1000000 && cpus >= 1 && cpus <= 8, "ranges");
	FZ_CHECK(size >= 4096 && size <= 1ull << 40 && size % 4096 == 0, "size %llu",
		 (unsigned long long)size);
	FZ_CHECK(fz_terminated(label, sizeof(label)) && strlen(label) >= 1 &&
		 strspn(label, "abcdefghijklmnopqrstuvwxyz-") == strlen(label), "label %s", label);
	FZ_CHECK(fz_terminated(word, sizeof(word)), "word");
	FZ_CHECK(list.count <= CMDLINE_LIST_MAX, "list count %u", list.count);
	for (unsigned i = 0; i < list.count; i++)
		FZ_CHECK(list.v[i] >= 2 && list.v[i] <= 200, "list value %u", list.v[i]);
}

/*
 * Input: the line, cut at its first NUL and at the longest command line multiboot.c accepts;
 * the options start at their defaults every run.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct fz in = { data, n < MB_CMDLINE_MAX ? n : MB_CMDLINE_MAX - 1 };
	char *line = fz_string(&in);
	size_t len = strlen(line);
	struct cmdline_parser p = { .opts = opts, .nopts = N(opts), .report = report };
	int problems;

	loglevel = 4;
	slice = 10000;
	cpus = 8;
	seed = 0;
	size = 1 << 20;
	console = 2;
	migrate = pmu = 0;
	verbose = false;
	strcpy(label, "x");
	word[0] = '\0';
	list = (struct cmdline_list){ .count = 1, .v = { 2 } };
	set = 0;
	reports = 0;

	problems = cmdline_parse(&p, line);
	FZ_CHECK(problems >= 0 && (unsigned)problems == reports, "%d problems, %u messages",
		 problems, reports);
	FZ_CHECK(p.fatal <= reports, "fatal %u", p.fatal);
	FZ_CHECK(!p.args || (p.args >= line && p.args <= line + len), "args outside the line");
	check_values();
	fz_free(line, 1);
	return 0;
}
