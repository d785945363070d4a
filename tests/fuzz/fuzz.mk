# Coverage-guided fuzzing (libFuzzer): `make fuzz` runs every tests/fuzz/fuzz_*.c target for
# FUZZ_RUNS executions each (or FUZZ_SECONDS, whichever comes first; 0: no limit), and
# `make fuzz-smoke` (a `make test` layer) each briefly over its seed corpus.
FUZZ_PREV_GOAL := $(.DEFAULT_GOAL)

FUZZ_CC		:= clang
FUZZ_CFLAGS	:= -std=gnu11 -g -O1 -I. -Wall -Wextra -Werror -fno-omit-frame-pointer \
		   -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -MMD -MP
FUZZ_DIR	:= build/fuzz
FUZZ_SRCS	:= $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS	:= $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRCS))
# Each target runs until 10 million executions, with no time limit: the slowest
# take ~25 min each, the dozen ~80 min on 2 cores. FUZZ_SECONDS=N caps each at N seconds
# (run.sh then says which fell short of 10 million).
FUZZ_SECONDS	?= 0
FUZZ_RUNS	?= 10000000
FUZZ_JOBS	?= 2
# FUZZ_ONLY="vapic vpmu": those targets only.
FUZZ_ONLY	?=
FUZZ_RUN_BINS	:= $(if $(FUZZ_ONLY),$(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_ONLY)),$(FUZZ_BINS))

.PHONY: fuzz fuzz-smoke
fuzz: $(FUZZ_RUN_BINS)
	$(Q)tests/fuzz/run.sh -t $(FUZZ_SECONDS) -r $(FUZZ_RUNS) -j $(FUZZ_JOBS) $(FUZZ_RUN_BINS)

fuzz-smoke: $(FUZZ_BINS)
	$(Q)tests/fuzz/run.sh -s -j $(FUZZ_JOBS) $(FUZZ_BINS)

# Each target #includes the .c files it fuzzes; -MMD records them so edits rebuild it.
$(FUZZ_BINS): $(FUZZ_DIR)/%: tests/fuzz/%.c tests/fuzz/fuzz.mk
	@mkdir -p $(FUZZ_DIR)
	@echo "  FUZZCC  $<"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $<

-include $(FUZZ_BINS:=.d)

# Included from the top Makefile this file must not become its default goal; alone it is one.
ifneq ($(notdir $(firstword $(MAKEFILE_LIST))),fuzz.mk)
.DEFAULT_GOAL := $(FUZZ_PREV_GOAL)
endif
