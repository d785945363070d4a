# Host unit tests: `make test-unit` (V=1: all lines) builds each tests/unit/test_*.c, runs them all.
UNIT_PREV_GOAL := $(.DEFAULT_GOAL)

UNIT_CC		:= gcc
UNIT_CFLAGS	:= -std=gnu11 -g -O1 -I. -Wall -Wextra -Werror -fsanitize=address,undefined \
		   -fno-sanitize-recover=all -fno-omit-frame-pointer -MMD -MP
UNIT_DIR	:= build/unit
UNIT_SRCS	:= $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS	:= $(patsubst tests/unit/%.c,$(UNIT_DIR)/%,$(UNIT_SRCS))
# The host test of the table make run prints (scripts/demo-table.py), run and summed with them.
UNIT_SCRIPTS	:= scripts/demo-table-test.py

.PHONY: test-unit
test-unit: $(UNIT_BINS)
	$(Q)tests/unit/run.sh $(if $(filter 1,$(V)),-v) $(UNIT_BINS) $(UNIT_SCRIPTS)

# Each program #includes the .c files it tests; -MMD records them so edits rebuild it.
$(UNIT_BINS): $(UNIT_DIR)/%: tests/unit/%.c tests/unit/unit.mk
	@mkdir -p $(UNIT_DIR)
	@echo "  HOSTCC  $<"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $<

-include $(UNIT_BINS:=.d)

# Included from the top Makefile this file must not become its default goal; alone it is one.
ifneq ($(notdir $(firstword $(MAKEFILE_LIST))),unit.mk)
.DEFAULT_GOAL := $(UNIT_PREV_GOAL)
endif
