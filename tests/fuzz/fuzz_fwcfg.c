/* Fuzz target for hv/fwcfg.c: any sequence of port accesses, against a model of the items. */
#include "hv/fwcfg.c"
#include "tests/fuzz/fakes.h"

/* Byte i of the item key, as QEMU's docs/specs/fw_cfg.rst defines it. */
static uint8_t model_byte(uint16_t key, uint32_t i, uint64_t ram_size, uint16_t ncpus)
{
	uint8_t item[8];
	unsigned len;

	switch (key) {
	case FWCFG_SIGNATURE:
		memcpy(item, "QEMU", 4);
		len = 4;
		break;
	case FWCFG_ID:
		memcpy(item, (const uint8_t[]){ 1, 0, 0, 0 }, 4);
		len = 4;
		break;
	case FWCFG_RAM_SIZE:
		for (len = 0; len < 8; len++)
			item[len] = ram_size >> 8 * len;
		break;
	case FWCFG_NB_CPUS:
		item[0] = ncpus;
		item[1] = ncpus >> 8;
		len = 2;
		break;
	default:
		len = 0;
	}
	return i < len ? item[i] : 0;
}

/* Input: RAM size, CPU count, then accesses of an opcode byte (direction, size, port) and value. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_sequence(data, size);
	uint64_t ram_size = fz_u64(&in);
	uint16_t ncpus = fz_u16(&in), key = FWCFG_SIGNATURE;
	uint32_t next = 0;
	struct fwcfg f;

	fwcfg_init(&f, ram_size, ncpus);
	while (in.n) {
		uint8_t op = fz_u8(&in);
		bool write = op & 1;
		unsigned off = op >> 1 & 3, bytes = op >> 3 & 7;
		uint32_t val = op & 0x40 ? fz_u32(&in) : fz_u16(&in);

		/* Near the end of a read of 4 GiB, which would take too long to do. */
		if (op & 0x80)
			f.offset = next = UINT32_MAX - (op & 3);
		fwcfg_io(&f, off, write, bytes, &val);
		if (write && off == 0 && bytes == 2) {
			key = val;
			next = 0;
		} else if (!write && off == 1 && bytes == 1) {
			FZ_CHECK(val == model_byte(key, next, ram_size, ncpus),
				 "key 0x%x byte %u: 0x%x", key, next, val);
			if (next != UINT32_MAX)
				next++;
		} else if (!write) {
			FZ_CHECK(val == 0, "read of %u bytes at %u: 0x%x", bytes, off, val);
		}
		FZ_CHECK(f.key == key && f.offset == next, "state");
	}
	return 0;
}
