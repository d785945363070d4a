# Reads a scenario file (GRUB multiboot and module lines); sourced by mkiso.sh and run-emu.sh.
# shellcheck shell=bash disable=SC2034  # the sc_ arrays are read by the callers
#
# Format, one line each, '#' starting a comment anywhere a word starts:
#     multiboot FILE [ARG]...     exactly one, before any module line
#     module FILE [ARG]...        any number, in the order they are loaded
# A relative FILE is taken from the build directory. Arguments are split on
# blanks and reach the kernel exactly as written, joined by single spaces.

# scenario_read FILE BUILD_DIR fills sc_kind[], sc_file[] (as written),
# sc_src[] (the host path) and sc_args[] (one string per line), line by line.
# On an error it returns 1 with FILE:LINE and the reason in sc_error.
scenario_read() {
	local scenario=$1 build_dir=$2 line lineno=0 where kind file arg i
	local -a words
	sc_kind=() sc_file=() sc_src=() sc_args=()
	if [ ! -f "$scenario" ]; then
		sc_error="$scenario: no such scenario file"
		return 1
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		where="$scenario:$lineno"
		read -ra words <<<"$line"
		for i in "${!words[@]}"; do
			if [[ ${words[i]} == '#'* ]]; then
				words=("${words[@]:0:i}")
				break
			fi
		done
		[ ${#words[@]} -gt 0 ] || continue

		kind=${words[0]}
		if [ "$kind" = multiboot ] && [ ${#sc_kind[@]} -gt 0 ]; then
			sc_error="$where: a second 'multiboot' line"
			return 1
		elif [ "$kind" = module ] && [ ${#sc_kind[@]} -eq 0 ]; then
			sc_error="$where: 'module' before the 'multiboot' line"
			return 1
		elif [ "$kind" != multiboot ] && [ "$kind" != module ]; then
			sc_error="$where: not understood: '$line'"
			sc_error+=" (expected 'multiboot FILE ARGS' or 'module FILE ARGS')"
			return 1
		elif [ ${#words[@]} -lt 2 ]; then
			sc_error="$where: '$kind' needs a file"
			return 1
		fi

		file=${words[1]}
		sc_kind+=("$kind")
		sc_file+=("$file")
		if [[ $file == /* ]]; then
			sc_src+=("$file")
		else
			sc_src+=("$build_dir/$file")
		fi
		if [ ! -f "${sc_src[-1]}" ]; then
			sc_error="$where: ${sc_src[-1]}: no such file"
			return 1
		fi
		# GRUB's loader would put backslashes before these.
		for arg in "${words[@]:2}"; do
			if [[ $arg == *[\"\'\\]* ]]; then
				sc_error="$where: argument '$arg' has a quote or backslash, which GRUB would change"
				return 1
			fi
		done
		sc_args+=("${words[*]:2}")
	done <"$scenario"
	if [ ${#sc_kind[@]} -eq 0 ]; then
		sc_error="$scenario: no 'multiboot' line"
		return 1
	fi
}
