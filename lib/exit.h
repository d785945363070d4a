/* Ending a run: the verdict line, then the emulator's exit ports, then halt. */
#ifndef PERFVISOR_LIB_EXIT_H
#define PERFVISOR_LIB_EXIT_H

/* Overall verdicts the hypervisor itself produces (domains' own codes are reported separately). */
enum hv_exit_code {
	EXIT_OK = 0,
	EXIT_NO_VTX = 1,
	EXIT_DOMAIN_FAILED = 2,
	EXIT_HV_FAULT = 3,
	EXIT_BAD_BOOT = 4,
	EXIT_LEAK = 5,		/* frames not returned after every domain ended */
};

__attribute__((noreturn)) void hv_exit(int code);

#endif
