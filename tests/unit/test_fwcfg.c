/* Unit tests for hv/fwcfg.c: the items guests read and the accesses that are ignored. */
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/fwcfg.c"

static void io(struct fwcfg *f, unsigned off, bool write, unsigned size, uint32_t *v)
{
	fwcfg_io(f, off, write, size, v);
}

static void select_key(struct fwcfg *f, uint16_t key)
{
	uint32_t v = key;

	io(f, 0, true, 2, &v);
}

static uint32_t data_byte(struct fwcfg *f)
{
	uint32_t v = 0xdeadbeef;

	io(f, 1, false, 1, &v);
	return v;
}

/* Read n data bytes into buf. */
static void read_item(struct fwcfg *f, uint8_t *buf, unsigned n)
{
	while (n--)
		*buf++ = data_byte(f);
}

static const struct {
	const char *name;
	uint16_t key;
	unsigned len;
	uint8_t want[9];
} items[] = {
	{ "signature \"QEMU\"", 0x0000, 5, { 'Q', 'E', 'M', 'U', 0 } },
	{ "ID 1 (I/O interface, no DMA)", 0x0001, 5, { 1, 0, 0, 0, 0 } },
	{ "RAM size, u64 little-endian", 0x0003, 9, { 0x00, 0x60, 0x45, 0x23, 0x01, 0, 0, 0, 0 } },
	{ "CPU count, u16 little-endian", 0x0005, 3, { 2, 0, 0 } },
	{ "unknown key 0x0002", 0x0002, 4, { 0 } },
	{ "file directory (no files)", 0x0019, 4, { 0 } },
	{ "arch-local key 0x8000", 0x8000, 2, { 0 } },
};

static void test_items(void)
{
	struct fwcfg f;
	uint8_t buf[9];
	size_t i;

	fwcfg_init(&f, 0x123456000ull, 2);
	for (i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		memset(buf, 0xee, sizeof(buf));
		select_key(&f, items[i].key);
		read_item(&f, buf, items[i].len);
		check(!memcmp(buf, items[i].want, items[i].len), "key 0x%04x: %s", items[i].key,
		      items[i].name);
	}
}

static void test_sequences(void)
{
	struct fwcfg f;
	uint32_t v;
	uint8_t buf[4];

	fwcfg_init(&f, 128 << 20, 4);
	check(data_byte(&f) == 'Q', "after reset the signature is selected");

	select_key(&f, 0x0000);
	read_item(&f, buf, 2);
	select_key(&f, 0x0000);
	check(data_byte(&f) == 'Q', "a selector write rewinds the item");

	select_key(&f, 0x0005);
	v = 0x0003;
	io(&f, 0, true, 1, &v);
	check(data_byte(&f) == 4, "a byte write to 0x510 is ignored");
	v = 0x0000;
	io(&f, 0, true, 4, &v);
	check(data_byte(&f) == 0, "a 32-bit write to 0x510 is ignored (offset kept: high byte 0)");

	select_key(&f, 0x0000);
	v = 'X';
	io(&f, 1, true, 1, &v);
	check(data_byte(&f) == 'Q', "data writes are ignored and do not advance");
	v = 0xdeadbeef;
	io(&f, 1, false, 2, &v);
	check(v == 0 && data_byte(&f) == 'E', "a 16-bit data read returns 0 and does not advance");
	v = 0xdeadbeef;
	io(&f, 0, false, 2, &v);
	check(v == 0, "the selector reads 0");
	v = 0xdeadbeef;
	io(&f, 2, false, 1, &v);
	check(v == 0, "an offset beyond the two ports reads 0");

	f.offset = UINT32_MAX;
	check(data_byte(&f) == 0 && f.offset == UINT32_MAX && data_byte(&f) == 0,
	      "the data offset saturates instead of wrapping to the start");
}

int main(void)
{
	test_items();
	test_sequences();
	return unit_summary();
}
