/*
 * agent/safety/audit_verify — the verifier: a log read line by line (its
 * shape, the hash chain, the rule that nothing runs without a yes) and its
 * end held against the head file. See audit.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agent/safety/audit-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

struct id_state {
	char *id;
	unsigned by_user;   /* approvals not yet used by an execution */
	unsigned by_policy;
	int stopped_line;   /* line of a denied/blocked, 0 if none */
	const char *stopped_by;
};

static bool report(agent_audit_report *rep, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool report(agent_audit_report *rep, int line, const char *fmt, ...)
{
	rep->bad_line = line;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rep->problem, sizeof(rep->problem), fmt, ap);
	va_end(ap);
	/* An id quoted from the log is the log writer's text: no terminal controls in it. */
	for (unsigned char *c = (unsigned char *)rep->problem; *c != '\0'; c++) {
		if (*c < 0x20 || *c == 0x7f)
			*c = '?';
		else if (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) /* C1 controls in UTF-8 */
			c[0] = c[1] = '?';
	}
	return false;
}

static bool valid_ts(const char *s)
{
	/* YYYY-MM-DDTHH:MM:SS.mmmZ */
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return false;
	}
	return true;
}

static bool valid_hash(const char *s);

static bool valid_kind(const char *s)
{
	for (unsigned k = 0; k < AGENT_POLICY_KIND_COUNT; k++)
		if (strcmp(s, agent_policy_kind_name((agent_policy_kind)k)) == 0)
			return true;
	return false;
}

static const char *const audit_events[] = {"session", "setting", "proposed", "scanned",
                                           "asked", "approved", "denied", "blocked",
                                           "executed", "conversation"};

/* What the verifier keeps between lines. */
struct verifier {
	agent_audit_report *rep;
	struct id_state *ids;
	size_t n_ids, cap_ids;
	char (*hashes)[AGENT_AUDIT_HASH_HEX + 1]; /* of each line so far */
	size_t cap_hashes;
	agent_audit *learn;                 /* told the last conversation record, or NULL */
	int torn;                           /* the last line, when it has no newline; else 0 */
};

static bool valid_hash(const char *s)
{
	size_t n = 0;
	for (; s[n] != '\0'; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == AGENT_AUDIT_HASH_HEX;
}

/* The chain value after line k (1-based; 0: before the first line). */
static const char *chain_at(const struct verifier *v, size_t k)
{
	return k == 0 ? audit_seed : v->hashes[k - 1];
}

/*
 * The chain: line N carries the hash of line N-1. When it does not, an
 * earlier line it does follow tells that lines were inserted; otherwise
 * line N-1 was changed or lines after it removed.
 */
static bool check_chain(struct verifier *v, const cJSON *o, int lineno)
{
	const cJSON *prev = cJSON_GetObjectItemCaseSensitive(o, "prev");
	if (!cJSON_IsString(prev) || !valid_hash(prev->valuestring))
		return report(v->rep, lineno, "no \"prev\" hash: a line deskhand did not write, "
		              "or a log from before the hash chain");
	size_t before = (size_t)lineno - 1;
	if (strcmp(prev->valuestring, chain_at(v, before)) == 0)
		return true;
	for (size_t k = before; k-- > 0;) {
		if (strcmp(prev->valuestring, chain_at(v, k)) != 0)
			continue;
		char after[48] = "the start of the log";
		if (k > 0)
			snprintf(after, sizeof(after), "line %zu", k);
		if (k + 1 == before)
			return report(v->rep, (int)before, "line %zu was inserted: line %d follows %s",
			              before, lineno, after);
		return report(v->rep, (int)k + 1, "lines %zu-%zu were inserted: line %d follows %s",
		              k + 1, before, lineno, after);
	}
	if (lineno == 1)
		return report(v->rep, 1, "the log does not begin here: its first lines were removed");
	return report(v->rep, lineno, "line %d does not follow line %zu: line %zu was changed, or "
	              "lines after it were removed", lineno, before, before);
}

static bool note_hash(struct verifier *v, const char *line, size_t len, int lineno)
{
	size_t n = (size_t)lineno;
	if (n > v->cap_hashes) {
		size_t c = v->cap_hashes ? v->cap_hashes * 2 : 64;
		void *grown = realloc(v->hashes, c * sizeof(*v->hashes));
		if (grown == NULL)
			return report(v->rep, lineno, "out of memory");
		v->hashes = grown;
		v->cap_hashes = c;
	}
	agent_audit_hash(line, len, v->hashes[n - 1]);
	return true;
}

/*
 * The shape of one line: a JSON object alone on its line, a well-formed
 * "ts", a known "event", and for every event but session and setting a
 * string "id" and a known "kind". *event is set when the line passes.
 */
static bool check_line(agent_audit_report *rep, int lineno, const cJSON *o, const char *end,
                       const char *line_end, const char **event)
{
	for (const char *p = end; p < line_end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return report(rep, lineno, "text after the JSON object");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o, "ts");
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
	const char *e = cJSON_IsString(ev) ? ev->valuestring : NULL;
	bool known = false;
	for (size_t k = 0; e != NULL && k < sizeof(audit_events) / sizeof(audit_events[0]); k++)
		known |= strcmp(e, audit_events[k]) == 0;
	if (!cJSON_IsString(ts) || !valid_ts(ts->valuestring))
		return report(rep, lineno, "missing or malformed \"ts\"");
	if (!known)
		return report(rep, lineno, "unknown or missing \"event\"");
	if (strcmp(e, "conversation") == 0) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
		const cJSON *sha = cJSON_GetObjectItemCaseSensitive(o, "sha256");
		if (!cJSON_IsString(path) || !cJSON_IsString(sha) || !valid_hash(sha->valuestring))
			return report(rep, lineno, "conversation without a \"path\" and \"sha256\"");
	} else if (strcmp(e, "session") != 0 && strcmp(e, "setting") != 0) {
		if (!cJSON_IsString(id) || id->valuestring[0] == '\0')
			return report(rep, lineno, "%s without an \"id\"", e);
		if (!cJSON_IsString(kind) || !valid_kind(kind->valuestring))
			return report(rep, lineno, "%s with a missing or unknown \"kind\"", e);
	}
	*event = e;
	return true;
}

/* The state of an action id, created on its first line; NULL when out of memory. */
static struct id_state *id_state_of(struct verifier *v, const char *id, int lineno)
{
	for (size_t k = 0; k < v->n_ids; k++)
		if (strcmp(v->ids[k].id, id) == 0)
			return &v->ids[k];
	if (v->n_ids == v->cap_ids) {
		size_t c = v->cap_ids ? v->cap_ids * 2 : 32;
		struct id_state *grown = realloc(v->ids, c * sizeof(*grown));
		if (grown == NULL)
			return report(v->rep, lineno, "out of memory"), NULL;
		v->ids = grown;
		v->cap_ids = c;
	}
	struct id_state *st = &v->ids[v->n_ids];
	memset(st, 0, sizeof(*st));
	if ((st->id = strdup(id)) == NULL)
		return report(v->rep, lineno, "out of memory"), NULL;
	v->n_ids++;
	return st;
}

/* What one event does to its action: the rule that nothing runs without a yes. */
static bool apply_event(struct verifier *v, struct id_state *st, const char *event,
                        const cJSON *o, int lineno)
{
	agent_audit_report *rep = v->rep;
	if (strcmp(event, "proposed") == 0) {
		/* Models reuse call ids across turns ("call_1" in every answer): a
		 * new proposal starts the id afresh, and only what happens to it
		 * afterwards counts. */
		st->by_user = st->by_policy = 0;
		st->stopped_line = 0;
		st->stopped_by = NULL;
	} else if (strcmp(event, "approved") == 0) {
		const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "by");
		if (!cJSON_IsString(by) || (strcmp(by->valuestring, "user") != 0 &&
		                            strcmp(by->valuestring, "policy") != 0))
			return report(rep, lineno, "approved without \"by\": \"user\" or \"policy\"");
		if (strcmp(by->valuestring, "user") == 0)
			st->by_user++;
		else
			st->by_policy++;
	} else if (strcmp(event, "denied") == 0 || strcmp(event, "blocked") == 0) {
		if (st->stopped_line == 0) {
			st->stopped_line = lineno;
			st->stopped_by = strcmp(event, "denied") == 0 ? "denied" : "blocked";
		}
	} else if (strcmp(event, "executed") == 0) {
		rep->executed++;
		if (st->stopped_line != 0)
			return report(rep, lineno, "\"%s\" executed after it was %s (line %d)", st->id,
			              st->stopped_by, st->stopped_line);
		if (st->by_user > 0) {
			st->by_user--;
			rep->by_user++;
		} else if (st->by_policy > 0) {
			st->by_policy--;
			rep->by_policy++;
		} else {
			return report(rep, lineno, "\"%s\" executed without an approval", st->id);
		}
	}
	return true;
}

/* One line of the log (llen bytes and its newline). */
static bool verify_line(struct verifier *v, const char *line, size_t llen, int lineno)
{
	const char *end = NULL;
	cJSON *o = cJSON_ParseWithLengthOpts(line, llen, &end, false);
	if (o == NULL || !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return report(v->rep, lineno, "not a JSON object");
	}
	const char *event = NULL;
	bool ok = check_chain(v, o, lineno) && note_hash(v, line, llen + 1, lineno) &&
	          check_line(v->rep, lineno, o, end, line + llen, &event);
	if (ok && strcmp(event, "conversation") == 0 && v->learn != NULL) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
		const cJSON *sha = cJSON_GetObjectItemCaseSensitive(o, "sha256");
		ok = audit_note_conversation(v->learn, path->valuestring, sha->valuestring) ||
		     report(v->rep, lineno, "out of memory");
	} else if (ok && v->learn != NULL) {
		audit_note_line(v->learn);
	}
	if (ok && strcmp(event, "session") != 0 && strcmp(event, "setting") != 0 &&
	    strcmp(event, "conversation") != 0) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		struct id_state *st = id_state_of(v, id->valuestring, lineno);
		ok = st != NULL && apply_event(v, st, event, o, lineno);
	}
	cJSON_Delete(o);
	return ok;
}

static void verifier_finish(struct verifier *v)
{
	for (size_t k = 0; k < v->n_ids; k++)
		free(v->ids[k].id);
	free(v->ids);
	free(v->hashes);
}

/* The lines, the chain and the rules; v's hashes stay for the head's check. */
static bool verify_text(struct verifier *v, const char *text, size_t len)
{
	agent_audit_report *rep = v->rep;
	bool ok = true;
	size_t pos = 0;
	int lineno = 0;
	while (pos < len && ok) {
		if (lineno == INT_MAX)
			return report(rep, lineno, "too many lines");
		lineno++;
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		if (nl == NULL) {
			v->torn = lineno;
			return report(rep, lineno, "incomplete last line (no newline)");
		}
		size_t llen = (size_t)(nl - line);
		pos += llen + 1;
		rep->lines++;
		ok = verify_line(v, line, llen, lineno);
	}
	if (ok)
		memcpy(rep->last, chain_at(v, rep->lines), sizeof(rep->last));
	return ok;
}

bool agent_audit_verify(const char *text, size_t len, agent_audit_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	struct verifier v = {.rep = rep};
	bool ok = verify_text(&v, text, len);
	verifier_finish(&v);
	return ok;
}

/* The end of the log against its head: nothing cut off, changed or added at the end. */
static bool check_head(const struct verifier *v, const char *head, size_t head_len)
{
	agent_audit_report *rep = v->rep;
	cJSON *o = cJSON_ParseWithLength(head, head_len);
	const cJSON *lines = cJSON_GetObjectItemCaseSensitive(o, "lines");
	const cJSON *last = cJSON_GetObjectItemCaseSensitive(o, "last");
	bool shaped = cJSON_IsNumber(lines) && lines->valuedouble >= 0 &&
	              lines->valuedouble <= (double)INT_MAX &&
	              lines->valuedouble == (double)(long)lines->valuedouble &&
	              cJSON_IsString(last) && valid_hash(last->valuestring);
	size_t want = shaped ? (size_t)lines->valuedouble : 0;
	bool ok = false;
	if (!shaped)
		report(rep, 0, "the head file is malformed: the end of the log cannot be checked");
	else if (want > rep->lines)
		report(rep, (int)rep->lines + 1, "missing: the log ends after line %zu but its head "
		       "records %zu lines (the end was cut off)", rep->lines, want);
	else if (strcmp(chain_at(v, want), last->valuestring) != 0)
		report(rep, want ? (int)want : 1, "line %zu is not the line the head records as the "
		       "log's end: it was changed or replaced", want);
	else if (want + 1 == rep->lines) {
		report(rep, (int)want + 1, "after the recorded end (line %zu): not confirmed by the "
		       "head; deskhand was stopped between writing this line and its head (a crash "
		       "or kill, not an edit) or another writer added it; lines 1-%zu verify",
		       want, want);
		rep->unconfirmed = (int)want + 1;
	} else if (want < rep->lines)
		report(rep, (int)want + 1, "after the recorded end (line %zu): %zu lines added by "
		       "another writer (a crash leaves at most one)", want, rep->lines - want);
	else
		ok = true;
	cJSON_Delete(o);
	return ok;
}

/*
 * A last line without its newline is what a write stopped by a crash leaves
 * only when the head records every line before it: then it is named as
 * that; otherwise the report stays what verify_text said.
 */
static void check_torn_end(struct verifier *v, const char *head, size_t head_len)
{
	agent_audit_report *rep = v->rep;
	cJSON *o = cJSON_ParseWithLength(head, head_len);
	const cJSON *lines = cJSON_GetObjectItemCaseSensitive(o, "lines");
	const cJSON *last = cJSON_GetObjectItemCaseSensitive(o, "last");
	size_t whole = (size_t)v->torn - 1;
	if (cJSON_IsNumber(lines) && lines->valuedouble == (double)whole &&
	    cJSON_IsString(last) && strcmp(chain_at(v, whole), last->valuestring) == 0) {
		report(rep, v->torn, "incomplete last line (no newline) after the recorded end "
		       "(line %zu): a write cut short by a crash or kill, not an edit; lines 1-%zu "
		       "verify", whole, whole);
		rep->unconfirmed = v->torn;
	}
	cJSON_Delete(o);
}

bool audit_verify_log(const char *text, size_t len, const char *head, size_t head_len,
                      bool have_head, agent_audit_report *rep, agent_audit *learn)
{
	memset(rep, 0, sizeof(*rep));
	struct verifier v = {.rep = rep, .learn = learn};
	if (learn != NULL)
		(void)audit_note_conversation(learn, NULL, NULL);
	bool ok = verify_text(&v, text, len);
	/* Only a torn last line stopped the reading: every line before it passed. */
	if (!ok && v.torn > 0 && have_head && rep->lines + 1 == (size_t)v.torn)
		check_torn_end(&v, head, head_len);
	if (ok && !have_head)
		ok = report(rep, 0, "the head file is missing: the end of the log cannot be checked");
	else if (ok && have_head)
		ok = check_head(&v, head, head_len);
	verifier_finish(&v);
	return ok;
}

bool agent_audit_verify_head(const char *text, size_t len, const char *head, size_t head_len,
                             agent_audit_report *rep)
{
	return audit_verify_log(text, len, head, head_len, head != NULL, rep, NULL);
}

bool agent_audit_verify_file(const char *path, agent_audit_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	size_t len, head_len = 0;
	char *text = base_read_file(path, AUDIT_MAX_SIZE, &len);
	if (text == NULL)
		return report(rep, 0, "cannot open %s: %s", path, strerror(errno));
	agent_buf hp;
	agent_buf_init(&hp);
	agent_buf_printf(&hp, "%s.head", path);
	char *head = hp.oom ? NULL : audit_head_read(agent_buf_cstr(&hp), &head_len);
	bool ok;
	if (head == NULL && errno != ENOENT)
		ok = report(rep, 0, "cannot read %s: %s", hp.oom ? "the head file" : agent_buf_cstr(&hp),
		            strerror(errno));
	else
		ok = audit_verify_log(text, len, head, head_len, head != NULL, rep, NULL);
	agent_buf_finish(&hp);
	free(head);
	free(text);
	return ok;
}
