/*
 * agent/safety/scan_rules — the scanner's rules: JSON documents (cJSON)
 * checked key by key, their patterns compiled (PCRE2), merged into a rule
 * set by id; the built-in copy, the data and source directories, the
 * user's extensions. See scan.h.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/safety/scan-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "config.h"

/* Generated at build time from agent/safety/rules/scan-rules.json. */
extern const char agent_scan_builtin_json[];
extern const size_t agent_scan_builtin_json_len;

static void patterns_free(struct pattern_list *p)
{
	for (size_t i = 0; i < p->n; i++)
		pcre2_code_free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static void examples_free(struct example *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].code);
	free(e);
}

static void rule_free(struct rule *r)
{
	if (r == NULL)
		return;
	free(r->id);
	free(r->message);
	patterns_free(&r->patterns);
	patterns_free(&r->unless);
	patterns_free(&r->unless_line);
	patterns_free(&r->requires);
	examples_free(r->flag, r->n_flag);
	examples_free(r->clean, r->n_clean);
	free(r);
}

agent_scan_rules *agent_scan_rules_create(void)
{
	agent_scan_rules *r = calloc(1, sizeof(*r));
	if (r == NULL)
		scan_fail("out of memory");
	return r;
}

void agent_scan_rules_destroy(agent_scan_rules *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++)
		rule_free(r->v[i]);
	free(r->v);
	free(r->origin);
	free(r);
}

size_t agent_scan_rules_count(const agent_scan_rules *r)
{
	return r->n;
}

const char *agent_scan_rules_origin(const agent_scan_rules *r)
{
	return r->origin != NULL ? r->origin : "";
}

static bool origin_add(agent_scan_rules *r, const char *name)
{
	size_t old = r->origin ? strlen(r->origin) : 0;
	char *o = realloc(r->origin, old + strlen(name) + 4);
	if (o == NULL)
		return scan_fail("out of memory");
	if (old == 0)
		strcpy(o, name);
	else {
		strcpy(o + old, " + ");
		strcpy(o + old + 3, name);
	}
	r->origin = o;
	return true;
}

/* Line and column (1-based) of byte offset `off` in text. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

struct loader {
	const char *name; /* the document, for messages */
	int index;        /* 1-based rule number */
	const char *id;   /* the rule's id once known */
};

static bool rule_fail(const struct loader *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool rule_fail(const struct loader *ld, const char *fmt, ...)
{
	char what[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (ld->id != NULL)
		return scan_fail("%s: rule %d (\"%s\"): %s", ld->name, ld->index, ld->id, what);
	return scan_fail("%s: rule %d: %s", ld->name, ld->index, what);
}

static bool valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 64)
		return false;
	if (!(id[0] >= 'a' && id[0] <= 'z'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
		          c == '-' || c == '_';
		if (!ok)
			return false;
	}
	return true;
}

static bool compile_list(const struct loader *ld, const cJSON *arr, const char *key,
                         bool required, bool caseless, struct pattern_list *out)
{
	if (arr == NULL) {
		if (required)
			return rule_fail(ld, "\"%s\" is missing", key);
		return true;
	}
	if (!cJSON_IsArray(arr))
		return rule_fail(ld, "\"%s\" must be an array of strings", key);
	int n = cJSON_GetArraySize(arr);
	if (n == 0 && required)
		return rule_fail(ld, "\"%s\" must not be empty", key);
	out->v = calloc((size_t)n + 1, sizeof(*out->v));
	if (out->v == NULL)
		return scan_fail("out of memory");
	int i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, arr) {
		i++;
		if (!cJSON_IsString(item) || item->valuestring[0] == '\0')
			return rule_fail(ld, "\"%s\" %d must be a non-empty string", key, i);
		int err = 0;
		PCRE2_SIZE erroff = 0;
		uint32_t opts = PCRE2_MULTILINE | PCRE2_USE_OFFSET_LIMIT | (caseless ? PCRE2_CASELESS : 0);
		pcre2_code *code = pcre2_compile((PCRE2_SPTR)item->valuestring,
		                                 PCRE2_ZERO_TERMINATED, opts, &err,
		                                 &erroff, NULL);
		if (code == NULL) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(err, msg, sizeof(msg));
			return rule_fail(ld, "\"%s\" %d does not compile: %s at offset %zu",
			                 key, i, (const char *)msg, (size_t)erroff);
		}
		/* JIT is an optimisation; the interpreter is the fallback. */
		(void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
		out->v[out->n++] = code;
	}
	return true;
}

static bool load_examples(const struct loader *ld, const cJSON *arr, const char *key,
                          agent_scan_lang deflang, struct example **out, size_t *count)
{
	if (arr == NULL)
		return true;
	if (!cJSON_IsArray(arr))
		return rule_fail(ld, "\"examples\".\"%s\" must be an array", key);
	int n = cJSON_GetArraySize(arr);
	*out = calloc((size_t)n + 1, sizeof(**out));
	if (*out == NULL)
		return scan_fail("out of memory");
	int i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, arr) {
		i++;
		agent_scan_lang lang = deflang;
		const char *code = NULL;
		if (cJSON_IsString(item)) {
			code = item->valuestring;
		} else if (cJSON_IsObject(item)) {
			const cJSON *l = cJSON_GetObjectItemCaseSensitive(item, "lang");
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(item, "code");
			if (!cJSON_IsString(l) || !agent_scan_lang_parse(l->valuestring, &lang))
				return rule_fail(ld, "example \"%s\" %d: \"lang\" must name a language", key, i);
			if (!cJSON_IsString(c))
				return rule_fail(ld, "example \"%s\" %d: \"code\" must be a string", key, i);
			code = c->valuestring;
		} else {
			return rule_fail(ld, "example \"%s\" %d must be a string or {\"lang\", \"code\"}", key, i);
		}
		(*out)[*count].lang = lang;
		(*out)[*count].code = strdup(code);
		if ((*out)[*count].code == NULL)
			return scan_fail("out of memory");
		(*count)++;
	}
	return true;
}

static const char *const rule_keys[] = {
	"id", "languages", "severity", "message", "patterns", "unless", "unless_line",
	"requires", "scope", "caseless", "examples", "disabled", "comment",
};

static bool known_rule_keys(const struct loader *ld, const cJSON *obj)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, obj) {
		bool known = false;
		for (size_t k = 0; k < sizeof(rule_keys) / sizeof(rule_keys[0]); k++)
			if (strcmp(item->string, rule_keys[k]) == 0)
				known = true;
		if (!known)
			return rule_fail(ld, "unknown key \"%s\"", item->string);
	}
	return true;
}

/* "languages": the rule's language bits; the first one is the examples'
 * default language. */
static bool parse_rule_languages(const struct loader *ld, const cJSON *obj, struct rule *r)
{
	const cJSON *langs = cJSON_GetObjectItemCaseSensitive(obj, "languages");
	if (!cJSON_IsArray(langs) || cJSON_GetArraySize(langs) == 0)
		return rule_fail(ld, "\"languages\" must be a non-empty array "
		                     "(\"shell\", \"python\", \"javascript\")");
	bool first = true;
	const cJSON *item;
	cJSON_ArrayForEach(item, langs) {
		agent_scan_lang l;
		if (!cJSON_IsString(item) || !agent_scan_lang_parse(item->valuestring, &l))
			return rule_fail(ld, "\"languages\": unknown language %s%s%s",
			                 cJSON_IsString(item) ? "\"" : "",
			                 cJSON_IsString(item) ? item->valuestring : "(not a string)",
			                 cJSON_IsString(item) ? "\"" : "");
		r->langs |= 1u << l;
		if (first)
			r->first_lang = l;
		first = false;
	}
	return true;
}

/* "severity", "message", "scope", "caseless" (into *caseless, for the
 * patterns) and "comment". */
static bool parse_rule_settings(const struct loader *ld, const cJSON *obj, struct rule *r,
                                bool *caseless)
{
	const cJSON *sev = cJSON_GetObjectItemCaseSensitive(obj, "severity");
	if (!cJSON_IsString(sev) || !agent_scan_severity_parse(sev->valuestring, &r->severity))
		return rule_fail(ld, "\"severity\" must be \"low\", \"medium\", \"high\" or \"critical\"");

	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
	if (!cJSON_IsString(msg) || msg->valuestring[0] == '\0')
		return rule_fail(ld, "\"message\" must be a non-empty string");
	r->message = strdup(msg->valuestring);
	if (r->message == NULL)
		return scan_fail("out of memory");

	const cJSON *scope = cJSON_GetObjectItemCaseSensitive(obj, "scope");
	if (scope != NULL) {
		if (cJSON_IsString(scope) && strcmp(scope->valuestring, "line") == 0)
			r->scope = SCOPE_LINE;
		else if (cJSON_IsString(scope) && strcmp(scope->valuestring, "file") == 0)
			r->scope = SCOPE_FILE;
		else
			return rule_fail(ld, "\"scope\" must be \"line\" or \"file\"");
	}

	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(obj, "caseless");
	if (cl != NULL && !cJSON_IsBool(cl))
		return rule_fail(ld, "\"caseless\" must be true or false");
	*caseless = cJSON_IsTrue(cl);

	const cJSON *comment = cJSON_GetObjectItemCaseSensitive(obj, "comment");
	if (comment != NULL && !cJSON_IsString(comment))
		return rule_fail(ld, "\"comment\" must be a string");
	return true;
}

static bool compile_rule_patterns(const struct loader *ld, const cJSON *obj, struct rule *r,
                                  bool caseless)
{
	return compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "patterns"), "patterns",
	                    true, caseless, &r->patterns) &&
	       compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "unless"), "unless",
	                    false, caseless, &r->unless) &&
	       compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "unless_line"),
	                    "unless_line", false, caseless, &r->unless_line) &&
	       compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "requires"), "requires",
	                    false, caseless, &r->requires);
}

/* "examples": {"flag": [...], "clean": [...]}, both optional. */
static bool parse_rule_examples(const struct loader *ld, const cJSON *obj, struct rule *r)
{
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(obj, "examples");
	if (ex == NULL)
		return true;
	if (!cJSON_IsObject(ex))
		return rule_fail(ld, "\"examples\" must be an object {\"flag\": [...], \"clean\": [...]}");
	const cJSON *item;
	cJSON_ArrayForEach(item, ex) {
		if (strcmp(item->string, "flag") != 0 && strcmp(item->string, "clean") != 0)
			return rule_fail(ld, "\"examples\": unknown key \"%s\"", item->string);
	}
	return load_examples(ld, cJSON_GetObjectItemCaseSensitive(ex, "flag"), "flag",
	                     r->first_lang, &r->flag, &r->n_flag) &&
	       load_examples(ld, cJSON_GetObjectItemCaseSensitive(ex, "clean"), "clean",
	                     r->first_lang, &r->clean, &r->n_clean);
}

/* One rule of the array. *out, once set, is the caller's to rule_free()
 * even when this fails. */
static bool parse_rule(const struct loader *ld_in, const cJSON *obj, struct rule **out)
{
	struct loader ld = *ld_in;
	*out = NULL;
	if (!cJSON_IsObject(obj))
		return rule_fail(&ld, "must be an object");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
	if (cJSON_IsString(id))
		ld.id = id->valuestring; /* names the rule in the messages below */
	if (!known_rule_keys(&ld, obj))
		return false;
	if (!cJSON_IsString(id))
		return rule_fail(&ld, "\"id\" must be a string");
	if (!valid_id(id->valuestring))
		return rule_fail(&ld, "\"id\" \"%s\" must be lower-case letters, digits, '.', '-', '_' "
		                      "(starting with a letter, at most 64)", id->valuestring);

	struct rule *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return scan_fail("out of memory");
	*out = r;
	r->id = strdup(id->valuestring);
	if (r->id == NULL)
		return scan_fail("out of memory");

	const cJSON *disabled = cJSON_GetObjectItemCaseSensitive(obj, "disabled");
	if (disabled != NULL && !cJSON_IsBool(disabled))
		return rule_fail(&ld, "\"disabled\" must be true or false");
	if (cJSON_IsTrue(disabled)) {
		r->disabled = true;
		return true; /* nothing else is needed to remove a rule */
	}
	bool caseless = false;
	return parse_rule_languages(&ld, obj, r) && parse_rule_settings(&ld, obj, r, &caseless) &&
	       compile_rule_patterns(&ld, obj, r, caseless) && parse_rule_examples(&ld, obj, r);
}

static ssize_t find_rule(const agent_scan_rules *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i]->id, id) == 0)
			return (ssize_t)i;
	return -1;
}

/* A rules document's outer shape: an object with "version" 1, a "rules"
 * array and perhaps a "comment". */
static bool rules_doc_shape(const cJSON *doc, const char *name)
{
	if (!cJSON_IsObject(doc))
		return scan_fail("%s: the top level must be a JSON object with \"version\" and \"rules\"",
		                 name);
	const cJSON *item;
	cJSON_ArrayForEach(item, doc) {
		if (strcmp(item->string, "version") != 0 && strcmp(item->string, "rules") != 0 &&
		    strcmp(item->string, "comment") != 0)
			return scan_fail("%s: unknown top-level key \"%s\"", name, item->string);
	}
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
	if (!cJSON_IsNumber(version) || version->valuedouble != 1)
		return scan_fail("%s: \"version\" must be 1", name);
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "rules")))
		return scan_fail("%s: \"rules\" must be an array", name);
	return true;
}

/* The parsed document, of the right shape; the caller owns it
 * (cJSON_Delete). NULL: scan_fail() said why. */
static cJSON *parse_rules_doc(const char *json, size_t len, const char *name)
{
	if (len > AGENT_SCAN_MAX_INPUT) {
		scan_fail("%s: too large (%zu bytes)", name, len);
		return NULL;
	}
	const char *end = NULL;
	cJSON *doc = cJSON_ParseWithLengthOpts(json, len, &end, false);
	if (doc == NULL) {
		size_t off = end != NULL && end >= json && end <= json + len ? (size_t)(end - json) : 0;
		int line, col;
		line_col(json, off, &line, &col);
		if (len == 0)
			scan_fail("%s: empty file, expected a JSON object", name);
		else
			scan_fail("%s:%d:%d: malformed JSON", name, line, col);
		return NULL;
	}
	if (!rules_doc_shape(doc, name)) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/*
 * Parses the "rules" array into parsed[] (room for all of them), counting
 * in *n_parsed what the caller must free even on failure. Refuses an id
 * twice in the document, and disabling a rule r does not have.
 */
static bool parse_rules(const agent_scan_rules *r, const cJSON *rules, const char *name,
                        struct rule **parsed, size_t *n_parsed)
{
	int index = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, rules) {
		struct loader ld = {name, ++index, NULL};
		struct rule *rule = NULL;
		if (!parse_rule(&ld, item, &rule)) {
			rule_free(rule);
			return false;
		}
		parsed[(*n_parsed)++] = rule;
		ld.id = rule->id;
		for (size_t k = 0; k + 1 < *n_parsed; k++)
			if (strcmp(parsed[k]->id, rule->id) == 0)
				return rule_fail(&ld, "duplicate id (also rule %zu)", k + 1);
		if (rule->disabled && find_rule(r, rule->id) < 0)
			return rule_fail(&ld, "disables a rule that does not exist");
	}
	return true;
}

/*
 * Merges the parsed rules into r, taking them out of parsed[] (r owns
 * them then): a disabled one removes its id, a known id is replaced in
 * place, a new one appended. Fails only before r's rules change.
 */
static bool merge_rules(agent_scan_rules *r, struct rule **parsed, size_t n_parsed,
                        const char *name)
{
	if (r->n + n_parsed > r->cap) {
		size_t cap = r->n + n_parsed + 16;
		struct rule **v = realloc(r->v, cap * sizeof(*v));
		if (v == NULL)
			return scan_fail("out of memory");
		r->v = v;
		r->cap = cap;
	}
	if (!origin_add(r, name))
		return false;
	for (size_t k = 0; k < n_parsed; k++) {
		struct rule *rule = parsed[k];
		parsed[k] = NULL;
		ssize_t at = find_rule(r, rule->id);
		if (rule->disabled) {
			if (at >= 0) {
				rule_free(r->v[at]);
				memmove(&r->v[at], &r->v[at + 1], (r->n - (size_t)at - 1) * sizeof(*r->v));
				r->n--;
			}
			rule_free(rule);
		} else if (at >= 0) {
			rule_free(r->v[at]);
			r->v[at] = rule;
		} else {
			r->v[r->n++] = rule;
		}
	}
	return true;
}

/* All or nothing: the document's rules are merged only once every one of
 * them has parsed. */
bool agent_scan_rules_add_json(agent_scan_rules *r, const char *json, size_t len,
                               const char *name)
{
	cJSON *doc = parse_rules_doc(json, len, name);
	if (doc == NULL)
		return false;
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(doc, "rules");
	size_t n_parsed = 0;
	struct rule **parsed = calloc((size_t)cJSON_GetArraySize(rules) + 1, sizeof(*parsed));
	bool ok;
	if (parsed == NULL)
		ok = scan_fail("out of memory");
	else
		ok = parse_rules(r, rules, name, parsed, &n_parsed) &&
		     merge_rules(r, parsed, n_parsed, name);
	for (size_t k = 0; k < n_parsed; k++)
		rule_free(parsed[k]);
	free(parsed);
	cJSON_Delete(doc);
	return ok;
}

/* Reads a whole file (at most AGENT_SCAN_MAX_INPUT bytes). With
 * `require_safe`, refuses files others could have written. */
static char *read_file(const char *path, size_t *out_len, bool require_safe, bool *unsafe)
{
	if (unsafe != NULL)
		*unsafe = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		scan_fail("%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		scan_fail("%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		scan_fail("%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (require_safe && ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	                     (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)) {
		scan_fail("%s: refusing a rules file that others can write (owner uid %u, mode %03o)",
		          path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		if (unsafe != NULL)
			*unsafe = true;
		close(fd);
		return NULL;
	}
	if ((uintmax_t)st.st_size > AGENT_SCAN_MAX_INPUT) {
		scan_fail("%s: too large (%jd bytes)", path, (intmax_t)st.st_size);
		close(fd);
		return NULL;
	}
	char *text = base_read_fd(fd, AGENT_SCAN_MAX_INPUT, out_len);
	if (text == NULL)
		scan_fail("%s: %s", path, errno == EFBIG ? "too large" : strerror(errno));
	close(fd);
	return text;
}

bool agent_scan_rules_add_file(agent_scan_rules *r, const char *path)
{
	size_t len;
	char *text = read_file(path, &len, false, NULL);
	if (text == NULL)
		return false;
	bool ok = agent_scan_rules_add_json(r, text, len, path);
	free(text);
	return ok;
}

agent_scan_rules *agent_scan_rules_builtin(void)
{
	agent_scan_rules *r = agent_scan_rules_create();
	if (r == NULL)
		return NULL;
	if (!agent_scan_rules_add_json(r, agent_scan_builtin_json, agent_scan_builtin_json_len,
	                               "built-in")) {
		agent_scan_rules_destroy(r);
		return NULL;
	}
	return r;
}

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* $XDG_CONFIG_HOME/deskhand/scan-rules.json (relative XDG values are
 * ignored, as the specification says), else ~/.config/...; NULL if no home. */
static char *user_rules_path(void)
{
	char dir[PATH_MAX - 32], buf[PATH_MAX];
	if (!agent_own_dir(AGENT_DIR_CONFIG, dir, sizeof(dir)))
		return NULL;
	snprintf(buf, sizeof(buf), "%s/scan-rules.json", dir);
	return strdup(buf);
}

agent_scan_rules *agent_scan_rules_load(const char *explicit_path, bool user_extensions)
{
	agent_scan_rules *r = agent_scan_rules_create();
	if (r == NULL)
		return NULL;
	if (explicit_path != NULL) {
		if (!agent_scan_rules_add_file(r, explicit_path))
			goto fail;
	} else {
		/* The installed copy, so an administrator's edit of it takes effect
		 * without a rebuild; never the source tree's, which an installed
		 * binary must not depend on (nor read: it may be gone, or be
		 * someone else's checkout). A build run in place gets the
		 * compiled-in copy, which is that tree's file as it was built. */
		const char *installed = DESKHAND_DATADIR "/scan-rules.json";
		bool loaded = false;
		if (file_exists(installed)) {
			size_t len;
			bool unsafe;
			char *text = read_file(installed, &len, true, &unsafe);
			if (text == NULL && !unsafe)
				goto fail;
			if (text != NULL) { /* unsafe: the compiled-in copy stands in */
				bool ok = agent_scan_rules_add_json(r, text, len, installed);
				free(text);
				if (!ok)
					goto fail;
				loaded = true;
			}
		}
		if (!loaded && !agent_scan_rules_add_json(r, agent_scan_builtin_json,
		                                          agent_scan_builtin_json_len, "built-in"))
			goto fail;
	}
	if (user_extensions) {
		char *path = user_rules_path();
		if (path != NULL && file_exists(path)) {
			size_t len;
			char *text = read_file(path, &len, true, NULL);
			bool ok = text != NULL && agent_scan_rules_add_json(r, text, len, path);
			free(text);
			free(path);
			if (!ok)
				goto fail;
		} else {
			free(path);
		}
	}
	return r;
fail:
	agent_scan_rules_destroy(r);
	return NULL;
}
