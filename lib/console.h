/* The hypervisor console: COM1 16550 and the 0xE9 debug port. */
#ifndef PERFVISOR_LIB_CONSOLE_H
#define PERFVISOR_LIB_CONSOLE_H

#include <stddef.h>

enum con_sink {
	CON_SERIAL = 1,
	CON_E9 = 2,
	CON_BOTH = 3,
};

void con_init(void);
void con_set_sinks(enum con_sink sinks);
void con_write(const char *s, size_t len);
void con_drain(void);

#endif
