/* One domain's configuration, parsed from its multiboot module string. */
#ifndef PERFVISOR_HV_DOMCFG_H
#define PERFVISOR_HV_DOMCFG_H

#include <stdbool.h>
#include <stdint.h>

#define DOM_NAME_MAX	15
#define DOM_VCPUS_MAX	8
#define DOM_MEM_MIN	(2ull << 20)
#define DOM_MEM_MAX	(1ull << 30)
#define DOM_MEM_ALIGN	(2ull << 20)	/* guest RAM is mapped with 2 MiB EPT pages */
#define DOM_MEM_DEFAULT	(16ull << 20)

enum dom_acct {
	DOM_ACCT_GUEST,		/* acct=guest */
	DOM_ACCT_VCPU,		/* acct=vcpu */
	DOM_ACCT_HYBRID,	/* acct=hybrid */
};

enum dom_tsc {
	DOM_TSC_VCPU,		/* tsc=vcpu */
	DOM_TSC_HOST,		/* tsc=host */
};

enum dom_verdict {
	DOM_CFG_OK,
	DOM_CFG_WARN,		/* unknown keys, duplicates or a bad name: the domain starts */
	DOM_CFG_FATAL,		/* a bad vcpus, mem, pin, acct, tsc or events */
};

struct dom_config {
	char name[DOM_NAME_MAX + 1];	/* [a-z0-9_-], default dom<index> */
	unsigned vcpus;			/* 1..DOM_VCPUS_MAX, default 1 */
	uint64_t mem;			/* bytes, 2 MiB..1 GiB in 2 MiB steps, default 16 MiB */
	unsigned npin;			/* 0: unpinned; 1: all on pin[0]; else VCPU v on pin[v] */
	uint32_t pin[DOM_VCPUS_MAX];	/* PCPU numbers */
	enum dom_acct acct;		/* default guest */
	enum dom_tsc tsc;		/* default vcpu */
	bool x2apic;			/* x2apic=off: CPUID hides x2APIC mode; default on */
	uint64_t timeout_ms;		/* wall time after which the domain is killed; 0: none */
	uint64_t events;		/* bit i: event_names[i] asked for; default none */
	char initrd[DOM_NAME_MAX + 1];	/* initrd=: the data module of that name; "" none */
	bool testdev;			/* testdev: QEMU's pc-testdev (hv/testdev.h), default off */
	/* The guest's arguments, everything after "--", any length: inside the module string. */
	const char *args;
};

/*
 * Parse module string modstr of domain index into *cfg. PCPU numbers must be below
 * npcpus (>= 1); events= takes a comma list of event_names (NULL-terminated, at most
 * 64; NULL: none known). Each problem goes to report(ctx, msg) as one line starting
 * "domain <index> (<name>): "; a fatal verdict ends with "... : not started".
 */
enum dom_verdict dom_config_parse(unsigned index, const char *modstr, unsigned npcpus,
				  const char *const *event_names,
				  void (*report)(void *ctx, const char *msg), void *ctx,
				  struct dom_config *cfg);

/*
 * A module whose string is "data=NAME" alone is no domain but a file a domain names (its
 * initrd=NAME). Returns 0 for a domain's module string, 1 for a data module (its name in
 * name), -1 for a string starting "data=" that is not that (a bad name, other words).
 */
int dom_config_data(const char *modstr, char name[DOM_NAME_MAX + 1]);

#endif
