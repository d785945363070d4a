/* Formatted output for the hypervisor: snprintf-style formatting and levelled console messages. */
#ifndef PERFVISOR_LIB_PRINTK_H
#define PERFVISOR_LIB_PRINTK_H

#include <stdarg.h>
#include <stddef.h>

/* Levels as in loglevel=N on the command line: a message prints when its level <= N. */
enum log_level {
	LOG_ERR = 1,
	LOG_WARN = 2,
	LOG_NOTICE = 3,
	LOG_INFO = 4,
	LOG_DEBUG = 6,
	LOG_TRACE = 7,
};

extern int log_level;

int vsnprintk(char *buf, size_t size, const char *fmt, va_list ap);
__attribute__((format(printf, 3, 4)))
int snprintk(char *buf, size_t size, const char *fmt, ...);
/* Always prints: banners, verdicts, dumps. */
__attribute__((format(printf, 1, 2)))
void printk(const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void printk_level(enum log_level level, const char *fmt, ...);

#define pr_err(...)	printk_level(LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	printk_level(LOG_WARN, __VA_ARGS__)
#define pr_notice(...)	printk_level(LOG_NOTICE, __VA_ARGS__)
#define pr_info(...)	printk_level(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	printk_level(LOG_DEBUG, __VA_ARGS__)
#define pr_trace(...)	printk_level(LOG_TRACE, __VA_ARGS__)

#endif
