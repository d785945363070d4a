/* Declarations shared by the guest runtime's own files; guests include rt.h instead. */
#ifndef GUEST_STUB_RT_INTERNAL_H
#define GUEST_STUB_RT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

void rt_console_init(void);
void rt_console_write(const char *buf, size_t len);
/* Returns once the UART has sent its last bit: bytes still queued are lost at power-off. */
void rt_console_drain(void);

/* Ends the run without touching stdio: for exit and for faults, where stdio may be broken. */
void rt_poweroff(int code) __attribute__((noreturn));

void rt_trap_init(void);

/* The heap runs from the end of the image up to ram_end. */
void rt_heap_init(uintptr_t ram_end);

#endif
