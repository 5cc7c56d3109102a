/*
 * agent/safety/audit — JSON-lines audit log: writing with single appends and
 * fsync on decisions, default paths, and the verifier. See audit.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/safety/audit.h"
#include "agent/util/textutil.h"

static _Thread_local char audit_err_buf[512];

const char *agent_audit_error(void)
{
	return audit_err_buf;
}

static bool audit_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static bool audit_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(audit_err_buf, sizeof(audit_err_buf), fmt, ap);
	va_end(ap);
	return false;
}

struct agent_audit {
	int fd;
	char *path;
};

agent_audit *agent_audit_open(const char *path)
{
	agent_audit *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		audit_fail("out of memory");
		return NULL;
	}
	a->path = strdup(path);
	if (a->path == NULL) {
		audit_fail("out of memory");
		free(a);
		return NULL;
	}
	a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (a->fd < 0) {
		audit_fail("cannot open the audit log %s: %s", path, strerror(errno));
		free(a->path);
		free(a);
		return NULL;
	}
	return a;
}

void agent_audit_close(agent_audit *a)
{
	if (a == NULL)
		return;
	(void)fsync(a->fd);
	close(a->fd);
	free(a->path);
	free(a);
}

const char *agent_audit_path(const agent_audit *a)
{
	return a->path;
}

/* ---- default path ------------------------------------------------------ */

static bool valid_conversation_id(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 128 || id[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* mkdir -p with mode 0700 for what it creates. */
static bool make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			audit_fail("cannot create %s: %s", path, strerror(errno));
			*p = saved;
			return false;
		}
		*p = saved;
		if (saved == '\0')
			break;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return audit_fail("%s is not a directory", path);
	return true;
}

char *agent_audit_default_path(const char *conversation_id)
{
	if (conversation_id == NULL || !valid_conversation_id(conversation_id)) {
		audit_fail("invalid conversation id (1-128 of A-Z a-z 0-9 . _ -, not starting with '.')");
		return NULL;
	}
	char dir[PATH_MAX];
	int k;
	const char *xdg = getenv("XDG_DATA_HOME");
	if (xdg != NULL && xdg[0] == '/') {
		k = snprintf(dir, sizeof(dir), "%s/deskhand/audit", xdg);
	} else {
		const char *home = getenv("HOME");
		if (home == NULL || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());
			home = pw != NULL ? pw->pw_dir : NULL;
		}
		if (home == NULL) {
			audit_fail("no home directory: set HOME or XDG_DATA_HOME");
			return NULL;
		}
		k = snprintf(dir, sizeof(dir), "%s/.local/share/deskhand/audit", home);
	}
	if (k < 0 || (size_t)k >= sizeof(dir)) {
		audit_fail("the data directory path is too long");
		return NULL;
	}
	if (!make_dirs(dir))
		return NULL;
	size_t need = strlen(dir) + strlen(conversation_id) + 8;
	char *path = malloc(need);
	if (path == NULL) {
		audit_fail("out of memory");
		return NULL;
	}
	snprintf(path, need, "%s/%s.jsonl", dir, conversation_id);
	return path;
}

/* ---- writing ----------------------------------------------------------- */

/* Adds a string field, made valid UTF-8. */
static bool add_text(cJSON *obj, const char *key, const char *s, size_t len, bool *lossy)
{
	if (s == NULL)
		s = "", len = 0;
	size_t clean_len;
	char *clean = agent_utf8_sanitize(s, len, &clean_len);
	if (clean == NULL)
		return false;
	cJSON *item = cJSON_AddStringToObject(obj, key, clean);
	free(clean);
	/* Only a replacement changes the length: each one grows it. */
	if (lossy != NULL)
		*lossy = clean_len != len;
	return item != NULL;
}

static bool add_str(cJSON *obj, const char *key, const char *s)
{
	return add_text(obj, key, s, s != NULL ? strlen(s) : 0, NULL);
}

static void timestamp(char out[32])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* A new line object with ts, event and, when id is not NULL, id and kind. */
static cJSON *line_new(const char *event, const char *id, agent_policy_kind kind)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	char ts[32];
	timestamp(ts);
	if (cJSON_AddStringToObject(o, "ts", ts) == NULL ||
	    cJSON_AddStringToObject(o, "event", event) == NULL)
		goto fail;
	if (id != NULL) {
		if (!add_str(o, "id", id) ||
		    cJSON_AddStringToObject(o, "kind", agent_policy_kind_name(kind)) == NULL)
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* Writes the object as one line with one write(); consumes obj. */
static bool line_write(agent_audit *a, cJSON *obj, bool sync)
{
	bool ok = false;
	char *text = NULL;
	if (obj == NULL) {
		audit_fail("out of memory");
		goto out;
	}
	text = cJSON_PrintUnformatted(obj);
	if (text == NULL) {
		audit_fail("out of memory");
		goto out;
	}
	size_t n = strlen(text);
	text[n] = '\n'; /* replaces the NUL; length tracked explicitly */
	off_t before = lseek(a->fd, 0, SEEK_END);
	ssize_t w;
	do
		w = write(a->fd, text, n + 1);
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		audit_fail("cannot write the audit log %s: %s", a->path, strerror(errno));
		goto out;
	}
	if ((size_t)w != n + 1) {
		/* A short write (disk full): take the partial line back. */
		int saved = errno;
		if (before >= 0)
			(void)ftruncate(a->fd, before);
		audit_fail("cannot write the audit log %s: short write (%s)", a->path,
		           saved ? strerror(saved) : "disk full?");
		goto out;
	}
	if (sync && fsync(a->fd) != 0) {
		audit_fail("cannot flush the audit log %s: %s", a->path, strerror(errno));
		goto out;
	}
	ok = true;
out:
	free(text);
	cJSON_Delete(obj);
	return ok;
}

static cJSON *settings_json(const agent_policy_settings *s)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	if (cJSON_AddBoolToObject(o, "auto_run", s->auto_run) == NULL ||
	    cJSON_AddStringToObject(o, "safe_mode", agent_policy_safe_mode_name(s->safe_mode)) == NULL ||
	    cJSON_AddBoolToObject(o, "os_auto_approve", s->os_auto_approve) == NULL) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static bool bad_args(const agent_audit *a, const char *id)
{
	if (a == NULL)
		return !audit_fail("no audit log");
	if (id == NULL)
		return !audit_fail("an audit event needs an action id");
	return false;
}

bool agent_audit_session(agent_audit *a, const char *conversation_id,
                         const agent_policy_settings *s)
{
	if (a == NULL)
		return audit_fail("no audit log");
	cJSON *o = line_new("session", NULL, 0);
	cJSON *set = settings_json(s);
	if (o == NULL || set == NULL || !add_str(o, "conversation", conversation_id) ||
	    cJSON_AddNumberToObject(o, "pid", (double)getpid()) == NULL) {
		cJSON_Delete(set);
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	cJSON_AddItemToObject(o, "settings", set);
	return line_write(a, o, true);
}

bool agent_audit_setting(agent_audit *a, const agent_policy_settings *s, const char *command)
{
	if (a == NULL)
		return audit_fail("no audit log");
	cJSON *o = line_new("setting", NULL, 0);
	cJSON *set = settings_json(s);
	if (o == NULL || set == NULL || !add_str(o, "command", command)) {
		cJSON_Delete(set);
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	cJSON_AddItemToObject(o, "settings", set);
	return line_write(a, o, true);
}

bool agent_audit_proposed_code(agent_audit *a, const char *id, agent_policy_kind kind,
                               const char *language, const char *code, size_t len)
{
	if (bad_args(a, id))
		return false;
	cJSON *o = line_new("proposed", id, kind);
	bool lossy = false;
	if (o == NULL || !add_str(o, "language", language) ||
	    !add_text(o, "code", code, len, &lossy) ||
	    (lossy && cJSON_AddTrueToObject(o, "code_lossy") == NULL)) {
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	return line_write(a, o, false);
}

bool agent_audit_proposed_action(agent_audit *a, const char *id, agent_policy_kind kind,
                                 const cJSON *action)
{
	if (bad_args(a, id))
		return false;
	cJSON *o = line_new("proposed", id, kind);
	cJSON *copy = action != NULL ? cJSON_Duplicate(action, true) : cJSON_CreateObject();
	if (o == NULL || copy == NULL) {
		cJSON_Delete(copy);
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	cJSON_AddItemToObject(o, "action", copy);
	return line_write(a, o, false);
}

bool agent_audit_scanned(agent_audit *a, const char *id, agent_policy_kind kind,
                         const agent_scan_result *res)
{
	if (bad_args(a, id))
		return false;
	cJSON *o = line_new("scanned", id, kind);
	cJSON *arr = cJSON_CreateArray();
	if (o == NULL || arr == NULL)
		goto fail;
	cJSON_AddItemToObject(o, "findings", arr);
	for (size_t i = 0; res != NULL && i < res->count; i++) {
		const agent_scan_finding *f = &res->findings[i];
		cJSON *fo = cJSON_CreateObject();
		if (fo == NULL)
			goto fail_o;
		cJSON_AddItemToArray(arr, fo);
		if (!add_str(fo, "rule", f->rule_id) ||
		    cJSON_AddStringToObject(fo, "severity", agent_scan_severity_name(f->severity)) == NULL ||
		    cJSON_AddNumberToObject(fo, "line", f->line) == NULL ||
		    !add_str(fo, "message", f->message) || !add_str(fo, "excerpt", f->excerpt))
			goto fail_o;
	}
	if (cJSON_AddStringToObject(o, "worst", agent_scan_severity_name(
	                                res != NULL ? res->worst : AGENT_SCAN_NONE)) == NULL)
		goto fail_o;
	return line_write(a, o, false);
fail:
	cJSON_Delete(arr);
fail_o:
	cJSON_Delete(o);
	return line_write(a, NULL, false);
}

static bool simple(agent_audit *a, const char *event, const char *id, agent_policy_kind kind,
                   const char *by, const char *reason, bool sync)
{
	if (bad_args(a, id))
		return false;
	cJSON *o = line_new(event, id, kind);
	if (o == NULL || (by != NULL && cJSON_AddStringToObject(o, "by", by) == NULL) ||
	    !add_str(o, "reason", reason != NULL ? reason : "")) {
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	return line_write(a, o, sync);
}

bool agent_audit_asked(agent_audit *a, const char *id, agent_policy_kind kind,
                       const char *reason)
{
	return simple(a, "asked", id, kind, NULL, reason, false);
}

bool agent_audit_approved(agent_audit *a, const char *id, agent_policy_kind kind,
                          bool by_user, const char *reason)
{
	return simple(a, "approved", id, kind, by_user ? "user" : "policy", reason, true);
}

bool agent_audit_denied(agent_audit *a, const char *id, agent_policy_kind kind,
                        bool no_answer, const char *reason)
{
	return simple(a, "denied", id, kind, no_answer ? "no-answer" : "user", reason, true);
}

bool agent_audit_blocked(agent_audit *a, const char *id, agent_policy_kind kind,
                         const char *reason)
{
	return simple(a, "blocked", id, kind, "policy", reason, true);
}

bool agent_audit_executed(agent_audit *a, const char *id, agent_policy_kind kind,
                          int status, long duration_ms, const char *error)
{
	if (bad_args(a, id))
		return false;
	cJSON *o = line_new("executed", id, kind);
	if (o == NULL || cJSON_AddNumberToObject(o, "status", status) == NULL ||
	    cJSON_AddNumberToObject(o, "duration_ms", (double)duration_ms) == NULL ||
	    (error != NULL && !add_str(o, "error", error))) {
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	return line_write(a, o, false);
}

/* ---- verification ------------------------------------------------------ */

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

static bool valid_kind(const char *s)
{
	for (unsigned k = 0; k < AGENT_POLICY_KIND_COUNT; k++)
		if (strcmp(s, agent_policy_kind_name((agent_policy_kind)k)) == 0)
			return true;
	return false;
}

static const char *const audit_events[] = {"session", "setting", "proposed", "scanned",
                                           "asked", "approved", "denied", "blocked",
                                           "executed"};

/* What the verifier keeps between lines. */
struct verifier {
	agent_audit_report *rep;
	struct id_state *ids;
	size_t n_ids, cap_ids;
};

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
	if (strcmp(e, "session") != 0 && strcmp(e, "setting") != 0) {
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

/* One line of the log (without its newline). */
static bool verify_line(struct verifier *v, const char *line, size_t llen, int lineno)
{
	const char *end = NULL;
	cJSON *o = cJSON_ParseWithLengthOpts(line, llen, &end, false);
	if (o == NULL || !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return report(v->rep, lineno, "not a JSON object");
	}
	const char *event = NULL;
	bool ok = check_line(v->rep, lineno, o, end, line + llen, &event);
	if (ok && strcmp(event, "session") != 0 && strcmp(event, "setting") != 0) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		struct id_state *st = id_state_of(v, id->valuestring, lineno);
		ok = st != NULL && apply_event(v, st, event, o, lineno);
	}
	cJSON_Delete(o);
	return ok;
}

bool agent_audit_verify(const char *text, size_t len, agent_audit_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	struct verifier v = {.rep = rep};
	bool ok = true;
	size_t pos = 0;
	int lineno = 0;
	while (pos < len && ok) {
		lineno++;
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		if (nl == NULL) {
			ok = report(rep, lineno, "incomplete last line (no newline)");
			break;
		}
		size_t llen = (size_t)(nl - line);
		pos += llen + 1;
		rep->lines++;
		ok = verify_line(&v, line, llen, lineno);
	}
	for (size_t k = 0; k < v.n_ids; k++)
		free(v.ids[k].id);
	free(v.ids);
	return ok;
}

bool agent_audit_verify_file(const char *path, agent_audit_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	size_t len;
	char *text = agent_read_file(path, SIZE_MAX / 2, &len);
	if (text == NULL)
		return report(rep, 0, "cannot open %s: %s", path, strerror(errno));
	bool ok = agent_audit_verify(text, len, rep);
	free(text);
	return ok;
}
