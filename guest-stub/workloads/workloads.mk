# The workloads library (guest-stub/workloads/) and its guests, linked twice to carry their symbols.

WL_LIB := $(GUEST_OUT)/libworkloads.a
WL_OBJS := $(patsubst guest-stub/%,$(GUEST_OUT)/obj/%.o, \
	$(wildcard guest-stub/workloads/*.S guest-stub/workloads/*.c))
WL_GUESTS := microbench ovf_threads pchase
WL_ELFS := $(WL_GUESTS:%=$(GUEST_OUT)/%.elf)
# Code symbols, by address: what must not move between the two links (symtab.h).
WL_CODE_SYMS = nm -n --defined-only $(1) | awk '$$2 ~ /^[tTwW]$$/'

.SECONDARY: $(WL_OBJS)

$(WL_LIB): $(WL_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

# Link 1 takes symtab_none.o from the archive; link 2 puts the table made from link 1 first.
$(WL_ELFS): $(GUEST_OUT)/%.elf: $(GUEST_OUT)/obj/main/%.c.o $(GUEST_RT_OBJS) $(WL_LIB) \
		$(GUEST_USER_LIB) $(GUEST_KERNEL_LIB) guest-stub/guest.ld \
		guest-stub/workloads/symtab.sh
	@echo "  LD      $@ (twice: symbol table)"
	$(Q)$(GUEST_CC) $(GUEST_LDFLAGS) -o $@.link1 $(GUEST_RT_OBJS) $< $(WL_LIB) $(GUEST_USER_LIB) \
		$(GUEST_KERNEL_LIB) $(GUEST_LIBS)
	$(Q)sh guest-stub/workloads/symtab.sh $@.link1 $(@F) >$(GUEST_OUT)/obj/$*.syms.c
	$(Q)$(GUEST_CC) $(GUEST_CFLAGS) -c -o $(GUEST_OUT)/obj/$*.syms.o $(GUEST_OUT)/obj/$*.syms.c
	$(Q)$(GUEST_CC) $(GUEST_LDFLAGS) -o $@.link2 $(GUEST_RT_OBJS) $< \
		$(GUEST_OUT)/obj/$*.syms.o $(WL_LIB) $(GUEST_USER_LIB) $(GUEST_KERNEL_LIB) \
		$(GUEST_LIBS)
	$(Q)$(call WL_CODE_SYMS,$@.link1) >$@.syms1
	$(Q)$(call WL_CODE_SYMS,$@.link2) >$@.syms2
	$(Q)if ! cmp -s $@.syms1 $@.syms2; then \
		echo "$@: code moved when the symbol table was added" >&2; exit 1; fi
	$(Q)mv $@.link2 $@
	$(Q)rm -f $@.link1 $@.syms1 $@.syms2

-include $(wildcard $(GUEST_OUT)/obj/workloads/*.d)
