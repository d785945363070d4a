/* Unit tests for hv/domcfg: defaults, every key, fatal versus warning verdicts, every message. */
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "lib/cmdline.c"
#include "lib/printk.c"
#include "hv/domcfg.c"

/* printk.c writes to the console; these tests use only its formatting. */
void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}

#define MAX_MSGS 6
#define N(a)	(sizeof(a) / sizeof((a)[0]))

struct msgs {
	int n;
	char m[MAX_MSGS][256];
};

static void collect(void *ctx, const char *msg)
{
	struct msgs *c = ctx;

	if (c->n < MAX_MSGS)
		snprintf(c->m[c->n], sizeof(c->m[0]), "%s", msg);
	c->n++;
}

static const char *const events[] = { "cycles", "instructions", "branch_misses", NULL };

#define MIB (1ull << 20)

struct want {
	const char *name;
	unsigned vcpus;
	uint64_t mem;
	unsigned npin;
	uint32_t pin[DOM_VCPUS_MAX];
	enum dom_acct acct;
	enum dom_tsc tsc;
	uint64_t events;
	const char *args;
};

static const struct {
	unsigned index, npcpus;
	const char *modstr;
	enum dom_verdict verdict;
	struct want want;	/* checked unless the verdict is fatal */
	const char *msgs[MAX_MSGS];
} cases[] = {
	{ 3, 2, "", DOM_CFG_OK,
	  { "dom3", 1, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" }, { NULL } },
	{ 0, 2, "/boot/guest.elf", DOM_CFG_OK,
	  { "dom0", 1, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" }, { NULL } },
	{ 2, 2, "/boot/guest.elf name=web vcpus=2 mem=64M pin=0,1 acct=hybrid tsc=host "
		"events=cycles,branch_misses -- mode=loop  n=5", DOM_CFG_OK,
	  { "web", 2, 64 * MIB, 2, { 0, 1 }, DOM_ACCT_HYBRID, DOM_TSC_HOST, 5, "mode=loop  n=5" },
	  { NULL } },
	{ 1, 4, "vcpus=8 pin=3 mem=1G acct=vcpu name=a-b_9", DOM_CFG_OK,
	  { "a-b_9", 8, 1024 * MIB, 1, { 3 }, DOM_ACCT_VCPU, DOM_TSC_VCPU, 0, "" }, { NULL } },
	{ 1, 4, "vcpus=4 pin=0-3 mem=2M name=abcdefghijklmno", DOM_CFG_OK,
	  { "abcdefghijklmno", 4, 2 * MIB, 4, { 0, 1, 2, 3 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" },
	  { NULL } },
	{ 1, 2, "mem=0x400000 events=instructions --", DOM_CFG_OK,
	  { "dom1", 1, 4 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 2, "" }, { NULL } },
	/* Warnings: the domain starts. */
	{ 2, 2, "name=web mode=loop", DOM_CFG_WARN,
	  { "web", 1, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" },
	  { "domain 2 (web): unknown option 'mode' ignored", NULL } },
	{ 2, 2, "name=Web!", DOM_CFG_WARN,
	  { "dom2", 1, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" },
	  { "domain 2 (dom2): bad value 'Web!' for 'name' (expected 1..15 characters of "
	    "a-z 0-9 _ -), using 'dom2'", NULL } },
	{ 5, 2, "name=abcdefghijklmnop", DOM_CFG_WARN,
	  { "dom5", 1, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" },
	  { "domain 5 (dom5): bad value 'abcdefghijklmnop' for 'name' (expected 1..15 characters "
	    "of a-z 0-9 _ -), using 'dom5'", NULL } },
	{ 5, 2, "name=", DOM_CFG_WARN,
	  { "dom5", 1, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" },
	  { "domain 5 (dom5): bad value '' for 'name' (expected 1..15 characters of a-z 0-9 _ -), "
	    "using 'dom5'", NULL } },
	{ 0, 2, "name=a vcpus=2 name=b", DOM_CFG_WARN,
	  { "b", 2, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" },
	  { "domain 0 (b): option 'name' given more than once, the last one counts", NULL } },
	{ 0, 2, "vcpus=2 vcpus=1 quiet", DOM_CFG_WARN,
	  { "dom0", 1, 16 * MIB, 0, { 0 }, DOM_ACCT_GUEST, DOM_TSC_VCPU, 0, "" },
	  { "domain 0 (dom0): option 'vcpus' given more than once, the last one counts",
	    "domain 0 (dom0): unknown option 'quiet' ignored", NULL } },
	/* Fatal: the domain does not start. */
	{ 2, 2, "name=web vcpus=abc", DOM_CFG_FATAL, { NULL },
	  { "domain 2 (web): bad value 'abc' for 'vcpus' (expected 1..8)",
	    "domain 2 (web): not started", NULL } },
	{ 2, 2, "vcpus=0 name=web", DOM_CFG_FATAL, { NULL },
	  { "domain 2 (web): bad value '0' for 'vcpus' (expected 1..8)",
	    "domain 2 (web): not started", NULL } },
	{ 2, 2, "vcpus=9", DOM_CFG_FATAL, { NULL },
	  { "domain 2 (dom2): bad value '9' for 'vcpus' (expected 1..8)",
	    "domain 2 (dom2): not started", NULL } },
	{ 2, 2, "vcpus", DOM_CFG_FATAL, { NULL },
	  { "domain 2 (dom2): missing value for 'vcpus' (expected 1..8)",
	    "domain 2 (dom2): not started", NULL } },
	{ 0, 2, "mem=3M", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value '3M' for 'mem' (expected 2M..1G, a multiple of 2M)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 2, "mem=1M", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value '1M' for 'mem' (expected 2M..1G, a multiple of 2M)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 2, "mem=1026M", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value '1026M' for 'mem' (expected 2M..1G, a multiple of 2M)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 2, "mem=16", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value '16' for 'mem' (expected 2M..1G, a multiple of 2M)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 2, "pin=2", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value '2' for 'pin' (expected a list like 0,2-3 of numbers in "
	    "0..1)", "domain 0 (dom0): not started", NULL } },
	{ 0, 1, "pin=0,1", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value '0,1' for 'pin' (expected a list like 0,2-3 of numbers in "
	    "0..0)", "domain 0 (dom0): not started", NULL } },
	{ 0, 4, "vcpus=2 pin=0,1,2", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): 'pin' lists 3 PCPUs for 2 VCPUs (expected 1 or 2)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 4, "pin=0,1", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): 'pin' lists 2 PCPUs for 1 VCPU (expected 1)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 4, "pin=", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value '' for 'pin' (expected a list like 0,2-3 of numbers in "
	    "0..3)", "domain 0 (dom0): not started", NULL } },
	{ 0, 2, "acct=host", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value 'host' for 'acct' (expected guest|vcpu|hybrid)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 2, "tsc=guest", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value 'guest' for 'tsc' (expected vcpu|host)",
	    "domain 0 (dom0): not started", NULL } },
	{ 0, 2, "events=cycles,llc", DOM_CFG_FATAL, { NULL },
	  { "domain 0 (dom0): bad value 'cycles,llc' for 'events' (expected a comma list of "
	    "cycles|instructions|branch_misses)", "domain 0 (dom0): not started", NULL } },
	{ 7, 2, "name=db vcpus=x mem=3M foo", DOM_CFG_FATAL, { NULL },
	  { "domain 7 (db): bad value 'x' for 'vcpus' (expected 1..8)",
	    "domain 7 (db): bad value '3M' for 'mem' (expected 2M..1G, a multiple of 2M)",
	    "domain 7 (db): unknown option 'foo' ignored", "domain 7 (db): not started", NULL } },
};

static void check_config(size_t i, const struct dom_config *c, const struct want *w)
{
	check(!strcmp(c->name, w->name) && c->vcpus == w->vcpus && c->mem == w->mem &&
	      c->npin == w->npin && !memcmp(c->pin, w->pin, sizeof(c->pin)) &&
	      c->acct == w->acct && c->tsc == w->tsc && c->events == w->events &&
	      !strcmp(c->args, w->args),
	      "case %zu: config %s vcpus=%u mem=%lu npin=%u acct=%d tsc=%d events=%lx args='%s'",
	      i, c->name, c->vcpus, c->mem, c->npin, c->acct, c->tsc, c->events, c->args);
}

static void test_cases(void)
{
	for (size_t i = 0; i < N(cases); i++) {
		struct msgs got = { 0 };
		struct dom_config cfg;
		enum dom_verdict v;
		int want_n = 0;

		memset(&cfg, 0xa5, sizeof(cfg));
		v = dom_config_parse(cases[i].index, cases[i].modstr, cases[i].npcpus, events,
				     collect, &got, &cfg);
		check(v == cases[i].verdict, "'%s': verdict %d (want %d)", cases[i].modstr, v,
		      cases[i].verdict);
		while (cases[i].msgs[want_n])
			want_n++;
		check(got.n == want_n, "'%s': %d messages (want %d)", cases[i].modstr, got.n,
		      want_n);
		for (int k = 0; k < want_n && k < got.n; k++)
			if (!check(!strcmp(got.m[k], cases[i].msgs[k]), "'%s': %s", cases[i].modstr,
				   cases[i].msgs[k]))
				printf("    got: %s\n", got.m[k]);
		if (cases[i].verdict != DOM_CFG_FATAL)
			check_config(i, &cfg, &cases[i].want);
	}
}

static void test_edges(void)
{
	static char long_args[12 + 20000 + 1];
	struct msgs got = { 0 };
	struct dom_config cfg;
	enum dom_verdict v;

	/* GRUB passes module strings of any length; Linux command lines are often long. */
	memcpy(long_args, "name=big -- ", 12);
	memset(long_args + 12, 'a', 20000);
	v = dom_config_parse(4, long_args, 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_OK && got.n == 0 && cfg.args == long_args + 12 &&
	      strlen(cfg.args) == 20000, "20000 characters of guest arguments, taken in place");

	v = dom_config_parse(1, "events=cycles", 2, NULL, NULL, NULL, &cfg);
	check(v == DOM_CFG_FATAL, "no event names known: events= is refused, silently");
	v = dom_config_parse(1, "bogus vcpus=2", 2, NULL, NULL, NULL, &cfg);
	check(v == DOM_CFG_WARN && cfg.vcpus == 2, "no reporter: still a warning verdict");
	v = dom_config_parse(4294967295u, "", 1, events, NULL, NULL, &cfg);
	check(v == DOM_CFG_OK && !strcmp(cfg.name, "dom4294967295"),
	      "largest index still names the domain (%s)", cfg.name);
}

/* initrd= names a data module; a data module's string is "data=NAME" alone. */
static void test_initrd_and_data(void)
{
	static const struct {
		const char *modstr;
		int verdict;
		const char *name;
	} data[] = {
		{ "data=rootfs", 1, "rootfs" },
		{ "/boot/initrd.gz data=rootfs", 1, "rootfs" },
		{ " \tdata=a-b_9", 1, "a-b_9" },
		{ "name=data", 0, NULL },
		{ "", 0, NULL },
		{ "guest.elf data=x", 0, NULL },
		{ "data=", -1, NULL },
		{ "data=Root", -1, NULL },
		{ "data=abcdefghijklmnop", -1, NULL },
		{ "data=rootfs mem=2M", -1, NULL },
		{ "data=rootfs -- x", -1, NULL },
	};
	struct msgs got = { 0 };
	struct dom_config cfg;
	enum dom_verdict v;
	char name[DOM_NAME_MAX + 1];

	v = dom_config_parse(0, "name=linux initrd=rootfs mem=256M", 2, events, collect, &got,
			     &cfg);
	check(v == DOM_CFG_OK && !strcmp(cfg.initrd, "rootfs"), "initrd=rootfs taken");
	v = dom_config_parse(0, "name=linux", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_OK && !cfg.initrd[0], "no initrd=: none");
	v = dom_config_parse(0, "name=linux initrd=Root", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_FATAL && got.n == 2 &&
	      !strcmp(got.m[0], "domain 0 (linux): bad value 'Root' for 'initrd' (expected 1..15 "
		      "characters of a-z 0-9 _ -)"), "a bad initrd= name is fatal, by name");
	for (size_t i = 0; i < N(data); i++) {
		int r;

		memset(name, 'z', sizeof(name));
		r = dom_config_data(data[i].modstr, name);
		check(r == data[i].verdict && (r != 1 || !strcmp(name, data[i].name)),
		      "'%s': data module verdict %d (want %d)", data[i].modstr, r, data[i].verdict);
	}
}

/* testdev: off unless named; the bare key or a yes turns it on; any other value stops the domain. */
static void test_testdev(void)
{
	struct msgs got = { 0 };
	struct dom_config cfg;
	enum dom_verdict v;

	v = dom_config_parse(0, "name=kut", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_OK && !cfg.testdev, "no testdev: off");
	v = dom_config_parse(0, "name=kut testdev initrd=env", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_OK && cfg.testdev && !strcmp(cfg.initrd, "env"),
	      "bare testdev: on, beside initrd=");
	v = dom_config_parse(0, "name=kut testdev=off", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_OK && !cfg.testdev, "testdev=off: off");
	got.n = 0;
	v = dom_config_parse(0, "name=kut testdev=maybe", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_FATAL && got.n >= 1 && strstr(got.m[0], "domain 0 (kut): ") == got.m[0] &&
	      strstr(got.m[0], "'testdev'"), "testdev=maybe is fatal, by name (%s)",
	      got.n ? got.m[0] : "no message");
}

/* x2apic=off: an xAPIC-only CPU for that domain (QEMU's -x2apic); on unless asked. */
static void test_x2apic(void)
{
	struct msgs got = { 0 };
	struct dom_config cfg;
	enum dom_verdict v;

	v = dom_config_parse(0, "name=a", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_OK && cfg.x2apic, "x2APIC offered by default");
	v = dom_config_parse(0, "name=a x2apic=off", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_OK && !cfg.x2apic, "x2apic=off hides it");
	v = dom_config_parse(0, "name=a x2apic=off x2apic", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_WARN && cfg.x2apic, "the bare key turns it on (the last one counts)");
	got.n = 0;
	v = dom_config_parse(0, "name=a x2apic=2", 2, events, collect, &got, &cfg);
	check(v == DOM_CFG_FATAL && got.n == 2 &&
	      !strcmp(got.m[0], "domain 0 (a): bad value '2' for 'x2apic' (expected on|off)"),
	      "a bad x2apic= value is fatal, by name");
}

int main(void)
{
	test_cases();
	test_edges();
	test_initrd_and_data();
	test_testdev();
	test_x2apic();
	return unit_summary();
}
