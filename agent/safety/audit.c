/*
 * agent/safety/audit — JSON-lines audit log: writing with single appends and
 * fsync on decisions, default paths, and the verifier. See audit.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "agent/safety/audit.h"
#include "agent/util/textutil.h"

AGENT_ERROR_TEXT(static, audit_err, agent_audit_error, audit_fail)

struct agent_audit {
	int fd;
	char *path;
	char *head_path;   /* path + ".head" */
	size_t lines;      /* lines in the log */
	off_t end;         /* the log's size after this handle's last look */
	char last[AGENT_AUDIT_HASH_HEX + 1]; /* the chain value the next line carries */
	char *set_aside;   /* "PATH: line N: problem" of a log not extended, or NULL */
	char *conv_path;   /* the last conversation record's path, or NULL */
	char conv_sha[AGENT_AUDIT_HASH_HEX + 1];
	char from[64];     /* where the next human answer came from; "" : not said */
	agent_audit_listener listener;
	void *listener_ctx;
};

void agent_audit_hash(const char *line, size_t len, char hex[AGENT_AUDIT_HASH_HEX + 1])
{
	struct sha256_ctx ctx;
	uint8_t md[SHA256_DIGEST_SIZE];
	sha256_init(&ctx);
	sha256_update(&ctx, len, (const uint8_t *)line);
	sha256_digest(&ctx, sizeof(md), md);
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof(md); i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[AGENT_AUDIT_HASH_HEX] = '\0';
}

/* The chain value before a log's first line. */
static const char audit_seed[AGENT_AUDIT_HASH_HEX + 1] =
	"0000000000000000000000000000000000000000000000000000000000000000";

/* A set-aside log's successors: path.2.jsonl ... (path.N without ".jsonl"). */
enum { AUDIT_MAX_LOGS = 100, AUDIT_MAX_SIZE = 1 << 30 };

static void audit_release(agent_audit *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	free(a->path);
	free(a->head_path);
	free(a->conv_path); /* what a log set aside recorded is not this log's */
	a->path = a->head_path = a->conv_path = NULL;
}

/*
 * Rewrites the head file in place (one write of under 128 bytes at offset
 * 0, then the length): its inode stays, so the mount by which a code
 * session's sandbox hides it stays too — a rename over it would detach that
 * mount (sandbox_plan_hide) and the next block could read and write it.
 * False (reason set) when it could not be written.
 */
static bool head_write(const agent_audit *a, size_t lines, const char *last, bool sync)
{
	char text[128];
	int n = snprintf(text, sizeof(text), "{\"lines\":%zu,\"last\":\"%s\"}\n", lines, last);
	int fd = open(a->head_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return audit_fail("cannot write %s: %s", a->head_path, strerror(errno));
	ssize_t w;
	do
		w = pwrite(fd, text, (size_t)n, 0);
	while (w < 0 && errno == EINTR);
	bool ok = w == n && ftruncate(fd, n) == 0 && (!sync || fsync(fd) == 0);
	int saved = w < 0 || w == n ? errno : EIO;
	if (close(fd) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	if (!ok)
		return audit_fail("cannot write %s: %s", a->head_path, strerror(saved));
	return true;
}

/* The head file's text (NULL with errno ENOENT when there is none). */
static char *head_read(const char *head_path, size_t *len)
{
	int fd = open(head_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	char *text = agent_read_fd(fd, 4096, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return text;
}

static bool verify_log(const char *text, size_t len, const char *head, size_t head_len,
                       bool have_head, agent_audit_report *rep, agent_audit *learn);
static bool report(agent_audit_report *rep, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Reads the log from the start and checks it against its head. True when
 * it verifies (lines, last and end then describe it); false with rep set
 * when it does not, false with rep->bad_line -1 when it could not be read.
 */
static bool audit_load(agent_audit *a, agent_audit_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	size_t len = 0, head_len = 0;
	char *text = NULL;
	if (lseek(a->fd, 0, SEEK_SET) < 0 || (text = agent_read_fd(a->fd, AUDIT_MAX_SIZE, &len)) == NULL) {
		rep->bad_line = -1;
		return audit_fail("cannot read the audit log %s: %s", a->path, strerror(errno));
	}
	char *head = head_read(a->head_path, &head_len);
	if (head == NULL && errno == EFBIG)
		head = strdup(""), head_len = 0; /* no head is that long: a malformed one */
	if (head == NULL && errno != ENOENT) {
		free(text);
		rep->bad_line = -1;
		return audit_fail("cannot read %s: %s", a->head_path, strerror(errno));
	}
	bool ok;
	if (head == NULL && len == 0) /* a new log: its head says so from the start */
		ok = head_write(a, 0, audit_seed, true) && agent_audit_verify(text, len, rep);
	else
		ok = verify_log(text, len, head, head_len, head != NULL, rep, a);
	if (!ok && rep->problem[0] == '\0')
		rep->bad_line = -1;
	if (ok) {
		a->lines = rep->lines;
		memcpy(a->last, rep->last, sizeof(a->last));
		a->end = (off_t)len;
	}
	free(head);
	free(text);
	return ok;
}

/* 1: `path` opened and verified; 0: it fails verification (rep says why); -1: error. */
static int audit_try(agent_audit *a, char *path, agent_audit_report *rep)
{
	a->path = path;
	a->head_path = malloc(strlen(path) + 6);
	if (a->head_path == NULL) {
		audit_release(a);
		return audit_fail("out of memory"), -1;
	}
	strcpy(a->head_path, path);
	strcat(a->head_path, ".head");
	a->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (a->fd < 0) {
		audit_fail("cannot open the audit log %s: %s", path, strerror(errno));
		audit_release(a);
		return -1;
	}
	/* Another deskhand writing the same log must not interleave with the check. */
	(void)flock(a->fd, LOCK_EX);
	bool ok = audit_load(a, rep);
	(void)flock(a->fd, LOCK_UN);
	if (ok)
		return 1;
	if (rep->bad_line >= 0)
		return 0; /* the caller says why, then lets go */
	audit_release(a);
	return -1;
}

/* The k-th log of a conversation: path itself, then path.k.jsonl. NULL: out of memory. */
static char *numbered_path(const char *path, unsigned k)
{
	if (k == 1)
		return strdup(path);
	size_t n = strlen(path);
	size_t stem = n > 6 && strcmp(path + n - 6, ".jsonl") == 0 ? n - 6 : n;
	char *p = malloc(stem + 20);
	if (p != NULL)
		snprintf(p, stem + 20, "%.*s.%u.jsonl", (int)stem, path, k);
	return p;
}

static char *describe(const char *path, const agent_audit_report *rep)
{
	agent_buf b;
	agent_buf_init(&b);
	if (rep->bad_line > 0)
		agent_buf_printf(&b, "%s: line %d: %s", path, rep->bad_line, rep->problem);
	else
		agent_buf_printf(&b, "%s: %s", path, rep->problem);
	return agent_buf_steal(&b);
}

agent_audit *agent_audit_open(const char *path)
{
	agent_audit *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		audit_fail("out of memory");
		return NULL;
	}
	a->fd = -1;
	for (unsigned k = 1; k <= AUDIT_MAX_LOGS; k++) {
		char *p = numbered_path(path, k);
		agent_audit_report rep;
		int r = p != NULL ? audit_try(a, p, &rep) : (audit_fail("out of memory"), -1);
		if (r > 0)
			return a;
		if (r < 0)
			break;
		/* A log that fails is kept as evidence and never extended. */
		if (a->set_aside == NULL)
			a->set_aside = describe(p, &rep);
		audit_release(a);
		if (a->set_aside == NULL) {
			audit_fail("out of memory");
			break;
		}
		if (k == AUDIT_MAX_LOGS)
			audit_fail("%s and the %u logs after it all fail verification (%s)", path,
			           AUDIT_MAX_LOGS - 1, a->set_aside);
	}
	free(a->set_aside);
	free(a->conv_path);
	free(a);
	return NULL;
}

const char *agent_audit_set_aside(const agent_audit *a)
{
	return a->set_aside;
}

void agent_audit_close(agent_audit *a)
{
	if (a == NULL)
		return;
	(void)fsync(a->fd);
	audit_release(a);
	free(a->set_aside);
	free(a->conv_path);
	free(a);
}

const char *agent_audit_path(const agent_audit *a)
{
	return a->path;
}

const char *agent_audit_head_path(const agent_audit *a)
{
	return a->head_path;
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

char *agent_audit_default_dir(void)
{
	char dir[PATH_MAX - 8], out[PATH_MAX];
	if (!agent_own_dir(AGENT_DIR_DATA, dir, sizeof(dir))) {
		audit_fail(errno == ENOENT ? "no home directory: set HOME or XDG_DATA_HOME"
		                           : "the data directory path is too long");
		return NULL;
	}
	snprintf(out, sizeof(out), "%s/audit", dir);
	char *path = strdup(out);
	if (path == NULL)
		audit_fail("out of memory");
	return path;
}

char *agent_audit_default_path(const char *conversation_id)
{
	if (conversation_id == NULL || !valid_conversation_id(conversation_id)) {
		audit_fail("invalid conversation id (1-128 of A-Z a-z 0-9 . _ -, not starting with '.')");
		return NULL;
	}
	char *dir = agent_audit_default_dir();
	if (dir != NULL && !agent_make_dirs(dir)) {
		audit_fail("cannot create %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	if (dir == NULL)
		return NULL;
	size_t need = strlen(dir) + strlen(conversation_id) + 8;
	char *path = malloc(need);
	if (path == NULL)
		audit_fail("out of memory");
	else
		snprintf(path, need, "%s/%s.jsonl", dir, conversation_id);
	free(dir);
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

/*
 * The handle's view of the log is current: when the size is not what this
 * handle left (another handle or process wrote, or someone edited), the log
 * is read again and must still verify before anything is chained to it.
 */
static bool audit_current(agent_audit *a)
{
	struct stat st;
	if (fstat(a->fd, &st) != 0)
		return audit_fail("cannot stat the audit log %s: %s", a->path, strerror(errno));
	if (st.st_size == a->end)
		return true;
	agent_audit_report rep;
	if (audit_load(a, &rep))
		return true;
	if (rep.bad_line < 0)
		return false;
	char *why = describe(a->path, &rep);
	audit_fail("the audit log changed under deskhand and no longer verifies (%s); "
	           "nothing more is added to it", why != NULL ? why : rep.problem);
	free(why);
	return false;
}

/* Appends one line and then the head; a failure takes the line back. */
static bool append_line(agent_audit *a, char *text, size_t n, bool sync)
{
	char next[AGENT_AUDIT_HASH_HEX + 1];
	agent_audit_hash(text, n, next);
	off_t before = a->end;
	ssize_t w;
	do
		w = write(a->fd, text, n);
	while (w < 0 && errno == EINTR);
	int saved = errno;
	if (w < 0 || (size_t)w != n) {
		/* A short write (disk full): take the partial line back. */
		if (w > 0)
			(void)ftruncate(a->fd, before);
		if (w < 0)
			return audit_fail("cannot write the audit log %s: %s", a->path, strerror(saved));
		return audit_fail("cannot write the audit log %s: short write (%s)", a->path,
		                  saved ? strerror(saved) : "disk full?");
	}
	if (sync && fsync(a->fd) != 0) {
		audit_fail("cannot flush the audit log %s: %s", a->path, strerror(errno));
		(void)ftruncate(a->fd, before);
		return false;
	}
	/* A line the head does not cover would read as appended by someone else. */
	if (!head_write(a, a->lines + 1, next, sync)) {
		(void)ftruncate(a->fd, before);
		return false;
	}
	a->lines++;
	a->end = before + (off_t)n;
	memcpy(a->last, next, sizeof(a->last));
	return true;
}

/* Writes the object, chained to the line before, as one line with one write(); consumes obj. */
static bool line_write(agent_audit *a, cJSON *obj, bool sync)
{
	bool ok = false, locked = false;
	char *text = NULL;
	if (obj == NULL) {
		audit_fail("out of memory");
		goto out;
	}
	if (flock(a->fd, LOCK_EX) != 0) {
		audit_fail("cannot lock the audit log %s: %s", a->path, strerror(errno));
		goto out;
	}
	locked = true;
	if (!audit_current(a))
		goto out;
	if (cJSON_AddStringToObject(obj, "prev", a->last) == NULL ||
	    (text = cJSON_PrintUnformatted(obj)) == NULL) {
		audit_fail("out of memory");
		goto out;
	}
	size_t n = strlen(text);
	text[n] = '\n'; /* replaces the NUL; length tracked explicitly */
	ok = append_line(a, text, n + 1, sync);
	if (ok && a->listener != NULL)
		a->listener(a->listener_ctx, text, n + 1);
out:
	if (locked)
		(void)flock(a->fd, LOCK_UN);
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
	    cJSON_AddNumberToObject(o, "pid", (double)getpid()) == NULL ||
	    (a->set_aside != NULL && !add_str(o, "set_aside", a->set_aside))) {
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
	/* A human's answer says where it was given (the terminal or the console). */
	bool from = by != NULL && strcmp(by, "user") == 0 && a->from[0] != '\0';
	if (o == NULL || (by != NULL && cJSON_AddStringToObject(o, "by", by) == NULL) ||
	    (from && !add_str(o, "from", a->from)) ||
	    !add_str(o, "reason", reason != NULL ? reason : "")) {
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	return line_write(a, o, sync);
}

void agent_audit_set_listener(agent_audit *a, agent_audit_listener fn, void *ctx)
{
	a->listener = fn;
	a->listener_ctx = ctx;
}

void agent_audit_answer_from(agent_audit *a, const char *from)
{
	snprintf(a->from, sizeof(a->from), "%s", from != NULL ? from : "");
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

/* Remembers the record the log now holds (NULL path: none). */
static bool note_conversation(agent_audit *a, const char *path, const char *sha)
{
	char *copy = path != NULL ? strdup(path) : NULL;
	if (path != NULL && copy == NULL)
		return audit_fail("out of memory");
	free(a->conv_path);
	a->conv_path = copy;
	snprintf(a->conv_sha, sizeof(a->conv_sha), "%s", sha != NULL ? sha : "");
	return true;
}

bool agent_audit_conversation(agent_audit *a, const char *path, const char *sha256_hex)
{
	if (a == NULL)
		return audit_fail("no audit log");
	cJSON *o = line_new("conversation", NULL, 0);
	if (o == NULL || !add_str(o, "path", path) ||
	    cJSON_AddStringToObject(o, "sha256", sha256_hex) == NULL) {
		cJSON_Delete(o);
		return line_write(a, NULL, false);
	}
	return line_write(a, o, false) && note_conversation(a, path, sha256_hex);
}

const char *agent_audit_conversation_digest(const agent_audit *a, const char *path)
{
	if (a == NULL || a->conv_path == NULL || strcmp(a->conv_path, path) != 0)
		return NULL;
	return a->conv_sha;
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
		ok = note_conversation(v->learn, path->valuestring, sha->valuestring) ||
		     report(v->rep, lineno, "out of memory");
	} else if (ok && strcmp(event, "session") != 0 && strcmp(event, "setting") != 0 &&
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
		if (nl == NULL)
			return report(rep, lineno, "incomplete last line (no newline)");
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
	else if (want < rep->lines)
		report(rep, (int)want + 1, "after the recorded end (line %zu): added by another "
		       "writer, or deskhand stopped between a line and its head", want);
	else
		ok = true;
	cJSON_Delete(o);
	return ok;
}

static bool verify_log(const char *text, size_t len, const char *head, size_t head_len,
                       bool have_head, agent_audit_report *rep, agent_audit *learn)
{
	memset(rep, 0, sizeof(*rep));
	struct verifier v = {.rep = rep, .learn = learn};
	if (learn != NULL)
		(void)note_conversation(learn, NULL, NULL);
	bool ok = verify_text(&v, text, len);
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
	return verify_log(text, len, head, head_len, head != NULL, rep, NULL);
}

bool agent_audit_verify_file(const char *path, agent_audit_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	size_t len, head_len = 0;
	char *text = agent_read_file(path, AUDIT_MAX_SIZE, &len);
	if (text == NULL)
		return report(rep, 0, "cannot open %s: %s", path, strerror(errno));
	agent_buf hp;
	agent_buf_init(&hp);
	agent_buf_printf(&hp, "%s.head", path);
	char *head = hp.oom ? NULL : head_read(agent_buf_cstr(&hp), &head_len);
	bool ok;
	if (head == NULL && errno != ENOENT)
		ok = report(rep, 0, "cannot read %s: %s", hp.oom ? "the head file" : agent_buf_cstr(&hp),
		            strerror(errno));
	else
		ok = verify_log(text, len, head, head_len, head != NULL, rep, NULL);
	agent_buf_finish(&hp);
	free(head);
	free(text);
	return ok;
}
