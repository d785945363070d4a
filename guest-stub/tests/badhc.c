/* Hypercall abuse: bad pointers, lengths and numbers must each give their error code, and the guest lives on. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "guest-stub/rt/rt.h"
#include "include/perfvisor/hypercall.h"

struct hc_case {
	const char *what;
	uint64_t nr, arg0, arg1;
	int64_t want;
};

static const char greeting[] = "badhc: written by hypercall\n";

int main(void)
{
	/* Guest RAM is at most 1 GiB; the boot page tables map the low 4 GiB and nothing above. */
	const struct hc_case cases[] = {
		{ "write from guest-physical 3 GiB, outside RAM", HC_CONSOLE_WRITE,
		  0xC0000000ull, 8, -PV_EFAULT },
		{ "write from 4 GiB, not mapped by the guest", HC_CONSOLE_WRITE,
		  0x100000000ull, 8, -PV_EFAULT },
		{ "write from a non-canonical address", HC_CONSOLE_WRITE,
		  0x8000000000000000ull, 8, -PV_EFAULT },
		{ "write of 4097 bytes", HC_CONSOLE_WRITE, (uintptr_t)greeting,
		  HC_CONSOLE_MAX + 1, -PV_EINVAL },
		{ "write of 2^64-1 bytes", HC_CONSOLE_WRITE, (uintptr_t)greeting, UINT64_MAX,
		  -PV_EINVAL },
		{ "number 4", HC_BASE_COUNT, 0, 0, -PV_ENOSYS },
		{ "number 0xff", 0xFF, 0, 0, -PV_ENOSYS },
		{ "number 2^32", 1ull << 32, 0, 0, -PV_ENOSYS },
		{ "number 2^64-1", UINT64_MAX, 0, 0, -PV_ENOSYS },
		{ "vcpu id", HC_VCPU_ID, 0, 0, 0 },
		{ "yield", HC_YIELD, 0, 0, 0 },
		{ "console write", HC_CONSOLE_WRITE, (uintptr_t)greeting, strlen(greeting),
		  (int64_t)strlen(greeting) },
	};
	unsigned failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hc_case *c = &cases[i];
		int64_t got = rt_vmcall(c->nr, c->arg0, c->arg1);

		if (got == c->want) {
			printf("badhc: %s: %lld\n", c->what, (long long)got);
		} else {
			printf("badhc: %s: %lld, WRONG (expected %lld)\n", c->what,
			       (long long)got, (long long)c->want);
			failed++;
		}
	}
	printf("badhc: %u wrong; leaving by hypercall\n", failed);
	rt_vmcall(HC_DOMAIN_EXIT, failed, 0);
	printf("badhc: still running after the exit hypercall\n");
	return 99;
}
