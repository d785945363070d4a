# Links each guest of guest-stub/{tests,bench,validate,demo}/ into build/guest/NAME.elf.

GUEST_CC := gcc
GUEST_OUT := build/guest
GUEST_NEWLIB := build/newlib/x86_64-elf
GUEST_NEWLIB_STAMP := build/newlib/.done

# Guests own their FPU state, so unlike the hypervisor they may use SSE; no red zone because
# guests may take interrupts (PMIs) on their one stack. newlib first, then the compiler's
# own headers (stddef.h, stdarg.h, limits.h), never the host libc's.
GUEST_CFLAGS := -std=c11 -Wall -Wextra -Werror -O2 -g -ffreestanding -fno-pic -fno-pie \
	-mno-red-zone -fno-stack-protector -mcmodel=small -fno-asynchronous-unwind-tables \
	-nostdinc -isystem $(GUEST_NEWLIB)/include \
	-isystem $(shell $(GUEST_CC) -print-file-name=include) -I. -MMD -MP
GUEST_LDFLAGS := -nostdlib -static -no-pie -Wl,-T,guest-stub/guest.ld -Wl,-z,max-page-size=0x1000 \
	-Wl,--build-id=none -Wl,--no-warn-rwx-segments -Wl,-z,noexecstack
GUEST_LIBS := -Wl,--start-group $(GUEST_NEWLIB)/lib/libc.a $(GUEST_NEWLIB)/lib/libm.a \
	$(shell $(GUEST_CC) -print-libgcc-file-name) -Wl,--end-group

# Every .c file in a purpose folder is one guest, built as build/guest/NAME.elf, and so is
# every subfolder NAME of one, whose .c files all make that guest: names are unique across
# the folders (the scenarios name guests without their folder).
GUEST_DIRS := guest-stub/tests guest-stub/bench guest-stub/validate guest-stub/demo
GUEST_SINGLE_NAMES := $(basename $(notdir $(wildcard $(addsuffix /*.c,$(GUEST_DIRS)))))
GUEST_MULTI_DIRS := $(sort $(patsubst %/,%,$(dir $(wildcard $(addsuffix /*/*.c,$(GUEST_DIRS))))))
GUEST_MULTI_NAMES := $(notdir $(GUEST_MULTI_DIRS))
GUEST_NAMES := $(GUEST_SINGLE_NAMES) $(GUEST_MULTI_NAMES)
ifneq ($(words $(GUEST_NAMES)),$(words $(sort $(GUEST_NAMES))))
$(error guest-stub: two guests share a name: $(GUEST_NAMES))
endif
vpath %.c $(GUEST_DIRS)
GUEST_ELFS := $(GUEST_NAMES:%=$(GUEST_OUT)/%.elf)
GUEST_MULTI_ELFS := $(GUEST_MULTI_NAMES:%=$(GUEST_OUT)/%.elf)
# The objects of the guest made of the folder $(1).
guest_multi_objs = $(patsubst guest-stub/%,$(GUEST_OUT)/obj/%.o,$(wildcard $(1)/*.c))
GUEST_MULTI_OBJS := $(foreach d,$(GUEST_MULTI_DIRS),$(call guest_multi_objs,$(d)))
GUEST_RT_OBJS := $(patsubst guest-stub/%,$(GUEST_OUT)/obj/%.o, \
	$(wildcard guest-stub/rt/*.S guest-stub/rt/*.c))
# The mini-kernel is an archive: a guest links only the parts it calls (none unless it calls
# kernel_init), so plain guests stay as they were.
GUEST_KERNEL_LIB := $(GUEST_OUT)/libkernel.a
GUEST_KERNEL_OBJS := $(patsubst guest-stub/%,$(GUEST_OUT)/obj/%.o, \
	$(wildcard guest-stub/kernel/*.S guest-stub/kernel/*.c))
# The user library (perfctr- and PAPI-shaped), an archive like the kernel.
GUEST_USER_LIB := $(GUEST_OUT)/libpvc.a
GUEST_USER_LIB_OBJS := $(patsubst guest-stub/%,$(GUEST_OUT)/obj/%.o,$(wildcard guest-stub/lib/*.c))
# Objects rebuild when the newlib build or these flags change.
GUEST_OBJ_DEPS := $(GUEST_NEWLIB_STAMP) guest-stub/guest.mk

# The workloads library and its guests, linked by a rule of their own (before the rule
# below, which links every other guest).
include guest-stub/workloads/workloads.mk

# Made through pattern rules only: without this make deletes them as intermediates.
.SECONDARY: $(GUEST_SINGLE_NAMES:%=$(GUEST_OUT)/obj/main/%.c.o) $(GUEST_MULTI_OBJS) \
	$(GUEST_RT_OBJS) $(GUEST_KERNEL_OBJS) $(GUEST_USER_LIB_OBJS)

.PHONY: guests
guests: $(GUEST_ELFS)

$(filter-out $(WL_ELFS) $(GUEST_MULTI_ELFS),$(GUEST_ELFS)): $(GUEST_OUT)/%.elf: \
		$(GUEST_OUT)/obj/main/%.c.o $(GUEST_RT_OBJS) $(GUEST_USER_LIB) $(GUEST_KERNEL_LIB) \
		guest-stub/guest.ld
	@echo "  LD      $@"
	$(Q)$(GUEST_CC) $(GUEST_LDFLAGS) -o $@ $(GUEST_RT_OBJS) $< $(GUEST_USER_LIB) $(GUEST_KERNEL_LIB) \
		$(GUEST_LIBS)

# A guest of several files: one link rule each, its objects in place of the one.
define GUEST_MULTI_RULE
$(GUEST_OUT)/$(notdir $(1)).elf: $(call guest_multi_objs,$(1)) $(GUEST_RT_OBJS) $(GUEST_USER_LIB) \
		$(GUEST_KERNEL_LIB) guest-stub/guest.ld
	@echo "  LD      $$@"
	$(Q)$(GUEST_CC) $(GUEST_LDFLAGS) -o $$@ $(GUEST_RT_OBJS) $(call guest_multi_objs,$(1)) \
		$(GUEST_USER_LIB) $(GUEST_KERNEL_LIB) $(GUEST_LIBS)
endef
$(foreach d,$(GUEST_MULTI_DIRS),$(eval $(call GUEST_MULTI_RULE,$(d))))

$(GUEST_KERNEL_LIB): $(GUEST_KERNEL_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(GUEST_USER_LIB): $(GUEST_USER_LIB_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(GUEST_OUT)/obj/%.c.o: guest-stub/%.c $(GUEST_OBJ_DEPS)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(GUEST_CC) $(GUEST_CFLAGS) -c -o $@ $<

# A guest's own file, found in its purpose folder by vpath.
$(GUEST_OUT)/obj/main/%.c.o: %.c $(GUEST_OBJ_DEPS)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(GUEST_CC) $(GUEST_CFLAGS) -c -o $@ $<

$(GUEST_OUT)/obj/%.S.o: guest-stub/%.S $(GUEST_OBJ_DEPS)
	@mkdir -p $(@D)
	@echo "  AS      $<"
	$(Q)$(GUEST_CC) $(GUEST_CFLAGS) -c -o $@ $<

# deps.sh does nothing when newlib is already built as it says; the touch marks it checked.
$(GUEST_NEWLIB_STAMP): scripts/deps.sh
	@bash scripts/deps.sh
	@touch $@

-include $(wildcard $(GUEST_OUT)/obj/main/*.d $(GUEST_OUT)/obj/rt/*.d $(GUEST_OUT)/obj/kernel/*.d \
	$(GUEST_OUT)/obj/lib/*.d $(GUEST_MULTI_OBJS:.o=.d))

