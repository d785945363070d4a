/* Unit tests for hv/testdev.c: pc-testdev's scratch register by byte lanes, and its flush port. */
#include "tests/unit/unit.h"
#include "hv/testdev.c"

static uint32_t in(struct testdev *t, uint16_t port, unsigned size)
{
	uint32_t v = 0xdeadbeef;

	testdev_io(t, port, false, size, &v);
	return v;
}

static void out(struct testdev *t, uint16_t port, unsigned size, uint32_t v)
{
	testdev_io(t, port, true, size, &v);
}

/* What kvm-unit-tests' realmode.flat and emulator.flat do: write a size, read it back. */
static void test_read_back(void)
{
	struct testdev t = { 0 };

	out(&t, 0xE0, 1, 0x1234567f);
	check(in(&t, 0xE0, 1) == 0x7f, "outb 0xE0 then inb: the byte (0x%x)", in(&t, 0xE0, 1));
	out(&t, 0xE0, 2, 0xabcd1234);
	check(in(&t, 0xE0, 2) == 0x1234, "outw then inw: the word");
	out(&t, 0xE0, 4, 0x89abcdef);
	check(in(&t, 0xE0, 4) == 0x89abcdef, "outl then inl: all 32 bits");
}

/* The register is four byte lanes: a write replaces only the lanes it covers. */
static void test_lanes(void)
{
	struct testdev t = { 0 };

	out(&t, 0xE0, 4, 0x11223344);
	out(&t, 0xE2, 1, 0xaa);
	check(in(&t, 0xE0, 4) == 0x11aa3344, "outb 0xE2 replaces lane 2 only (0x%x)",
	      in(&t, 0xE0, 4));
	check(in(&t, 0xE1, 2) == 0xaa33, "inw 0xE1: lanes 1 and 2");
	out(&t, 0xE3, 4, 0x55667788);
	check(in(&t, 0xE0, 4) == 0x88aa3344, "a write past lane 3 keeps lane 3 only (0x%x)",
	      in(&t, 0xE0, 4));
	check(in(&t, 0xE3, 4) == 0x88, "a read past lane 3 reads 0 there");
}

static void test_flush_and_claims(void)
{
	struct testdev t = { 0 };

	out(&t, 0xE0, 4, 0xcafe);
	out(&t, 0xE4, 4, 0x123000);
	check(in(&t, 0xE0, 4) == 0xcafe, "a page flush leaves the register alone");
	check(in(&t, 0xE4, 4) == 0, "the flush port reads 0");
	check(testdev_claims(0xE0) && testdev_claims(0xE3) && testdev_claims(0xE4) &&
	      testdev_claims(0xE7), "ports 0xE0-0xE7 are the device's");
	check(!testdev_claims(0xDF) && !testdev_claims(0xE8) && !testdev_claims(0xE9) &&
	      !testdev_claims(0xF4) && !testdev_claims(0x2000),
	      "0xDF, 0xE8, the debug console 0xE9, the exit port and the IRQ lines are not");
}

int main(void)
{
	test_read_back();
	test_lanes();
	test_flush_and_claims();
	return unit_summary();
}
