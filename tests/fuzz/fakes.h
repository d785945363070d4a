/* Shared by the fuzz targets: reading the input, exact-size copies, invariant checks, fakes. */
#ifndef PERFVISOR_TESTS_FUZZ_FAKES_H
#define PERFVISOR_TESTS_FUZZ_FAKES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

/* The fuzz input being consumed from the front; reads past its end give zeros. */
struct fz {
	const uint8_t *p;
	size_t n;
};

/*
 * Targets that read a sequence of operations read at most this much of their input: longer
 * sequences made every execution several times slower, and shorter ones reach what they reach.
 */
#define FZ_SEQUENCE_MAX	512

static inline struct fz fz_sequence(const uint8_t *data, size_t size)
{
	return (struct fz){ data, size < FZ_SEQUENCE_MAX ? size : FZ_SEQUENCE_MAX };
}

static inline uint64_t fz_uint(struct fz *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && in->n; i++, in->n--)
		v |= (uint64_t)*in->p++ << 8 * i;
	return v;
}

static inline uint8_t fz_u8(struct fz *in)
{
	return (uint8_t)fz_uint(in, 1);
}

static inline uint16_t fz_u16(struct fz *in)
{
	return (uint16_t)fz_uint(in, 2);
}

static inline uint32_t fz_u32(struct fz *in)
{
	return (uint32_t)fz_uint(in, 4);
}

static inline uint64_t fz_u64(struct fz *in)
{
	return fz_uint(in, 8);
}

/*
 * A heap block of exactly len bytes, so that AddressSanitizer reports an access one byte past
 * it. An empty block is the end of a 1-byte one, since ASan lets malloc(0)'s byte be read.
 * Free with fz_free().
 */
static inline uint8_t *fz_block(size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	if (!b)
		abort();
	return len ? b : b + 1;
}

/* The next len bytes (fewer if the input ends first) in an fz_block(); *got says how many. */
static inline uint8_t *fz_bytes(struct fz *in, size_t len, size_t *got)
{
	uint8_t *b;

	if (len > in->n)
		len = in->n;
	b = fz_block(len);
	memcpy(b, in->p, len);
	in->p += len;
	in->n -= len;
	*got = len;
	return b;
}

static inline void fz_free(void *b, size_t len)
{
	free(len ? b : (uint8_t *)b - 1);
}

/*
 * Make only the first keep of the len bytes at b (a block that ends in an ASan redzone, like an
 * fz_block() or a static array) accessible, so that a subject given keep bytes is caught reading
 * past them; fz_limit(b, len, len) undoes it.
 */
static inline void fz_limit(uint8_t *b, size_t len, size_t keep)
{
	ASAN_UNPOISON_MEMORY_REGION(b, len);
	ASAN_POISON_MEMORY_REGION(b + keep, len - keep);
}

/* The rest of the input as a NUL-terminated string in an exact-size heap block. */
static inline char *fz_string(struct fz *in)
{
	char *s = (char *)fz_block(in->n + 1);

	memcpy(s, in->p, in->n);
	s[in->n] = '\0';
	in->p += in->n;
	in->n = 0;
	return s;
}

/* A broken invariant is a crash: libFuzzer saves the input that caused it. */
#define FZ_CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__,	\
				__LINE__, #cond);				\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			abort();						\
		}								\
	} while (0)

/* s holds a NUL among its first size bytes. */
static inline bool fz_terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* Guest-physical RAM [0, size) for the page walker and the paravirtual PMU's guest memory. */
struct fake_ram {
	uint8_t *b;
	uint64_t size;
};

static inline bool fake_ram_has(const struct fake_ram *r, uint64_t gpa, uint64_t len)
{
	return len <= r->size && gpa <= r->size - len;
}

static inline bool fake_ram_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	const struct fake_ram *r = ctx;

	if (!fake_ram_has(r, gpa, len))
		return false;
	memcpy(buf, r->b + gpa, len);
	return true;
}

static inline bool fake_ram_write(void *ctx, uint64_t gpa, const void *buf, size_t len)
{
	struct fake_ram *r = ctx;

	if (!fake_ram_has(r, gpa, len))
		return false;
	memcpy(r->b + gpa, buf, len);
	return true;
}

/*
 * Fills RAM from the input compactly: records of a 2-byte 8-byte-slot index and an 8-byte value,
 * so that a few bytes of input build page tables or control blocks anywhere in it.
 */
static inline void fake_ram_fill(struct fake_ram *r, struct fz *in, unsigned records)
{
	memset(r->b, 0, r->size);
	for (unsigned i = 0; i < records && in->n; i++) {
		uint64_t slot = fz_u16(in) % (r->size / 8), v = fz_u64(in);

		memcpy(r->b + slot * 8, &v, 8);
	}
}

#ifdef FZ_PRINTK
/*
 * For subjects that write messages: printk.c's formatting, without coverage feedback (it is not
 * the subject, and tracing its comparisons made the targets several times slower), and a
 * silent console.
 */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)
#include "lib/printk.c"
#pragma clang attribute pop

void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}
#endif

#endif
