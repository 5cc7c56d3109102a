/*
 * agent/safety/scan — the scanner's names (languages, severities) and the
 * matcher (PCRE2): the rules run over the normalised text within regex and
 * time limits, and what they find. See scan.h; scan-internal.h says which
 * file does the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/safety/scan-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

BASE_ERROR_TEXT(, scan_err, agent_scan_error, scan_fail)

/* ---- names ------------------------------------------------------------- */

/*
 * Every spelling of a language the parser takes, one row per spelling and
 * each row indexed by the language: the first row holds the names, the
 * others their aliases.
 */
static const char *const lang_names[][AGENT_SCAN_LANG_COUNT] = {
	{[AGENT_SCAN_SHELL] = "shell", [AGENT_SCAN_PYTHON] = "python",
	 [AGENT_SCAN_JAVASCRIPT] = "javascript"},
	{[AGENT_SCAN_SHELL] = "sh", [AGENT_SCAN_PYTHON] = "py", [AGENT_SCAN_JAVASCRIPT] = "js"},
	{[AGENT_SCAN_SHELL] = "bash", [AGENT_SCAN_PYTHON] = "python3",
	 [AGENT_SCAN_JAVASCRIPT] = "node"},
};

const char *agent_scan_lang_name(agent_scan_lang lang)
{
	return base_name_of(BASE_NAMES(lang_names[0]), (int)lang, "unknown");
}

bool agent_scan_lang_parse(const char *name, agent_scan_lang *out)
{
	for (size_t row = 0; row < BASE_COUNT(lang_names); row++) {
		int i = base_name_index(BASE_NAMES(lang_names[row]), name);
		if (i >= 0) {
			*out = (agent_scan_lang)i;
			return true;
		}
	}
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The interpreter a "#!" line names: its basename, or env's argument. */
static bool shebang_lang(const char *code, size_t len, agent_scan_lang *out)
{
	if (code == NULL || len < 3 || code[0] != '#' || code[1] != '!')
		return false;
	char line[256];
	size_t n = 0;
	for (size_t i = 2; i < len && code[i] != '\n' && n + 1 < sizeof(line); i++)
		line[n++] = code[i];
	line[n] = '\0';
	char *save = NULL;
	char *word = strtok_r(line, " \t\r", &save);
	if (word == NULL)
		return false;
	const char *base = strrchr(word, '/');
	base = base != NULL ? base + 1 : word;
	if (strcmp(base, "env") == 0) {
		do
			word = strtok_r(NULL, " \t\r", &save);
		while (word != NULL && word[0] == '-');
		if (word == NULL)
			return false;
		base = word;
	}
	static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"};
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++) {
		if (strcmp(base, shells[i]) == 0) {
			*out = AGENT_SCAN_SHELL;
			return true;
		}
	}
	if (strncmp(base, "python", 6) == 0) {
		const char *v = base + 6;
		while (*v == '.' || (*v >= '0' && *v <= '9'))
			v++;
		if (*v == '\0') {
			*out = AGENT_SCAN_PYTHON;
			return true;
		}
	}
	if (strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0) {
		*out = AGENT_SCAN_JAVASCRIPT;
		return true;
	}
	return false;
}

bool agent_scan_lang_guess(const char *path, const char *code, size_t len,
                           agent_scan_lang *out)
{
	if (path != NULL) {
		const char *base = strrchr(path, '/');
		base = base != NULL ? base + 1 : path;
		static const struct {
			const char *ext;
			agent_scan_lang lang;
		} exts[] = {
			{".sh", AGENT_SCAN_SHELL}, {".bash", AGENT_SCAN_SHELL},
			{".py", AGENT_SCAN_PYTHON}, {".js", AGENT_SCAN_JAVASCRIPT},
			{".mjs", AGENT_SCAN_JAVASCRIPT}, {".cjs", AGENT_SCAN_JAVASCRIPT},
		};
		for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
			if (ends_with(base, exts[i].ext)) {
				*out = exts[i].lang;
				return true;
			}
		}
	}
	return shebang_lang(code, len, out);
}

static const char *const severity_names[AGENT_SCAN_SEVERITY_COUNT] = {
	[AGENT_SCAN_NONE] = "none",
	[AGENT_SCAN_LOW] = "low",
	[AGENT_SCAN_MEDIUM] = "medium",
	[AGENT_SCAN_HIGH] = "high",
	[AGENT_SCAN_CRITICAL] = "critical",
};

const char *agent_scan_severity_name(agent_scan_severity s)
{
	return base_name_of(BASE_NAMES(severity_names), (int)s, "unknown");
}

bool agent_scan_severity_parse(const char *s, agent_scan_severity *out)
{
	/* "none" is what a scan finds, never a rule's severity. */
	int i = base_name_index(BASE_NAMES(severity_names), s);
	if (i <= AGENT_SCAN_NONE)
		return false;
	*out = (agent_scan_severity)i;
	return true;
}

/* ---- matching ---------------------------------------------------------- */

/*
 * PCRE2's match limit counts per start position, so a search over a long
 * subject can still cost (start positions x limit). Searches therefore run
 * in windows of SCAN_WINDOW start positions (pcre2_set_offset_limit), and
 * the clock is checked between windows: a scan that exceeds SCAN_BUDGET_S
 * stops with a "scanner.timeout" finding instead of hanging the caller.
 */
#define SCAN_WINDOW 4096
#define SCAN_MATCH_LIMIT 200000
#define SCAN_BUDGET_S 20

struct matcher {
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	pcre2_jit_stack *jit;
	int64_t deadline;       /* base_now_ns */
	bool timed_out;
};

static bool matcher_init(struct matcher *m)
{
	memset(m, 0, sizeof(*m));
	m->md = pcre2_match_data_create(1, NULL);
	m->mctx = pcre2_match_context_create(NULL);
	m->jit = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, NULL);
	if (m->md == NULL || m->mctx == NULL || m->jit == NULL)
		return scan_fail("out of memory");
	pcre2_jit_stack_assign(m->mctx, NULL, m->jit);
	pcre2_set_match_limit(m->mctx, SCAN_MATCH_LIMIT);
	pcre2_set_depth_limit(m->mctx, SCAN_MATCH_LIMIT);
	pcre2_set_heap_limit(m->mctx, 64 * 1024); /* KiB */
	m->deadline = base_now_ns() + (int64_t)SCAN_BUDGET_S * 1000 * BASE_NS_PER_MS;
	return true;
}

static void matcher_finish(struct matcher *m)
{
	pcre2_match_data_free(m->md);
	pcre2_match_context_free(m->mctx);
	pcre2_jit_stack_free(m->jit);
}

static bool out_of_time(struct matcher *m)
{
	if (m->timed_out)
		return true;
	if (base_now_ns() >= m->deadline)
		m->timed_out = true;
	return m->timed_out;
}

enum mres { M_NO, M_YES, M_LIMIT };

/*
 * The first match of `code` in subject[0, len) that starts at or after
 * `start`; the whole subject is visible to lookbehind and lookahead.
 */
static enum mres search(struct matcher *m, const pcre2_code *code, const char *subject,
                        size_t len, size_t start, size_t *ms, size_t *me)
{
	size_t pos = start;
	for (;;) {
		if (out_of_time(m))
			return M_LIMIT;
		size_t limit = len - pos > SCAN_WINDOW ? pos + SCAN_WINDOW : len;
		pcre2_set_offset_limit(m->mctx, limit);
		int rc = pcre2_match(code, (PCRE2_SPTR)subject, len, pos, 0, m->md, m->mctx);
		if (rc >= 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
			*ms = ov[0];
			*me = ov[1] < ov[0] ? ov[0] : ov[1]; /* \K can pass the end */
			return M_YES;
		}
		if (rc != PCRE2_ERROR_NOMATCH)
			return M_LIMIT; /* match, depth, heap or JIT stack limit */
		if (limit >= len)
			return M_NO;
		pos = limit + 1;
	}
}

static enum mres any_matches(struct matcher *m, const struct pattern_list *p,
                             const char *subject, size_t len)
{
	size_t s, e;
	for (size_t i = 0; i < p->n; i++) {
		enum mres r = search(m, p->v[i], subject, len, 0, &s, &e);
		if (r != M_NO)
			return r;
	}
	return M_NO;
}

struct results {
	agent_scan_finding *v;
	size_t n, cap;
	bool oom;
};

static void results_free(struct results *res)
{
	for (size_t k = 0; k < res->n; k++) {
		free((char *)res->v[k].rule_id);
		free((char *)res->v[k].message);
		free((char *)res->v[k].excerpt);
	}
	free(res->v);
}

static char *make_excerpt(const char *s, size_t len)
{
	enum { MAX = 120 };
	char *out = malloc(MAX + 8);
	if (out == NULL)
		return NULL;
	size_t o = 0, i = 0;
	while (i < len && o < MAX) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			out[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
			i++;
			continue;
		}
		/* A complete, shortest-form UTF-8 sequence is copied; anything
		 * else becomes U+FFFD. */
		size_t need = agent_utf8_seq(s + i, len - i);
		bool ok = need > 0;
		if (ok && o + need <= MAX) {
			memcpy(out + o, s + i, need);
			o += need;
			i += need;
		} else if (ok) {
			break;
		} else {
			if (o + 3 > MAX)
				break;
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	if (i < len) {
		memcpy(out + o, "\xe2\x80\xa6", 3); /* … */
		o += 3;
	}
	out[o] = '\0';
	return out;
}

static bool add_finding(struct results *res, const char *id, agent_scan_severity sev,
                        int line, const char *message, const char *text, size_t len)
{
	for (size_t i = 0; i < res->n; i++)
		if (res->v[i].line == line && strcmp(res->v[i].rule_id, id) == 0 &&
		    strcmp(res->v[i].message, message) == 0)
			return true;
	if (res->n == res->cap) {
		size_t cap = res->cap ? res->cap * 2 : 16;
		agent_scan_finding *v = realloc(res->v, cap * sizeof(*v));
		if (v == NULL) {
			res->oom = true;
			return false;
		}
		res->v = v;
		res->cap = cap;
	}
	agent_scan_finding *f = &res->v[res->n];
	f->rule_id = strdup(id);
	f->message = strdup(message);
	f->excerpt = make_excerpt(text, len);
	f->severity = sev;
	f->line = line;
	if (f->rule_id == NULL || f->message == NULL || f->excerpt == NULL) {
		free((char *)f->rule_id);
		free((char *)f->message);
		free((char *)f->excerpt);
		res->oom = true;
		return false;
	}
	res->n++;
	return true;
}

static void limit_finding(struct matcher *m, struct results *res, const struct rule *rule,
                          int line)
{
	if (m->timed_out)
		return; /* reported once, by scan_with() */
	char msg[200];
	snprintf(msg, sizeof(msg),
	         "rule %s could not be evaluated on this input (regex limits); review it yourself",
	         rule->id);
	add_finding(res, "scanner.limit", AGENT_SCAN_MEDIUM, line, msg, "", 0);
}

/* One rule's pass over the normalised text (see run_rule). */
struct rule_run {
	struct matcher *m;
	const struct rule *rule;
	const struct norm *n;
	struct results cand;   /* owned: results_free() */
	bool limited;          /* a regex limit stopped the pass */
	int limited_line;
};

static void run_stop(struct rule_run *rr, size_t off)
{
	rr->limited = true;
	rr->limited_line = scan_norm_line_at(rr->n, off);
}

/* A file-scope match text[s, e): matches may span lines, so "unless_line"
 * looks at the line [ls, le) where the match starts. */
static void file_match(struct rule_run *rr, size_t s, size_t e, size_t ls, size_t le)
{
	const char *t = rr->n->text;
	enum mres u = any_matches(rr->m, &rr->rule->unless, t + s, e - s);
	if (u == M_NO)
		u = any_matches(rr->m, &rr->rule->unless_line, t + ls, le - ls);
	if (u == M_LIMIT)
		run_stop(rr, s);
	else if (u == M_NO)
		add_finding(&rr->cand, rr->rule->id, rr->rule->severity, scan_norm_line_at(rr->n, s),
		            rr->rule->message, t + s, e - s);
}

/* Line scope: every match within the logical line [ls, le) from the one
 * at s on, with the line as the whole subject. */
static void line_matches(struct rule_run *rr, const pcre2_code *code, size_t ls, size_t le,
                         size_t s)
{
	const struct rule *rule = rr->rule;
	const char *line = rr->n->text + ls;
	size_t llen = le - ls;
	size_t lpos = s - ls;
	while (lpos <= llen) {
		size_t a, b;
		enum mres lr = search(rr->m, code, line, llen, lpos, &a, &b);
		if (lr == M_NO)
			break;
		if (lr == M_LIMIT) {
			run_stop(rr, ls);
			break;
		}
		enum mres u = any_matches(rr->m, &rule->unless, line + a, b - a);
		if (u == M_NO)
			u = any_matches(rr->m, &rule->unless_line, line, llen);
		if (u == M_LIMIT) {
			run_stop(rr, ls + a);
			break;
		}
		if (u == M_NO)
			add_finding(&rr->cand, rule->id, rule->severity, scan_norm_line_at(rr->n, ls + a),
			            rule->message, line + a, b - a);
		lpos = b > a ? b : a + 1;
	}
}

/* Every match of one of the rule's patterns, as candidates. */
static void pattern_matches(struct rule_run *rr, const pcre2_code *code)
{
	const char *t = rr->n->text;
	size_t len = rr->n->len;
	size_t pos = 0;
	while (pos <= len && !rr->limited) {
		size_t s, e;
		enum mres r = search(rr->m, code, t, len, pos, &s, &e);
		if (r == M_NO)
			break;
		if (r == M_LIMIT) {
			run_stop(rr, pos);
			break;
		}
		size_t ls = s, le = s;
		while (ls > 0 && t[ls - 1] != '\n')
			ls--;
		while (le < len && t[le] != '\n')
			le++;
		if (rr->rule->scope == SCOPE_FILE) {
			file_match(rr, s, e, ls, le);
			pos = e > s ? e : s + 1;
		} else {
			line_matches(rr, code, ls, le, s);
			pos = le + 1;
		}
	}
}

/* Whether each of the rule's "requires" patterns matches somewhere. One
 * that hits a regex limit is reported (at the first candidate's line)
 * and counts as not matching. */
static bool requirements_met(struct rule_run *rr, struct results *res)
{
	const struct rule *rule = rr->rule;
	for (size_t q = 0; q < rule->requires.n; q++) {
		struct pattern_list one = {&rule->requires.v[q], 1};
		enum mres r = any_matches(rr->m, &one, rr->n->text, rr->n->len);
		if (r == M_LIMIT)
			limit_finding(rr->m, res, rule, rr->cand.v[0].line);
		if (r != M_YES)
			return false;
	}
	return true;
}

/*
 * Runs one rule over the normalised text. Candidate findings go to a
 * scratch list first: the rule's "requires" patterns are checked once a
 * candidate exists, and decide whether they count.
 */
static void run_rule(struct matcher *m, const struct rule *rule, const struct norm *n,
                     struct results *res)
{
	struct rule_run rr = {.m = m, .rule = rule, .n = n, .limited_line = 1};
	for (size_t p = 0; p < rule->patterns.n && !rr.limited; p++)
		pattern_matches(&rr, rule->patterns.v[p]);
	if (rr.limited) {
		limit_finding(m, res, rule, rr.limited_line);
	} else if (rr.cand.n > 0 && requirements_met(&rr, res)) {
		for (size_t k = 0; k < rr.cand.n; k++) {
			const agent_scan_finding *f = &rr.cand.v[k];
			add_finding(res, f->rule_id, f->severity, f->line, f->message, f->excerpt,
			            strlen(f->excerpt));
		}
	}
	if (rr.cand.oom)
		res->oom = true;
	results_free(&rr.cand);
}

static int finding_cmp(const void *pa, const void *pb)
{
	const agent_scan_finding *a = pa, *b = pb;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	return strcmp(a->rule_id, b->rule_id);
}

void agent_scan_result_destroy(agent_scan_result *res)
{
	if (res == NULL)
		return;
	for (size_t i = 0; i < res->count; i++) {
		free((char *)res->findings[i].rule_id);
		free((char *)res->findings[i].message);
		free((char *)res->findings[i].excerpt);
	}
	free(res->findings);
	free(res);
}

/* The scan proper, with an optional single rule (for examples). */
static agent_scan_result *scan_with(const agent_scan_rules *r, const struct rule *only,
                                    agent_scan_lang lang, const char *code, size_t len)
{
	if ((unsigned)lang >= AGENT_SCAN_LANG_COUNT) {
		scan_fail("unknown language");
		return NULL;
	}
	if (len > AGENT_SCAN_MAX_INPUT) {
		scan_fail("input too large (%zu bytes; the limit is %u)", len, AGENT_SCAN_MAX_INPUT);
		return NULL;
	}
	struct norm n;
	if (!scan_normalize(lang, code != NULL ? code : "", code != NULL ? len : 0, &n))
		return NULL;
	struct matcher m;
	struct results res = {0};
	agent_scan_result *out = NULL;
	if (!matcher_init(&m))
		goto done;
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *rule = r->v[i];
		if (only != NULL && rule != only)
			continue;
		if ((rule->langs & (1u << lang)) == 0)
			continue;
		run_rule(&m, rule, &n, &res);
		if (res.oom)
			break;
		if (m.timed_out) {
			char msg[200];
			snprintf(msg, sizeof(msg),
			         "the scan stopped after %d s at rule %s; later rules were not "
			         "evaluated: review this code yourself", SCAN_BUDGET_S, rule->id);
			add_finding(&res, "scanner.timeout", AGENT_SCAN_MEDIUM, 1, msg, "", 0);
			break;
		}
	}
	if (res.oom) {
		scan_fail("out of memory");
		goto done;
	}
	out = calloc(1, sizeof(*out));
	if (out == NULL) {
		scan_fail("out of memory");
		goto done;
	}
	if (res.n > 1)
		qsort(res.v, res.n, sizeof(*res.v), finding_cmp);
	out->findings = res.v;
	out->count = res.n;
	out->worst = AGENT_SCAN_NONE;
	for (size_t i = 0; i < res.n; i++)
		if (res.v[i].severity > out->worst)
			out->worst = res.v[i].severity;
	res.v = NULL;
	res.n = 0;
done:
	results_free(&res);
	matcher_finish(&m);
	scan_norm_free(&n);
	return out;
}

agent_scan_result *agent_scan(const agent_scan_rules *r, agent_scan_lang lang,
                              const char *code, size_t len)
{
	return scan_with(r, NULL, lang, code, len);
}

static bool has_rule(const agent_scan_result *res, const char *id)
{
	for (size_t i = 0; i < res->count; i++)
		if (strcmp(res->findings[i].rule_id, id) == 0)
			return true;
	return false;
}

bool agent_scan_rules_check_examples(const agent_scan_rules *r, size_t *checked)
{
	size_t count = 0;
	if (checked != NULL)
		*checked = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *rule = r->v[i];
		for (int pass = 0; pass < 2; pass++) {
			const struct example *ex = pass == 0 ? rule->flag : rule->clean;
			size_t nex = pass == 0 ? rule->n_flag : rule->n_clean;
			for (size_t k = 0; k < nex; k++) {
				agent_scan_result *res = scan_with(r, rule, ex[k].lang, ex[k].code,
				                                   strlen(ex[k].code));
				if (res == NULL)
					return false;
				bool hit = has_rule(res, rule->id);
				bool limited = has_rule(res, "scanner.limit");
				agent_scan_result_destroy(res);
				count++;
				if (limited || hit != (pass == 0))
					return scan_fail("rule %s: %s example %zu (%s) %s: %s", rule->id,
					                 pass == 0 ? "flag" : "clean", k + 1,
					                 agent_scan_lang_name(ex[k].lang),
					                 limited ? "hit the regex limits"
					                 : pass == 0 ? "was not flagged" : "was flagged",
					                 ex[k].code);
			}
		}
	}
	if (checked != NULL)
		*checked = count;
	return true;
}
