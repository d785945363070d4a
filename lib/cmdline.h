/* Option strings (command line, module strings): key=value tokens and a table-driven parser. */
#ifndef PERFVISOR_LIB_CMDLINE_H
#define PERFVISOR_LIB_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMDLINE_MSG_MAX		160	/* longest message handed to report(), NUL included */
#define CMDLINE_LIST_MAX	64	/* numbers a CMDLINE_LIST value may expand to */

/* One whitespace-separated token: key, and the value after the first '=' (val NULL if none). */
struct cmdline_token {
	const char *key;
	size_t key_len;
	const char *val;
	size_t val_len;
};

/* Store the token at *pos in *t and advance *pos past it; false when only blanks remain. */
bool cmdline_next(const char **pos, struct cmdline_token *t);

enum cmdline_kind {
	CMDLINE_UINT,	/* uint64_t: decimal or 0x hex in min..max, a multiple of align if set */
	CMDLINE_ENUM,	/* unsigned: index of the value in words */
	CMDLINE_BOOL,	/* bool: 1/0, on/off, yes/no, true/false; the bare key means true */
	CMDLINE_STR,	/* char[max + 1]: min..max characters, each in chars if set */
	CMDLINE_LIST,	/* struct cmdline_list: "0,2-3" style, each number in min..max (32-bit) */
	CMDLINE_SET,	/* uint64_t: bit i set for each of words[i] in a comma list */
};

struct cmdline_list {
	unsigned count;
	uint32_t v[CMDLINE_LIST_MAX];
};

struct cmdline_opt {
	const char *name;
	enum cmdline_kind kind;
	void *dest;		/* holds the default before parsing; untouched by a bad value */
	uint64_t min, max;	/* UINT, LIST: value range; STR: length range */
	uint64_t align;		/* UINT: required multiple (0: any) */
	bool suffix;		/* UINT: accept K/M/G (binary) and show values with them */
	const char *const *words; /* ENUM, SET: NULL-terminated; SET: at most 64 */
	const char *chars;	/* STR: allowed characters (NULL: any but blanks) */
	const char *expect;	/* what messages say is expected (NULL: derived from the above) */
	bool fatal;		/* no default can stand in for a bad value: the caller gives up */
};

/*
 * Parsing context. Messages (without a trailing newline) go to report(ctx, msg), e.g.
 *   unknown option 'foo' ignored
 *   bad value 'x' for 'loglevel' (expected 0..7), using 4
 *   missing value for 'slice' (expected 100..1000000), using 1000
 *   option 'loglevel' given more than once, the last one counts
 * Fatal options omit ", using ...".
 */
struct cmdline_parser {
	const struct cmdline_opt *opts;
	size_t nopts;
	void (*report)(void *ctx, const char *msg);	/* may be NULL */
	void *ctx;
	const char *args;	/* out: text after the "--" token and its blanks; NULL if none */
	unsigned fatal;		/* out: bad values of fatal options */
};

/*
 * Parse line against p->opts, storing values into their dest in order (the last
 * duplicate wins). A first token with a '/' and no '=' (the image path loaders put
 * first) is skipped. Returns the number of problems reported.
 */
int cmdline_parse(struct cmdline_parser *p, const char *line);

#endif
