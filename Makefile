# perfvisor: `make` builds the hypervisor, the guests and the demo ISO; `make test` runs every test layer.
# Read the README for the targets; the fragments below add the guests, the tests and `make run`.
# V=1 shows every command (otherwise a short line like `CC file` names each step).

BUILD	:= build
KERNEL	:= $(BUILD)/perfvisor.elf

CC	:= gcc
LD	:= ld
Q	:= $(if $(filter 1,$(V)),,@)

# The hypervisor is freestanding and never touches SSE/x87 state, so guests' FPU state is
# never clobbered by it (and needs no save/restore on VM exits).
HV_CFLAGS := -std=c11 -ffreestanding -fno-pic -fno-pie -mno-red-zone -mgeneral-regs-only \
	-fno-stack-protector -fno-delete-null-pointer-checks -fno-asynchronous-unwind-tables -fcf-protection=none \
	-g -Wall -Wextra -Werror -I. -MMD -MP
HV_ASFLAGS := -I. -MMD -MP
HV_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments -T linker.ld

HV_SRCS := $(sort $(wildcard boot/*.c boot/*.S lib/*.c hv/*.c hv/*.S pmu/*.c pmu/*.S))
HV_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(HV_SRCS))

# Speed where exits go, size where only boot and domain creation go (issue 15's image target):
# the parsers, loaders, firmware-table builders and the log formatter run once, or once a domain.
HV_OPT := -O2
HV_COLD_SRCS := boot/main.c lib/cmdline.c lib/multiboot.c lib/printk.c hv/main.c \
	hv/elf.c hv/bzimage.c hv/cpus_fw.c hv/domcfg.c hv/guest_mbi.c hv/acpi.c
$(patsubst %,$(BUILD)/obj/%.o,$(HV_COLD_SRCS)): HV_OPT := -Os

.PHONY: all deps test clean distclean
.DEFAULT_GOAL := all

all: $(KERNEL) guests iso

$(BUILD)/obj/%.c.o: %.c Makefile
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(HV_CFLAGS) $(HV_OPT) -c $< -o $@

$(BUILD)/obj/%.S.o: %.S Makefile
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(HV_ASFLAGS) -c $< -o $@

$(KERNEL): $(HV_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(HV_LDFLAGS) -o $@ $(HV_OBJS)

-include $(HV_OBJS:.o=.d)

# Installs what is missing (Debian packages, newlib for the guests, the Linux guest from Debian's
# packages through apt); quiet when all is there.
deps:
	@bash scripts/deps.sh
	@$(MAKE) --no-print-directory linux-guest

# Each fragment is required: a missing one fails here instead of dropping a target or a layer.
include guest-stub/guest.mk
include guest-stub/mb32/mb32.mk
include guest-stub/bzstub/bzstub.mk
include guest-stub/linux/linux.mk
include scripts/run.mk
include tests/unit/unit.mk
include tests/system/system.mk
include tests/fuzz/fuzz.mk
include tests/validate/validate.mk
include tests/bench/bench.mk
include docs/pictures/pictures.mk
include tests/kut/kut.mk

# No lower layer includes a higher one, and docs/architecture.md's edges block lists exactly
# the tree's arrows between top-level folders; the script's own test first proves it catches both.
.PHONY: check-layers
check-layers:
	$(Q)tests/unit/run.sh scripts/check-layers-test.py
	$(Q)python3 scripts/check-layers.py --doc docs/architecture.md

# The layers of make test (docs/testing.md).
TEST_LAYERS := check-layers test-unit test-system fuzz-smoke validate-quick bench-check \
	pictures-check kut-check

# Every layer runs even if an earlier one fails; the status says whether all passed.
test: deps
	@$(MAKE) --no-print-directory all
	@rc=0; \
	for t in $(TEST_LAYERS); do \
		echo "== $$t"; \
		$(MAKE) --no-print-directory $$t || rc=1; \
	done; \
	if [ $$rc = 0 ]; then echo "make test: all layers passed"; else echo "make test: FAILED"; fi; \
	exit $$rc

# newlib takes a minute to build and the Linux guest's packages 75 MB to download: both are kept
# across `make clean`; distclean removes them too.
clean:
	@find $(BUILD) -mindepth 1 -maxdepth 1 ! -name newlib ! -name 'newlib-*' ! -name linux \
		-exec rm -rf {} + 2>/dev/null || true
	@find $(BUILD)/linux -mindepth 1 -maxdepth 1 ! -name debs -exec rm -rf {} + 2>/dev/null || true

distclean:
	rm -rf $(BUILD)
