# The validation suite (tests/validate/): the seed papers' scenarios, errors, report and charts.

# User knobs: VALIDATE_INJECT=pv-skip-sum (the hypervisor's deliberate breakage, for every
# case: the report must show it and the run must fail), VALIDATE_ONLY=regex (those cases
# again; the others keep their results in results.jsonl).
VALIDATE_INJECT ?=
VALIDATE_ONLY ?=
VALIDATE_ARGS = $(if $(VALIDATE_INJECT),--inject $(VALIDATE_INJECT)) \
	$(if $(VALIDATE_ONLY),--only '$(VALIDATE_ONLY)')

.PHONY: validate validate-quick validate-report

# The whole matrix (3 min on 2 idle cores): build/validate/report.md, results.jsonl, charts/.
validate: all
	python3 tests/validate/run.py --out build/validate $(VALIDATE_ARGS)

# A few minutes, for make test: one case of each path, in build/validate/quick/.
validate-quick: all
	python3 tests/validate/run.py --quick --out build/validate/quick $(VALIDATE_ARGS)

# The report again from results.jsonl, without running anything.
validate-report:
	python3 tests/validate/run.py --report-only --out build/validate
