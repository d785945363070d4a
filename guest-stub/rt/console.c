/* Guest console: perfvisor's console hypercall, or COM1 16550 at 115200 8N1 natively. */
#include <stdbool.h>
#include <string.h>

#include "guest-stub/rt/internal.h"
#include "guest-stub/rt/rt.h"
#include "include/perfvisor/hypercall.h"

#define COM1		0x3F8
#define UART_DATA	0
#define UART_DLL	0	/* with LCR.DLAB set */
#define UART_IER	1
#define UART_DLM	1	/* with LCR.DLAB set */
#define UART_FCR	2
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5

#define LCR_8N1		0x03
#define LCR_DLAB	0x80
#define FCR_ENABLE_CLEAR 0x07
#define MCR_DTR_RTS	0x03
#define LSR_THRE	0x20	/* room for another byte */
#define LSR_TEMT	0x40	/* shift register empty: all sent */

/*
 * A real UART frees THRE within one character time (~90 us at 115200 baud); a device model
 * that never sets it must not hang the guest, so give up after this many reads.
 */
#define UART_POLL_LIMIT	100000

static bool uart_wait(uint8_t lsr_bit)
{
	for (int i = 0; i < UART_POLL_LIMIT; i++)
		if (rt_inb(COM1 + UART_LSR) & lsr_bit)
			return true;
	return false;
}

/*
 * Under perfvisor a write is one VM exit (HC_CONSOLE_WRITE) instead of two a character (the
 * THR write and the LSR poll): console output is most of a counting guest's exits that are not
 * the soft PMU's own. The hypervisor puts the bytes into the domain's COM1 output as its UART
 * model does, so the log reads the same.
 */
static bool console_hc;

bool rt_under_perfvisor(void)
{
	struct rt_cpuid_regs r = rt_cpuid(HV_CPUID_SIGNATURE, 0);
	char sig[12];

	memcpy(sig, &r.ebx, 4);
	memcpy(sig + 4, &r.ecx, 4);
	memcpy(sig + 8, &r.edx, 4);
	return memcmp(sig, "perfvisor", 10) == 0;
}

void rt_console_init(void)
{
	console_hc = rt_under_perfvisor();
	if (console_hc)
		return;
	rt_outb(COM1 + UART_IER, 0);
	rt_outb(COM1 + UART_LCR, LCR_DLAB);
	rt_outb(COM1 + UART_DLL, 1);	/* 115200 / 1 */
	rt_outb(COM1 + UART_DLM, 0);
	rt_outb(COM1 + UART_LCR, LCR_8N1);
	rt_outb(COM1 + UART_FCR, FCR_ENABLE_CLEAR);
	rt_outb(COM1 + UART_MCR, MCR_DTR_RTS);
}

void rt_console_write(const char *buf, size_t len)
{
	while (console_hc && len) {
		size_t n = len < HC_CONSOLE_MAX ? len : HC_CONSOLE_MAX;

		/* A refusal (a buffer outside the domain's memory) loses only that write. */
		rt_vmcall(HC_CONSOLE_WRITE, (uintptr_t)buf, n);
		buf += n;
		len -= n;
	}
	for (size_t i = 0; i < len; i++) {
		uart_wait(LSR_THRE);
		rt_outb(COM1 + UART_DATA, (uint8_t)buf[i]);
	}
}

void rt_console_drain(void)
{
	if (!console_hc)
		uart_wait(LSR_TEMT);
}
