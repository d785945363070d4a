/* Fuzz target for hv/domcfg.c: dom_config_parse() of any module string, for any domain index. */
#include "lib/cmdline.c"
#include "lib/multiboot.h"
#include "hv/domcfg.c"
#define FZ_PRINTK
#include "tests/fuzz/fakes.h"

/* pmu/pmu.c's pmu_event_names. */
static const char *const event_names[] = {
	"instructions", "branches", "cycles", "ref-cycles", NULL,
};

struct reports {
	char prefix[32];	/* "domain <index> (" */
	unsigned n;
	bool last_not_started;
};

static void report(void *ctx, const char *msg)
{
	struct reports *r = ctx;
	static const char end[] = ": not started";
	size_t len = strlen(msg);

	FZ_CHECK(!strncmp(msg, r->prefix, strlen(r->prefix)), "message '%s'", msg);
	FZ_CHECK(len < sizeof(((struct dom_reporter *)0)->prefix) + CMDLINE_MSG_MAX, "too long");
	r->last_not_started = len >= sizeof(end) - 1 && !strcmp(msg + len - sizeof(end) + 1, end);
	r->n++;
}

static void check_config(const struct dom_config *c, unsigned npcpus, bool events,
			 const char *modstr)
{
	size_t name_len = strnlen(c->name, sizeof(c->name));

	FZ_CHECK(name_len >= 1 && name_len <= DOM_NAME_MAX, "name length");
	FZ_CHECK(strspn(c->name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == name_len,
		 "name '%s'", c->name);
	FZ_CHECK(c->vcpus >= 1 && c->vcpus <= DOM_VCPUS_MAX, "vcpus %u", c->vcpus);
	FZ_CHECK(c->mem >= DOM_MEM_MIN && c->mem <= DOM_MEM_MAX && c->mem % DOM_MEM_ALIGN == 0,
		 "mem %llu", (unsigned long long)c->mem);
	FZ_CHECK(c->npin <= 1 || c->npin == c->vcpus, "npin %u for %u VCPUs", c->npin, c->vcpus);
	for (unsigned i = 0; i < c->npin; i++)
		FZ_CHECK(c->pin[i] < npcpus, "pin %u of %u PCPUs", c->pin[i], npcpus);
	FZ_CHECK(c->acct <= DOM_ACCT_HYBRID && c->tsc <= DOM_TSC_HOST, "acct, tsc");
	FZ_CHECK(c->events < (events ? 1u << 4 : 1u), "events 0x%llx",
		 (unsigned long long)c->events);
	/* The arguments are the module string's own tail (or empty): no copy, no limit. */
	FZ_CHECK(!c->args[0] || (c->args > modstr && c->args < modstr + strlen(modstr)), "args");
}

/*
 * Input: domain index (4 bytes), PCPU count (1 + a byte mod 16), whether event names and a
 * reporter are given; the rest is the module string, cut as multiboot.c cuts module strings.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	unsigned index = fz_u32(&in), npcpus = 1 + fz_u8(&in) % 16, flags = fz_u8(&in);
	bool events = flags & 1, reporting = flags & 2;
	struct reports r = { .n = 0 };
	struct dom_config cfg;
	enum dom_verdict v;
	char *modstr;

	/* Module strings have no length limit; a few KiB cover every path of the parser. */
	if (in.n >= 4096)
		in.n = 4095;
	modstr = fz_string(&in);
	memset(&cfg, 0xa5, sizeof(cfg));
	/* The name is not known before the parse: any name may follow the index. */
	snprintf(r.prefix, sizeof(r.prefix), "domain %u (", index);
	v = dom_config_parse(index, modstr, npcpus, events ? event_names : NULL,
			     reporting ? report : NULL, &r, &cfg);
	FZ_CHECK(v <= DOM_CFG_FATAL, "verdict %d", v);
	FZ_CHECK(reporting || r.n == 0, "a message without a reporter");
	if (reporting)
		FZ_CHECK((v == DOM_CFG_OK) == (r.n == 0) &&
			 (v == DOM_CFG_FATAL) == r.last_not_started, "verdict %d after %u messages",
			 v, r.n);
	if (v != DOM_CFG_FATAL)
		check_config(&cfg, npcpus, events, modstr);
	fz_free(modstr, 1);
	return 0;
}
