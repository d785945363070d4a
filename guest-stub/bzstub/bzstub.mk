# Builds bzstub, a stand-in Linux kernel in a bzImage, and the bad images the loader must refuse.

BZSTUB_OUT := build/guest
BZSTUB_OBJ := build/bzstub
# Position-independent: the loader puts it at pref_address or, in a small domain, lower.
BZSTUB_CFLAGS := -std=c11 -fpie -ffreestanding -mno-red-zone -mgeneral-regs-only \
	-fno-stack-protector -fno-asynchronous-unwind-tables -fcf-protection=none \
	-O2 -Wall -Wextra -Werror -MMD -MP
BZSTUB_OBJS := $(BZSTUB_OBJ)/entry.S.o $(BZSTUB_OBJ)/bzstub.c.o
BZSTUB_MK := guest-stub/bzstub/mkbzimage.py
# Cut inside the protected-mode kernel: the setup header is whole, the kernel is not.
BZSTUB_CUT_BYTES := 1500
BZSTUB_IMAGES := $(BZSTUB_OUT)/bzstub.bzImage $(BZSTUB_OUT)/bzstub-cut.bzImage \
	$(BZSTUB_OUT)/bzstub-big.bzImage $(BZSTUB_OUT)/bzstub-initrd.img

.PHONY: guests
guests: $(BZSTUB_IMAGES)

$(BZSTUB_OBJ)/%.c.o: guest-stub/bzstub/%.c guest-stub/bzstub/bzstub.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)gcc $(BZSTUB_CFLAGS) -c -o $@ $<

$(BZSTUB_OBJ)/%.S.o: guest-stub/bzstub/%.S guest-stub/bzstub/bzstub.mk
	@mkdir -p $(@D)
	@echo "  AS      $<"
	$(Q)gcc $(BZSTUB_CFLAGS) -c -o $@ $<

$(BZSTUB_OBJ)/bzstub.bin: $(BZSTUB_OBJS) guest-stub/bzstub/bzstub.ld
	@echo "  LD      $@"
	$(Q)$(LD) -static -T guest-stub/bzstub/bzstub.ld -z noexecstack --no-warn-rwx-segments -o $(@:.bin=.elf) $(BZSTUB_OBJS)
	$(Q)objcopy -O binary $(@:.bin=.elf) $@

$(BZSTUB_OUT)/bzstub.bzImage: $(BZSTUB_OBJ)/bzstub.bin $(BZSTUB_MK)
	@mkdir -p $(@D)
	@echo "  BZIMAGE $@"
	$(Q)python3 $(BZSTUB_MK) $< $@

$(BZSTUB_OUT)/bzstub-cut.bzImage: $(BZSTUB_OBJ)/bzstub.bin $(BZSTUB_MK)
	@echo "  BZIMAGE $@"
	$(Q)python3 $(BZSTUB_MK) --cut $(BZSTUB_CUT_BYTES) $< $@

# init_size 64 MiB: too large for a 16 MiB domain.
$(BZSTUB_OUT)/bzstub-big.bzImage: $(BZSTUB_OBJ)/bzstub.bin $(BZSTUB_MK)
	@echo "  BZIMAGE $@"
	$(Q)python3 $(BZSTUB_MK) --init-size 0x4000000 $< $@

# bzstub.c checks the first two bytes ("pv") and the last (a newline) where the zero page says.
$(BZSTUB_OUT)/bzstub-initrd.img: guest-stub/bzstub/bzstub.mk
	@mkdir -p $(@D)
	@echo "  GEN     $@"
	$(Q)printf 'pv: the initrd of the bzstub kernel\n' >$@

-include $(wildcard $(BZSTUB_OBJ)/*.d)
