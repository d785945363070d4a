/* printk(): a small vsnprintf (no floating point: the hypervisor runs without SSE) over the console. */
#include <stdbool.h>
#include <stdint.h>

#include "lib/console.h"
#include "lib/printk.h"
#include "lib/spinlock.h"

int log_level = LOG_INFO;

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/* Right-justified in width (left justification is done by the caller). */
static void put_num(struct out *o, uint64_t v, unsigned base, bool neg, int width, char pad)
{
	char digits[24];
	int n = 0;

	do {
		digits[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		digits[n++] = '-';
	if (neg && pad == '0') {
		put(o, '-');
		n--;
		width--;
	}
	for (int i = n; i < width; i++)
		put(o, pad);
	while (n)
		put(o, digits[--n]);
}

static void put_str(struct out *o, const char *s, int width, bool left)
{
	int n = 0;

	if (!s)
		s = "(null)";
	while (s[n])
		n++;
	for (int i = n; !left && i < width; i++)
		put(o, ' ');
	for (int i = 0; i < n; i++)
		put(o, s[i]);
	for (int i = n; left && i < width; i++)
		put(o, ' ');
}

int vsnprintk(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		bool left = false;
		char pad = ' ';
		int width = 0, lng = 0;

		for (fmt++; *fmt == '-' || *fmt == '0'; fmt++) {
			if (*fmt == '-')
				left = true;
			else
				pad = '0';
		}
		for (; *fmt >= '0' && *fmt <= '9'; fmt++)
			width = width * 10 + (*fmt - '0');
		for (; *fmt == 'l' || *fmt == 'z'; fmt++)
			lng++;
		if (left)
			pad = ' ';

		uint64_t u;
		int64_t s;
		size_t start = o.len;

		switch (*fmt) {
		case 'd':
		case 'i':
			s = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
			u = s < 0 ? -(uint64_t)s : (uint64_t)s;
			put_num(&o, u, 10, s < 0, left ? 0 : width, pad);
			break;
		case 'u':
		case 'x':
			u = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int);
			put_num(&o, u, *fmt == 'u' ? 10 : 16, false, left ? 0 : width, pad);
			break;
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			put_num(&o, (uintptr_t)va_arg(ap, void *), 16, false, 0, ' ');
			break;
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 's':
			put_str(&o, va_arg(ap, const char *), width, left);
			start = o.len;
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			put(&o, '%');
			if (*fmt)
				put(&o, *fmt);
			else
				fmt--;
			break;
		}
		/* Left-justified numbers are padded on the right. */
		while (left && *fmt != 's' && o.len - start < (size_t)width)
			put(&o, ' ');
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintk(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintk(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

static struct spinlock printk_lock;

static void vprintk(const char *fmt, va_list ap)
{
	char line[512];
	int n = vsnprintk(line, sizeof(line), fmt, ap);

	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	spin_lock(&printk_lock);
	con_write(line, (size_t)n);
	spin_unlock(&printk_lock);
}

void printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}

void printk_level(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > log_level)
		return;
	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}
