/* Option strings: key=value tokens and a table-driven parser that names every problem. */
#include <stdarg.h>

#include "lib/cmdline.h"
#include "lib/printk.h"

#define SHOW_MAX	40	/* quoted user text is cut here so the rest of a message fits */

/* Even index false, odd index true. */
static const char *const bool_words[] = {
	"0", "1", "off", "on", "no", "yes", "false", "true", NULL
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool cmdline_next(const char **pos, struct cmdline_token *t)
{
	const char *s = *pos;

	while (is_blank(*s))
		s++;
	*pos = s;
	if (!*s)
		return false;
	t->key = s;
	t->val = NULL;
	for (; *s && !is_blank(*s); s++) {
		if (*s == '=' && !t->val) {
			t->key_len = (size_t)(s - t->key);
			t->val = s + 1;
		}
	}
	if (t->val)
		t->val_len = (size_t)(s - t->val);
	else
		t->key_len = (size_t)(s - t->key);
	*pos = s;
	return true;
}

/* s[0..n) (which holds no NUL) equals the word w. */
static bool same(const char *w, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i] != s[i])
			return false;
	return w[i] == '\0';
}

static int word_index(const char *const *words, const char *s, size_t n)
{
	for (int i = 0; words && words[i]; i++)
		if (same(words[i], s, n))
			return i;
	return -1;
}

/* Copy user text for quoting, cut at SHOW_MAX characters ("..." marks the cut). */
static void show(char buf[SHOW_MAX + 4], const char *s, size_t n)
{
	size_t k = n < SHOW_MAX ? n : SHOW_MAX;

	__builtin_memcpy(buf, s, k);
	if (k < n) {
		__builtin_memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
}

static void append(char *buf, size_t size, const char *s)
{
	size_t n = __builtin_strlen(buf);

	snprintk(buf + n, size - n, "%s", s);
}

__attribute__((format(printf, 2, 3)))
static void say(struct cmdline_parser *p, const char *fmt, ...)
{
	char msg[CMDLINE_MSG_MAX];
	va_list ap;

	if (!p->report)
		return;
	va_start(ap, fmt);
	vsnprintk(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->report(p->ctx, msg);
}

static unsigned digit(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (unsigned)(c - 'A' + 10);
	return 16;
}

/* Decimal or 0x hex, optionally followed by K, M or G (powers of 1024); false on overflow. */
static bool parse_number(const char *s, size_t n, bool suffix, uint64_t *out)
{
	uint64_t v = 0, base = 10, scale = 1;
	size_t i = 0;

	if (suffix && n) {
		switch (s[n - 1]) {
		case 'K': case 'k':
			scale = 1ull << 10;
			break;
		case 'M': case 'm':
			scale = 1ull << 20;
			break;
		case 'G': case 'g':
			scale = 1ull << 30;
			break;
		}
		if (scale > 1)
			n--;
	}
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return false;
	for (; i < n; i++) {
		unsigned d = digit(s[i]);

		if (d >= base || v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (v > UINT64_MAX / scale)
		return false;
	*out = v * scale;
	return true;
}

/* Comma lists: each call yields the next item (possibly empty); false after the last one. */
static bool next_item(const char **s, const char *end, const char **item, size_t *len)
{
	if (!*s)
		return false;
	*item = *s;
	while (*s < end && **s != ',')
		(*s)++;
	*len = (size_t)(*s - *item);
	*s = *s < end ? *s + 1 : NULL;
	return true;
}

static bool parse_uint(const struct cmdline_opt *o, const char *s, size_t n)
{
	uint64_t v;

	if (!parse_number(s, n, o->suffix, &v) || v < o->min || v > o->max)
		return false;
	if (o->align && v % o->align)
		return false;
	*(uint64_t *)o->dest = v;
	return true;
}

static bool parse_str(const struct cmdline_opt *o, const char *s, size_t n)
{
	char *dest = o->dest;

	if (n < o->min || n > o->max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (o->chars && !__builtin_strchr(o->chars, s[i]))
			return false;
	__builtin_memcpy(dest, s, n);
	dest[n] = '\0';
	return true;
}

/* Items are N or N-M; all or nothing, so a bad item leaves the default in place. */
static bool parse_list(const struct cmdline_opt *o, const char *s, size_t n)
{
	struct cmdline_list l = { 0 };
	const char *end = s + n, *item;
	size_t len;

	while (next_item(&s, end, &item, &len)) {
		uint64_t lo, hi;
		size_t dash = 0;

		while (dash < len && item[dash] != '-')
			dash++;
		if (!parse_number(item, dash, false, &lo))
			return false;
		hi = lo;
		if (dash < len && !parse_number(item + dash + 1, len - dash - 1, false, &hi))
			return false;
		if (lo > hi || lo < o->min || hi > o->max || hi - lo >= CMDLINE_LIST_MAX - l.count)
			return false;
		for (uint64_t k = 0; k <= hi - lo; k++)
			l.v[l.count++] = (uint32_t)(lo + k);
	}
	*(struct cmdline_list *)o->dest = l;
	return true;
}

static bool parse_set(const struct cmdline_opt *o, const char *s, size_t n)
{
	const char *end = s + n, *item;
	uint64_t bits = 0;
	size_t len;

	while (next_item(&s, end, &item, &len)) {
		int i = word_index(o->words, item, len);

		if (i < 0)
			return false;
		bits |= 1ull << i;
	}
	*(uint64_t *)o->dest = bits;
	return true;
}

static bool set_value(const struct cmdline_opt *o, const struct cmdline_token *t)
{
	int i;

	if (!t->val) {
		if (o->kind != CMDLINE_BOOL)
			return false;
		*(bool *)o->dest = true;
		return true;
	}
	switch (o->kind) {
	case CMDLINE_UINT:
		return parse_uint(o, t->val, t->val_len);
	case CMDLINE_ENUM:
		i = word_index(o->words, t->val, t->val_len);
		if (i >= 0)
			*(unsigned *)o->dest = (unsigned)i;
		return i >= 0;
	case CMDLINE_BOOL:
		i = word_index(bool_words, t->val, t->val_len);
		if (i >= 0)
			*(bool *)o->dest = i & 1;
		return i >= 0;
	case CMDLINE_STR:
		return parse_str(o, t->val, t->val_len);
	case CMDLINE_LIST:
		return parse_list(o, t->val, t->val_len);
	case CMDLINE_SET:
		return parse_set(o, t->val, t->val_len);
	}
	return false;
}

/* Sizes read best with their suffix: 16M rather than 16777216. */
static void show_uint(const struct cmdline_opt *o, uint64_t v, char buf[24])
{
	static const char units[] = "GMK";

	for (int i = 0; o->suffix && v && i < 3; i++) {
		uint64_t unit = 1ull << (30 - 10 * i);

		if (v % unit == 0) {
			snprintk(buf, 24, "%llu%c", (unsigned long long)(v / unit), units[i]);
			return;
		}
	}
	snprintk(buf, 24, "%llu", (unsigned long long)v);
}

/* words joined by sep; only those whose bit is set in mask. */
static void join_words(char *buf, size_t size, const char *const *words, uint64_t mask,
		       const char *sep)
{
	bool first = true;

	for (int i = 0; words && words[i]; i++) {
		if (!(mask >> i & 1))
			continue;
		if (!first)
			append(buf, size, sep);
		append(buf, size, words[i]);
		first = false;
	}
	if (first)
		append(buf, size, "none");
}

static void describe_expect(const struct cmdline_opt *o, char *buf, size_t size)
{
	char lo[24], hi[24], al[24];

	buf[0] = '\0';
	if (o->expect) {
		append(buf, size, o->expect);
		return;
	}
	switch (o->kind) {
	case CMDLINE_UINT:
		show_uint(o, o->min, lo);
		show_uint(o, o->max, hi);
		snprintk(buf, size, "%s..%s", lo, hi);
		if (o->align > 1) {
			show_uint(o, o->align, al);
			append(buf, size, ", a multiple of ");
			append(buf, size, al);
		}
		break;
	case CMDLINE_SET:
		append(buf, size, "a comma list of ");
		/* fall through */
	case CMDLINE_ENUM:
		join_words(buf, size, o->words, UINT64_MAX, "|");
		break;
	case CMDLINE_BOOL:
		append(buf, size, "on|off");
		break;
	case CMDLINE_STR:
		snprintk(buf, size, "%llu..%llu characters",
			 (unsigned long long)o->min, (unsigned long long)o->max);
		break;
	case CMDLINE_LIST:
		snprintk(buf, size, "a list like 0,2-3 of numbers in %llu..%llu",
			 (unsigned long long)o->min, (unsigned long long)o->max);
		break;
	}
}

static void describe_value(const struct cmdline_opt *o, char *buf, size_t size)
{
	const struct cmdline_list *l = o->dest;
	char num[24];

	buf[0] = '\0';
	switch (o->kind) {
	case CMDLINE_UINT:
		show_uint(o, *(const uint64_t *)o->dest, num);
		append(buf, size, num);
		break;
	case CMDLINE_ENUM:
		append(buf, size, o->words[*(const unsigned *)o->dest]);
		break;
	case CMDLINE_BOOL:
		append(buf, size, *(const bool *)o->dest ? "on" : "off");
		break;
	case CMDLINE_STR:
		snprintk(buf, size, "'%s'", (const char *)o->dest);
		break;
	case CMDLINE_LIST:
		for (unsigned i = 0; i < l->count; i++) {
			snprintk(num, sizeof(num), "%s%u", i ? "," : "", l->v[i]);
			append(buf, size, num);
		}
		if (!l->count)
			append(buf, size, "none");
		break;
	case CMDLINE_SET:
		join_words(buf, size, o->words, *(const uint64_t *)o->dest, ",");
		break;
	}
}

static void report_bad(struct cmdline_parser *p, const struct cmdline_opt *o,
		       const struct cmdline_token *t)
{
	char expect[CMDLINE_MSG_MAX], cur[CMDLINE_MSG_MAX], using[CMDLINE_MSG_MAX] = "";
	char shown[SHOW_MAX + 4];

	describe_expect(o, expect, sizeof(expect));
	if (!o->fatal) {
		describe_value(o, cur, sizeof(cur));
		snprintk(using, sizeof(using), ", using %s", cur);
	}
	if (!t->val) {
		say(p, "missing value for '%s' (expected %s)%s", o->name, expect, using);
		return;
	}
	show(shown, t->val, t->val_len);
	say(p, "bad value '%s' for '%s' (expected %s)%s", shown, o->name, expect, using);
}

/* Whether a token of line before t has t's key. */
static bool seen_before(const char *line, const struct cmdline_token *t)
{
	struct cmdline_token u;

	while (cmdline_next(&line, &u) && u.key != t->key)
		if (u.key_len == t->key_len && !__builtin_memcmp(u.key, t->key, t->key_len))
			return true;
	return false;
}

static int parse_token(struct cmdline_parser *p, const char *line, const struct cmdline_token *t)
{
	const struct cmdline_opt *o = NULL;
	char shown[SHOW_MAX + 4];
	int problems = 0;

	for (size_t i = 0; i < p->nopts && !o; i++)
		if (same(p->opts[i].name, t->key, t->key_len))
			o = &p->opts[i];
	if (!o) {
		show(shown, t->key, t->key_len);
		say(p, "unknown option '%s' ignored", shown);
		return 1;
	}
	if (seen_before(line, t)) {
		say(p, "option '%s' given more than once, the last one counts", o->name);
		problems++;
	}
	if (!set_value(o, t)) {
		report_bad(p, o, t);
		p->fatal += o->fatal;
		problems++;
	}
	return problems;
}

static bool is_path(const struct cmdline_token *t)
{
	for (size_t i = 0; !t->val && i < t->key_len; i++)
		if (t->key[i] == '/')
			return true;
	return false;
}

int cmdline_parse(struct cmdline_parser *p, const char *line)
{
	const char *pos = line;
	struct cmdline_token t;
	bool first = true;
	int problems = 0;

	p->args = NULL;
	p->fatal = 0;
	while (cmdline_next(&pos, &t)) {
		if (!t.val && same("--", t.key, t.key_len)) {
			while (is_blank(*pos))
				pos++;
			p->args = pos;
			break;
		}
		if (!(first && is_path(&t)))
			problems += parse_token(p, line, &t);
		first = false;
	}
	return problems;
}
