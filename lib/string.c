/* String and memory functions; memset/memcpy use x86 string instructions (guest RAM is zeroed with them). */
#include <stdint.h>

#include "lib/string.h"

/* Eight bytes per iteration, then the tail (SDM Vol. 2B REP STOS; DF is clear in the hypervisor). */
void *memset(void *dst, int c, size_t n)
{
	uint64_t pattern = 0x0101010101010101ull * (unsigned char)c;
	void *d = dst;
	size_t q = n / 8, r = n % 8;

	__asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(pattern) : "memory");
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(r) : "a"(pattern) : "memory");
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	const void *s = src;
	size_t q = n / 8, r = n % 8;

	__asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(q) : : "memory");
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(r) : : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

/* Eight bytes a step while they are equal (x86 loads need no alignment), then byte by byte. */
int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	uint64_t u, v;

	for (; n >= 8; n -= 8, x += 8, y += 8) {
		__builtin_memcpy(&u, x, 8);
		__builtin_memcpy(&v, y, 8);
		if (u != v)
			break;
	}
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

int strcmp(const char *a, const char *b)
{
	return strncmp(a, b, (size_t)-1);
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}
