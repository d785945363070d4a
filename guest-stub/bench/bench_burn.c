/* CPU-bound guest for the hypervisor-share benchmark: a counted loop, no output, no exits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	uint64_t loops = 1000000;

	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "loops=", 6) == 0)
			loops = strtoull(argv[i] + 6, NULL, 0);
	/* Two instructions per iteration; only the slice ends interrupt it. */
	if (loops)
		__asm__ volatile("1:\tdec %0\n\t"
				 "jnz 1b"
				 : "+r"(loops) : : "cc");
	return 0;
}
