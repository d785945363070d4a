# Builds the mb32 32-bit multiboot test kernel and the test-only images; adds them to `guests`.

MB32_OUT := build/guest
# Its own object folder: guest.mk's rule for build/guest/obj/ would match these sources too.
MB32_OBJ := build/mb32

# A kernel of the kind QEMU -kernel boots: freestanding i386 code, no libc, no FPU or SSE
# (its interrupt handlers save only the general registers).
MB32_CFLAGS := -std=c11 -m32 -march=i686 -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-mgeneral-regs-only -fno-asynchronous-unwind-tables -fcf-protection=none \
	-O2 -g -Wall -Wextra -Werror -I. -MMD -MP
MB32_LDFLAGS := -m32 -nostdlib -static -no-pie -Wl,-T,guest-stub/mb32/mb32.ld \
	-Wl,--build-id=none -Wl,-z,noexecstack -Wl,--no-warn-rwx-segments
MB32_OBJS := $(MB32_OBJ)/entry.S.o $(MB32_OBJ)/kernel.c.o

# An ELF image cut short inside its section headers: the loader must refuse it by name.
MB32_TRUNCATED_BYTES := 3000
MB32_IMAGES := $(MB32_OUT)/mb32.elf $(MB32_OUT)/truncated.elf $(MB32_OUT)/mb32low.elf \
	$(MB32_OUT)/mb32-env.txt

.PHONY: guests
guests: $(MB32_IMAGES)

$(MB32_OUT)/mb32.elf: $(MB32_OBJS) guest-stub/mb32/mb32.ld
	@echo "  LD      $@"
	$(Q)gcc $(MB32_LDFLAGS) -o $@ $(MB32_OBJS)

# The same kernel loaded at 0x8000, where real-mode test kernels live: perfvisor's boot data
# must move out of its way (hv/guest_mbi.c guest_boot_area).
$(MB32_OUT)/mb32low.elf: $(MB32_OBJS) guest-stub/mb32/mb32.ld
	@echo "  LD      $@"
	$(Q)gcc $(MB32_LDFLAGS) -Wl,-Ttext=0x8000 -o $@ $(MB32_OBJS)

$(MB32_OBJ)/%.c.o: guest-stub/mb32/%.c guest-stub/mb32/mb32.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)gcc $(MB32_CFLAGS) -c -o $@ $<

$(MB32_OBJ)/%.S.o: guest-stub/mb32/%.S guest-stub/mb32/mb32.mk
	@mkdir -p $(@D)
	@echo "  AS      $<"
	$(Q)gcc $(MB32_CFLAGS) -c -o $@ $<

# The module mb32 prints when its command line says mods=1: an environment in the form
# kvm-unit-tests reads from its first module (NAME=VALUE lines).
$(MB32_OUT)/mb32-env.txt: guest-stub/mb32/mb32.mk
	@mkdir -p $(@D)
	@echo "  GEN     $@"
	$(Q)printf 'TEST_DEVICE=0\nGREETING=a multiboot module for mb32\n' >$@

$(MB32_OUT)/truncated.elf: $(MB32_OUT)/hello.elf guest-stub/mb32/mb32.mk
	@echo "  HEAD    $@"
	$(Q)head -c $(MB32_TRUNCATED_BYTES) $< >$@

-include $(wildcard $(MB32_OBJ)/*.d)
