/*
 * agent/safety/audit — JSON-lines audit log: opening (a log is checked
 * before it is extended), default paths, and writing with single appends
 * and fsync on decisions; the verifier is audit_verify.c. See audit.h.
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

#include "agent/safety/audit-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

BASE_ERROR_TEXT(static, audit_err, agent_audit_error, audit_fail)

struct agent_audit {
	int fd;
	char *path;
	char *head_path;   /* path + ".head" */
	size_t lines;      /* lines in the log */
	off_t end;         /* the log's size after this handle's last look */
	char last[AGENT_AUDIT_HASH_HEX + 1]; /* the chain value the next line carries */
	char *set_aside;   /* "PATH: line N: problem" of a log not extended, or NULL */
	bool set_aside_crashed; /* its only fault: the end a crash leaves */
	char *broken;      /* why the first line that failed did; then no more lines */
	char *conv_path;   /* the last conversation record's path, or NULL */
	char conv_sha[AGENT_AUDIT_HASH_HEX + 1];
	char conv_prev[AGENT_AUDIT_HASH_HEX + 1]; /* the record before it for that path, or "" */
	bool conv_ends;    /* that record was the log's last line when it was read */
	char from[64];     /* where the next human answer came from; "" : not said */
	char proposer[160]; /* who proposes, when not the session's model; "" : the model */
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
const char audit_seed[AGENT_AUDIT_HASH_HEX + 1] =
	"0000000000000000000000000000000000000000000000000000000000000000";

/* A set-aside log's successors: path.2.jsonl ... (path.N without ".jsonl"). */
enum { AUDIT_MAX_LOGS = 100 };

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
char *audit_head_read(const char *head_path, size_t *len)
{
	int fd = open(head_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	char *text = base_read_fd(fd, 4096, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return text;
}

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
	if (lseek(a->fd, 0, SEEK_SET) < 0 || (text = base_read_fd(a->fd, AUDIT_MAX_SIZE, &len)) == NULL) {
		rep->bad_line = -1;
		return audit_fail("cannot read the audit log %s: %s", a->path, strerror(errno));
	}
	char *head = audit_head_read(a->head_path, &head_len);
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
		ok = audit_verify_log(text, len, head, head_len, head != NULL, rep, a);
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
		if (a->set_aside == NULL) {
			a->set_aside = describe(p, &rep);
			a->set_aside_crashed = rep.unconfirmed > 0;
		}
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
	free(a->broken);
	free(a->conv_path);
	free(a);
	return NULL;
}

const char *agent_audit_set_aside(const agent_audit *a)
{
	return a->set_aside;
}

bool agent_audit_set_aside_crashed(const agent_audit *a)
{
	return a->set_aside != NULL && a->set_aside_crashed;
}

void agent_audit_close(agent_audit *a)
{
	if (a == NULL)
		return;
	(void)fsync(a->fd);
	audit_release(a);
	free(a->set_aside);
	free(a->broken);
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

/* Takes back what append_line wrote after `before`, the error already set.
 * Should that fail too, the log keeps a line its head does not cover, which
 * verify will report as appended by someone else: the error says so now. */
static void take_back(agent_audit *a, off_t before)
{
	if (ftruncate(a->fd, before) == 0)
		return;
	int saved = errno;
	char was[sizeof(base_error_text)];
	snprintf(was, sizeof(was), "%s", agent_audit_error());
	audit_fail("%s; the line could not be taken back (%s), so the log will not verify",
	           was, strerror(saved));
}

/* Appends one line and then the head; a failure takes the line back. */
static bool append_line(agent_audit *a, char *text, size_t n, bool sync)
{
	char next[AGENT_AUDIT_HASH_HEX + 1];
	agent_audit_hash(text, n, next);
	off_t before = a->end;
	if (!base_write_all(a->fd, text, n)) {
		/* Part of it written (disk full): take the partial line back. */
		audit_fail("cannot write the audit log %s: %s", a->path, strerror(errno));
		take_back(a, before);
		return false;
	}
	if (sync && fsync(a->fd) != 0) {
		audit_fail("cannot flush the audit log %s: %s", a->path, strerror(errno));
		take_back(a, before);
		return false;
	}
	/* A line the head does not cover would read as appended by someone else. */
	if (!head_write(a, a->lines + 1, next, sync)) {
		take_back(a, before);
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
	if (a->broken != NULL) {
		/* A line after a missing one would vouch for what the log lacks
		 * (an approval with no proposal, a result with no approval). */
		audit_fail("%s", a->broken);
		goto out;
	}
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
	if (!ok && a->broken == NULL)
		a->broken = strdup(agent_audit_error()); /* NULL: the next line tries again */
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

/* A proposal names its proposer when it is not the session's model (an MCP client). */
static bool add_proposer(const agent_audit *a, cJSON *o)
{
	return a->proposer[0] == '\0' || add_str(o, "proposer", a->proposer);
}

bool agent_audit_proposed_code(agent_audit *a, const char *id, agent_policy_kind kind,
                               const char *language, const char *code, size_t len)
{
	if (bad_args(a, id))
		return false;
	cJSON *o = line_new("proposed", id, kind);
	bool lossy = false;
	if (o == NULL || !add_proposer(a, o) || !add_str(o, "language", language) ||
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
	if (o == NULL || copy == NULL || !add_proposer(a, o)) {
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

void agent_audit_set_proposer(agent_audit *a, const char *who)
{
	snprintf(a->proposer, sizeof(a->proposer), "%s", who != NULL ? who : "");
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
bool audit_note_conversation(agent_audit *a, const char *path, const char *sha)
{
	char *copy = path != NULL ? strdup(path) : NULL;
	if (path != NULL && copy == NULL)
		return audit_fail("out of memory");
	bool same = path != NULL && a->conv_path != NULL && strcmp(a->conv_path, path) == 0;
	memcpy(a->conv_prev, same ? a->conv_sha : "", same ? sizeof(a->conv_prev) : 1);
	free(a->conv_path);
	a->conv_path = copy;
	snprintf(a->conv_sha, sizeof(a->conv_sha), "%s", sha != NULL ? sha : "");
	a->conv_ends = path != NULL;
	return true;
}

void audit_note_line(agent_audit *a)
{
	a->conv_ends = false;
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
	return line_write(a, o, true) && audit_note_conversation(a, path, sha256_hex);
}

agent_audit_conv agent_audit_conversation_check(const agent_audit *a, const char *path,
                                                const char *sha256_hex)
{
	if (a == NULL || a->conv_path == NULL || strcmp(a->conv_path, path) != 0)
		return AGENT_AUDIT_CONV_UNRECORDED;
	if (strcmp(a->conv_sha, sha256_hex) == 0)
		return AGENT_AUDIT_CONV_VOUCHED;
	/* Nothing was logged after the record: deskhand stopped before its file landed. */
	if (a->conv_ends && strcmp(a->conv_prev, sha256_hex) == 0)
		return AGENT_AUDIT_CONV_UNSAVED;
	return AGENT_AUDIT_CONV_CHANGED;
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
