/* The system calls newlib expects: descriptors 0-2 are the console, the heap is the free RAM. */
/*
 * newlib for x86_64-elf is built with MISSING_SYSCALL_NAMES: its _write_r and friends call
 * the plain POSIX names, so those are what this file defines. unistd.h checks the prototypes.
 */
#define _DEFAULT_SOURCE

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "guest-stub/rt/internal.h"
#include "guest-stub/rt/spinlock.h"

/* End of the image, from guest.ld. */
extern char __image_end[];

static uintptr_t heap_brk;
static uintptr_t heap_end;

void rt_heap_init(uintptr_t ram_end)
{
	heap_brk = (uintptr_t)__image_end;
	heap_end = ram_end > heap_brk ? ram_end : heap_brk;
}

void *sbrk(ptrdiff_t incr)
{
	uintptr_t old = heap_brk;

	if (incr > 0 ? (uintptr_t)incr > heap_end - heap_brk :
		       (uintptr_t)-incr > heap_brk - (uintptr_t)__image_end) {
		errno = ENOMEM;
		return (void *)-1;
	}
	heap_brk += incr;
	return (void *)old;
}

static int is_console(int fd)
{
	return fd >= 0 && fd <= 2;
}

/*
 * One write comes out in one piece even when several VCPUs print: a printf line is one
 * write. Interrupts stay masked while the lock is held, so no thread is preempted inside.
 */
static struct rt_spinlock console_lock;

int write(int fd, const void *buf, size_t len)
{
	uint64_t flags;

	if (!is_console(fd)) {
		errno = EBADF;
		return -1;
	}
	flags = rt_irq_save();
	rt_spin_lock(&console_lock);
	rt_console_write(buf, len);
	rt_spin_unlock(&console_lock);
	rt_irq_restore(flags);
	return (int)len;
}

/* No input device: the console reads as end of file. */
int read(int fd, void *buf, size_t len)
{
	(void)buf;
	(void)len;
	if (!is_console(fd)) {
		errno = EBADF;
		return -1;
	}
	return 0;
}

int close(int fd)
{
	if (!is_console(fd)) {
		errno = EBADF;
		return -1;
	}
	return 0;
}

/* A character device, so stdio treats the console as a terminal. */
int fstat(int fd, struct stat *st)
{
	if (!is_console(fd)) {
		errno = EBADF;
		return -1;
	}
	*st = (struct stat){ .st_mode = S_IFCHR };
	return 0;
}

int isatty(int fd)
{
	if (!is_console(fd)) {
		errno = EBADF;
		return 0;
	}
	return 1;
}

off_t lseek(int fd, off_t offset, int whence)
{
	(void)fd;
	(void)offset;
	(void)whence;
	errno = ESPIPE;
	return -1;
}

pid_t getpid(void)
{
	return 1;
}

/* No signals: raise() fails and abort() falls back to _exit(1). */
int kill(pid_t pid, int sig)
{
	(void)pid;
	(void)sig;
	errno = EINVAL;
	return -1;
}
