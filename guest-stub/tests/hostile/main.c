/* Hostile guest: one misbehaviour per case=NAME, each of which the hypervisor must contain. */
#include "guest-stub/tests/hostile/hostile.h"

static uint64_t arg_number(int argc, char **argv, const char *key, uint64_t fallback)
{
	size_t len = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, len) && argv[i][len] == '=')
			return strtoull(argv[i] + len + 1, NULL, 0);
	return fallback;
}

int main(int argc, char **argv)
{
	uint64_t ram = fwcfg_number(FWCFG_RAM_SIZE, 8);
	unsigned ncpus = (unsigned)fwcfg_number(FWCFG_NB_CPUS, 2);
	const char *name = "";

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "case=", 5))
			name = argv[i] + 5;
	printf("hostile: case %s, %llu MiB, %u vcpus\n", name, (unsigned long long)(ram >> 20),
	       ncpus);
	if (!strcmp(name, "apic"))
		return case_apic(ncpus);
	if (!strcmp(name, "fwcfg"))
		return case_fwcfg(ram, ncpus);
	if (!strcmp(name, "timer"))
		return case_timer();
	if (!strcmp(name, "pmi"))
		return case_pmi();
	if (!strcmp(name, "hc"))
		return case_hc(ram);
	if (!strcmp(name, "pv"))
		return case_pv(ram);
	if (!strcmp(name, "pvforge"))
		return case_pvforge(arg_number(argc, argv, "turns", 20000));
	if (!strcmp(name, "pvcount"))
		return case_pvcount(arg_number(argc, argv, "rounds", 10),
				    arg_number(argc, argv, "k", 1000));
	if (!strcmp(name, "ring3"))
		return case_ring3();
	if (!strcmp(name, "cpuid"))
		return case_cpuid();
	if (!strcmp(name, "msr"))
		return case_msr();
	if (!strcmp(name, "spin"))
		case_spin(arg_number(argc, argv, "loops", 50000000));
	if (!strcmp(name, "realgp"))
		return case_realgp();
	if (!strcmp(name, "haltgood"))
		return case_haltgood();
	if (!strcmp(name, "forge"))
		return case_forge();
	printf("hostile: unknown case '%s'\n", name);
	return 2;
}
