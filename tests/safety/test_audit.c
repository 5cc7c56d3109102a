/*
 * agent/safety/audit: every event written and read back as one JSON object per
 * line, file mode and append semantics, a line visible to other readers as
 * soon as the call returns (no buffering), a short write taken back, the
 * default path, the verifier catching execution without approval and
 * after a denial, and the hash chain and head catching every edit of a
 * written log (changed, removed, inserted, swapped, cut-off lines) with
 * the line where it shows; a log that fails is set aside on resume, never
 * extended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/safety/audit.h"
#include "agent/util/textutil.h"
#include "tests/safety/audit_chain.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/deskhand-audit-XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *path_in(const char *name)
{
	static char p[128];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* Splits into lines; each must be one JSON object. Returns the count. */
static size_t parse_lines(const char *text, size_t len, cJSON **out, size_t max)
{
	size_t n = 0, pos = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		assert_non_null(nl); /* every line is complete */
		size_t llen = (size_t)(nl - (text + pos));
		const char *end = NULL;
		cJSON *o = cJSON_ParseWithLengthOpts(text + pos, llen, &end, false);
		assert_non_null(o);
		assert_true(cJSON_IsObject(o));
		assert_ptr_equal(end, nl);
		assert_true(n < max);
		out[n++] = o;
		pos += llen + 1;
	}
	return n;
}

static int num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v)) {
		fail_msg("no number \"%s\"", key);
		abort();
	}
	return v->valueint;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsString(v)) {
		fail_msg("no string \"%s\"", key);
		abort();
	}
	return v->valuestring;
}

static void every_event_round_trips(void **state)
{
	(void)state;
	const char *p = path_in("all.jsonl");
	agent_audit *a = agent_audit_open(p);
	assert_non_null(a);
	assert_string_equal(agent_audit_path(a), p);
	agent_policy_settings s = {false, AGENT_POLICY_SAFE_AUTO, true};
	assert_true(agent_audit_session(a, "conv-1", &s));
	assert_true(agent_audit_proposed_code(a, "c1", AGENT_POLICY_CODE, "shell", "rm -rf ~\n", 9));
	agent_scan_rules *rules = agent_scan_rules_builtin();
	agent_scan_result *res = agent_scan(rules, AGENT_SCAN_SHELL, "rm -rf ~\n", 9);
	assert_true(agent_audit_scanned(a, "c1", AGENT_POLICY_CODE, res));
	assert_true(agent_audit_asked(a, "c1", AGENT_POLICY_CODE, "the safety scan found 1 issue"));
	assert_true(agent_audit_denied(a, "c1", AGENT_POLICY_CODE, false, "user said no"));
	cJSON *action = cJSON_Parse("{\"action\":\"left_click\",\"coordinate\":[10,20]}");
	assert_true(agent_audit_proposed_action(a, "t1", AGENT_POLICY_OS_INPUT, action));
	assert_true(agent_audit_asked(a, "t1", AGENT_POLICY_OS_INPUT, "desktop input needs your yes"));
	assert_true(agent_audit_approved(a, "t1", AGENT_POLICY_OS_INPUT, true, "yes"));
	assert_true(agent_audit_executed(a, "t1", AGENT_POLICY_OS_INPUT, 0, 12, NULL));
	assert_true(agent_audit_proposed_action(a, "t2", AGENT_POLICY_OS_OBSERVE, NULL));
	assert_true(agent_audit_approved(a, "t2", AGENT_POLICY_OS_OBSERVE, false, "observation"));
	assert_true(agent_audit_executed(a, "t2", AGENT_POLICY_OS_OBSERVE, 1, 3, "no display"));
	assert_true(agent_audit_blocked(a, "t3", AGENT_POLICY_OS_INPUT, "kill switch"));
	assert_true(agent_audit_denied(a, "t4", AGENT_POLICY_OS_INPUT, true, "no answer"));
	s.auto_run = true;
	assert_true(agent_audit_setting(a, &s, "%auto_run true"));
	agent_audit_close(a);
	cJSON_Delete(action);

	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	size_t len;
	char *text = slurp(p, &len);
	cJSON *lines[32];
	size_t n = parse_lines(text, len, lines, 32);
	assert_int_equal(n, 15);
	static const char *const events[] = {
		"session", "proposed", "scanned", "asked", "denied", "proposed", "asked", "approved",
		"executed", "proposed", "approved", "executed", "blocked", "denied", "setting",
	};
	char prev[AGENT_AUDIT_HASH_HEX + 1];
	memset(prev, '0', AGENT_AUDIT_HASH_HEX);
	prev[AGENT_AUDIT_HASH_HEX] = '\0';
	const char *line = text;
	for (size_t i = 0; i < 15; i++) {
		assert_string_equal(str(lines[i], "event"), events[i]);
		/* each line carries the hash of the one before it */
		assert_string_equal(str(lines[i], "prev"), prev);
		const char *nl = strchr(line, '\n');
		agent_audit_hash(line, (size_t)(nl - line) + 1, prev);
		line = nl + 1;
		const char *ts = str(lines[i], "ts");
		assert_int_equal(strlen(ts), 24); /* 2025-01-01T00:00:00.000Z */
		assert_int_equal(ts[10], 'T');
		assert_int_equal(ts[19], '.');
		assert_int_equal(ts[23], 'Z');
	}
	assert_string_equal(str(lines[0], "conversation"), "conv-1");
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(lines[0], "settings");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(set, "os_auto_approve")));
	assert_string_equal(str(set, "safe_mode"), "auto");
	assert_string_equal(str(lines[1], "code"), "rm -rf ~\n");
	assert_string_equal(str(lines[1], "language"), "shell");
	assert_string_equal(str(lines[1], "kind"), "code");
	assert_string_equal(str(lines[1], "id"), "c1");
	const cJSON *findings = cJSON_GetObjectItemCaseSensitive(lines[2], "findings");
	assert_true(cJSON_GetArraySize(findings) >= 1);
	const cJSON *f0 = cJSON_GetArrayItem(findings, 0);
	assert_string_equal(str(f0, "rule"), "destroy.rm-home");
	assert_string_equal(str(f0, "severity"), "critical");
	assert_int_equal(num(f0, "line"), 1);
	assert_string_equal(str(lines[2], "worst"), "critical");
	assert_string_equal(str(lines[4], "by"), "user");
	const cJSON *act = cJSON_GetObjectItemCaseSensitive(lines[5], "action");
	assert_string_equal(str(act, "action"), "left_click");
	assert_string_equal(str(lines[5], "kind"), "os_input");
	assert_string_equal(str(lines[7], "by"), "user");
	assert_int_equal(num(lines[8], "status"), 0);
	assert_int_equal(num(lines[8], "duration_ms"), 12);
	assert_string_equal(str(lines[10], "by"), "policy");
	assert_string_equal(str(lines[11], "error"), "no display");
	assert_string_equal(str(lines[12], "reason"), "kill switch");
	assert_string_equal(str(lines[13], "by"), "no-answer");
	assert_string_equal(str(lines[14], "command"), "%auto_run true");

	agent_audit_report rep;
	assert_true(agent_audit_verify(text, len, &rep));
	assert_int_equal(rep.lines, 15);
	assert_int_equal(rep.executed, 2);
	assert_int_equal(rep.by_user, 1);
	assert_int_equal(rep.by_policy, 1);
	assert_string_equal(rep.last, prev);
	assert_true(agent_audit_verify_file(p, &rep));
	/* the head holds the end */
	char head_path[160];
	snprintf(head_path, sizeof(head_path), "%s.head", p);
	size_t head_len;
	char *head = slurp(head_path, &head_len);
	char want[160];
	snprintf(want, sizeof(want), "{\"lines\":15,\"last\":\"%s\"}\n", prev);
	assert_string_equal(head, want);
	assert_int_equal(stat(head_path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(head);
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(lines[i]);
	free(text);
	agent_scan_result_destroy(res);
	agent_scan_rules_destroy(rules);
}

static void hostile_text_stays_valid_json(void **state)
{
	(void)state;
	const char *p = path_in("hostile.jsonl");
	agent_audit *a = agent_audit_open(p);
	static const char code[] = "echo \"\\\n\x01\xff\xfe\x00tail\t\xc3\xa9\xe2\x82";
	assert_true(agent_audit_proposed_code(a, "id\n\"x\xff", AGENT_POLICY_CODE, "python", code,
	                                      sizeof(code) - 1));
	assert_true(agent_audit_asked(a, "id\n\"x\xff", AGENT_POLICY_CODE, "\x80reason"));
	agent_audit_close(a);
	size_t len;
	char *text = slurp(p, &len);
	cJSON *lines[4];
	assert_int_equal(parse_lines(text, len, lines, 4), 2);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lines[0], "code_lossy")));
	const char *c = str(lines[0], "code");
	assert_non_null(strstr(c, "tail\t\xc3\xa9"));        /* valid UTF-8 kept */
	assert_non_null(strstr(c, "\xef\xbf\xbd"));          /* invalid replaced */
	assert_string_equal(str(lines[0], "id"), "id\n\"x\xef\xbf\xbd");
	assert_null(memchr(text, '\0', len));
	for (int i = 0; i < 2; i++)
		cJSON_Delete(lines[i]);
	free(text);
}

static void appends_never_truncates(void **state)
{
	(void)state;
	const char *p = path_in("append.jsonl");
	agent_audit *a = agent_audit_open(p);
	assert_true(agent_audit_asked(a, "x", AGENT_POLICY_CODE, "one"));
	agent_audit_close(a);
	/* a second conversation run, and two handles at once */
	agent_audit *b = agent_audit_open(p);
	agent_audit *c = agent_audit_open(p);
	assert_true(agent_audit_asked(b, "y", AGENT_POLICY_CODE, "two"));
	assert_true(agent_audit_asked(c, "z", AGENT_POLICY_CODE, "three"));
	assert_true(agent_audit_asked(b, "w", AGENT_POLICY_CODE, "four"));
	agent_audit_close(b);
	agent_audit_close(c);
	size_t len;
	char *text = slurp(p, &len);
	agent_audit_report rep;
	assert_true(agent_audit_verify(text, len, &rep));
	assert_int_equal(rep.lines, 4);
	assert_non_null(strstr(text, "\"one\""));
	assert_non_null(strstr(text, "\"four\""));
	free(text);
	/* a directory that does not exist, and a symlink, are refused */
	assert_null(agent_audit_open("/nonexistent-dir/x.jsonl"));
	assert_non_null(strstr(agent_audit_error(), "/nonexistent-dir/x.jsonl"));
	char link[128];
	snprintf(link, sizeof(link), "%s/link.jsonl", dir);
	assert_int_equal(symlink(p, link), 0);
	assert_null(agent_audit_open(link));
	agent_audit_close(NULL);
	assert_false(agent_audit_asked(NULL, "x", AGENT_POLICY_CODE, "r"));
	agent_audit *d = agent_audit_open(p);
	assert_false(agent_audit_asked(d, NULL, AGENT_POLICY_CODE, "r"));
	agent_audit_close(d);
}

/* The line is in the file when the call returns: a process that dies
 * right after (no exit handlers, no close) leaves it complete. */
static void approval_survives_sudden_death(void **state)
{
	(void)state;
	const char *p = path_in("death.jsonl");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		agent_audit *a = agent_audit_open(p);
		if (a == NULL)
			_exit(3);
		if (!agent_audit_proposed_code(a, "k", AGENT_POLICY_CODE, "shell", "ls", 2) ||
		    !agent_audit_approved(a, "k", AGENT_POLICY_CODE, true, "yes") ||
		    !agent_audit_denied(a, "k2", AGENT_POLICY_CODE, false, "no"))
			_exit(5);
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	size_t len;
	char *text = slurp(p, &len);
	agent_audit_report rep;
	assert_true(agent_audit_verify(text, len, &rep));
	assert_int_equal(rep.lines, 3);
	assert_non_null(strstr(text, "\"approved\""));
	assert_non_null(strstr(text, "\"denied\""));
	free(text);
}

/* A write cut short (the file size limit here, a full disk in life) is
 * taken back: the log never holds half a line. */
static void short_write_is_undone(void **state)
{
	(void)state;
	const char *p = path_in("short.jsonl");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		agent_audit *a = agent_audit_open(p);
		if (a == NULL || !agent_audit_asked(a, "first", AGENT_POLICY_CODE, "fits"))
			_exit(3);
		struct stat st;
		if (stat(p, &st) != 0)
			_exit(4);
		struct rlimit rl = {(rlim_t)st.st_size + 40, (rlim_t)st.st_size + 40};
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(5);
		char big[400];
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		bool ok = agent_audit_approved(a, "second", AGENT_POLICY_CODE, true, big);
		if (ok)
			_exit(6);
		if (strstr(agent_audit_error(), "cannot write") == NULL)
			_exit(7);
		agent_audit_close(a);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	size_t len;
	char *text = slurp(p, &len);
	agent_audit_report rep;
	assert_true(agent_audit_verify(text, len, &rep));
	assert_int_equal(rep.lines, 1);
	assert_null(strstr(text, "second"));
	free(text);
}

/* Verifies the log after chaining its lines as deskhand would. */
static void expect_verify(const char *log, bool ok, int bad_line, const char *needle)
{
	agent_audit_report rep;
	size_t len;
	char *chained = audit_chain(log, strlen(log), &len);
	bool got = agent_audit_verify(chained, len, &rep);
	if (got != ok)
		fail_msg("verify returned %d for:\n%s\nproblem: %s", got, chained, rep.problem);
	assert_int_equal(rep.bad_line, bad_line);
	if (needle != NULL && strstr(rep.problem, needle) == NULL)
		fail_msg("problem '%s' lacks '%s'", rep.problem, needle);
	free(chained);
}

#define TS "\"ts\":\"2025-01-02T03:04:05.678Z\""
#define L(ev, id, extra) "{" TS ",\"event\":\"" ev "\",\"id\":\"" id "\",\"kind\":\"code\"" extra "}\n"

static void verifier_catches_violations(void **state)
{
	(void)state;
	/* the good paths */
	expect_verify("", true, 0, NULL);
	expect_verify(L("proposed", "a", "") L("asked", "a", "") L("approved", "a", ",\"by\":\"user\"")
	              L("executed", "a", ",\"status\":0"), true, 0, NULL);
	expect_verify(L("approved", "b", ",\"by\":\"policy\"") L("executed", "b", ""), true, 0, NULL);
	expect_verify(L("proposed", "c", "") L("denied", "c", ",\"by\":\"user\""), true, 0, NULL);
	/* executed without approval */
	expect_verify(L("proposed", "a", "") L("asked", "a", "") L("executed", "a", ""), false, 3,
	              "without an approval");
	/* approval of another action does not count */
	expect_verify(L("approved", "a", ",\"by\":\"user\"") L("executed", "b", ""), false, 2,
	              "\"b\" executed without an approval");
	/* executed after denied, even with a later approval */
	expect_verify(L("asked", "a", "") L("denied", "a", ",\"by\":\"user\"")
	              L("approved", "a", ",\"by\":\"user\"") L("executed", "a", ""), false, 4,
	              "after it was denied (line 2)");
	expect_verify(L("blocked", "a", "") L("executed", "a", ""), false, 2, "after it was blocked");
	/* models reuse ids across turns: a new proposal starts the id afresh */
	expect_verify(L("proposed", "a", "") L("denied", "a", ",\"by\":\"user\"")
	              L("proposed", "a", "") L("approved", "a", ",\"by\":\"user\"")
	              L("executed", "a", ""), true, 0, NULL);
	/* ...and an approval given before it does not carry over */
	expect_verify(L("proposed", "a", "") L("approved", "a", ",\"by\":\"user\"")
	              L("proposed", "a", "") L("executed", "a", ""), false, 4,
	              "without an approval");
	/* one approval, one execution */
	expect_verify(L("approved", "a", ",\"by\":\"user\"") L("executed", "a", "") L("executed", "a", ""),
	              false, 3, "without an approval");
	/* approvals must say who */
	expect_verify(L("approved", "a", "") L("executed", "a", ""), false, 1, "\"by\"");
	/* malformed lines */
	expect_verify(L("asked", "a", "") "{\"ts\":\"x\",\"event\":\"asked\"", false, 2, "no newline");
	expect_verify(L("asked", "a", "") "not json\n", false, 2, "not a JSON object");
	expect_verify("[1,2]\n", false, 1, "not a JSON object");
	expect_verify(L("asked", "a", "") "{" TS ",\"event\":\"asked\",\"id\":\"a\",\"kind\":\"code\"} x\n",
	              false, 2, "text after");
	expect_verify("{" TS ",\"event\":\"launched\",\"id\":\"a\",\"kind\":\"code\"}\n", false, 1,
	              "unknown");
	expect_verify("{\"ts\":\"yesterday\",\"event\":\"asked\",\"id\":\"a\",\"kind\":\"code\"}\n", false, 1,
	              "\"ts\"");
	expect_verify("{" TS ",\"event\":\"asked\",\"kind\":\"code\"}\n", false, 1, "without an \"id\"");
	expect_verify("{" TS ",\"event\":\"asked\",\"id\":\"a\",\"kind\":\"rocket\"}\n", false, 1, "kind");
	expect_verify("{" TS ",\"event\":\"session\",\"conversation\":\"c\"}\n", true, 0, NULL);
	agent_audit_report rep;
	assert_false(agent_audit_verify_file(path_in("missing.jsonl"), &rep));
	assert_non_null(strstr(rep.problem, "cannot open"));
}

/* A log as a conversation writes it: 11 lines, a denial and two runs. */
static void write_sample(const char *p)
{
	agent_audit *a = agent_audit_open(p);
	assert_non_null(a);
	agent_policy_settings s = {false, AGENT_POLICY_SAFE_ASK, false};
	assert_true(agent_audit_session(a, "conv", &s));                                     /* 1 */
	assert_true(agent_audit_proposed_code(a, "c1", AGENT_POLICY_CODE, "shell", "rm -rf ~", 8));
	assert_true(agent_audit_asked(a, "c1", AGENT_POLICY_CODE, "scan found rm -rf ~"));   /* 3 */
	assert_true(agent_audit_denied(a, "c1", AGENT_POLICY_CODE, false, "user said no"));  /* 4 */
	assert_true(agent_audit_proposed_code(a, "c2", AGENT_POLICY_CODE, "shell", "ls", 2));
	assert_true(agent_audit_asked(a, "c2", AGENT_POLICY_CODE, "code needs your yes"));   /* 6 */
	assert_true(agent_audit_approved(a, "c2", AGENT_POLICY_CODE, true, "yes"));          /* 7 */
	assert_true(agent_audit_executed(a, "c2", AGENT_POLICY_CODE, 0, 5, NULL));           /* 8 */
	assert_true(agent_audit_proposed_action(a, "t1", AGENT_POLICY_OS_OBSERVE, NULL));    /* 9 */
	assert_true(agent_audit_approved(a, "t1", AGENT_POLICY_OS_OBSERVE, false, "look"));  /* 10 */
	assert_true(agent_audit_executed(a, "t1", AGENT_POLICY_OS_OBSERVE, 0, 1, NULL));     /* 11 */
	agent_audit_close(a);
}

enum { SAMPLE_LINES = 11 };

struct sample {
	char *text, *head;
	size_t head_len;
	const char *line[SAMPLE_LINES + 1]; /* line[k]: line k (1-based), with its newline */
	size_t len[SAMPLE_LINES + 1];
};

static void sample_load(struct sample *sm, const char *p)
{
	size_t len;
	sm->text = slurp(p, &len);
	char hp[160];
	snprintf(hp, sizeof(hp), "%s.head", p);
	sm->head = slurp(hp, &sm->head_len);
	const char *q = sm->text;
	for (int k = 1; k <= SAMPLE_LINES; k++) {
		const char *nl = strchr(q, '\n');
		assert_non_null(nl);
		sm->line[k] = q;
		sm->len[k] = (size_t)(nl - q) + 1;
		q = nl + 1;
	}
	assert_int_equal(*q, '\0');
}

/* The log with its lines in the given order (0 ends; negative: a line of text). */
static void expect_edit(const struct sample *sm, const int *order, const char *const *extra,
                        const char *head, int bad_line, const char *needle)
{
	agent_buf b;
	agent_buf_init(&b);
	for (size_t i = 0; order[i] != 0; i++) {
		if (order[i] > 0)
			agent_buf_append(&b, sm->line[order[i]], sm->len[order[i]]);
		else
			agent_buf_puts(&b, extra[-order[i] - 1]);
	}
	agent_audit_report rep;
	if (head == NULL)
		head = sm->head;
	/* "": no head file */
	bool ok = agent_audit_verify_head(b.data != NULL ? b.data : "", b.len,
	                                  head[0] != '\0' ? head : NULL, strlen(head), &rep);
	if (ok || rep.bad_line != bad_line || strstr(rep.problem, needle) == NULL)
		fail_msg("edited log: verify %d, line %d, '%s'; wanted line %d, '%s'\n%s", ok,
		         rep.bad_line, rep.problem, bad_line, needle, agent_buf_cstr(&b));
	agent_buf_finish(&b);
}

/* Replaces the first `from` in line k by `to`. */
static char *edited_line(const struct sample *sm, int k, const char *from, const char *to)
{
	char *l = strndup(sm->line[k], sm->len[k]);
	char *at = strstr(l, from);
	assert_non_null(at);
	char *out = malloc(strlen(l) + strlen(to) + 1);
	sprintf(out, "%.*s%s%s", (int)(at - l), l, to, at + strlen(from));
	free(l);
	return out;
}

/*
 * Every way a block with write access could rewrite the history is seen,
 * at the line where the chain breaks: changing a denial into a yes,
 * removing its own proposal, inserting a forged approval (even one that
 * carries a correct "prev"), swapping lines, cutting off the end,
 * changing the last line, adding after the end, losing the head.
 */
static void tampering_is_detected(void **state)
{
	(void)state;
	const char *p = path_in("tamper.jsonl");
	write_sample(p);
	struct sample sm;
	sample_load(&sm, p);
	agent_audit_report rep;
	int all[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0};
	assert_true(agent_audit_verify_head(sm.text, strlen(sm.text), sm.head, sm.head_len, &rep));
	assert_int_equal(rep.lines, SAMPLE_LINES);

	/* line 4: denied -> approved by the user: line 5 no longer follows it */
	char *yes = edited_line(&sm, 4, "\"event\":\"denied\"", "\"event\":\"approved\"");
	const char *const x1[] = {yes};
	int e1[] = {1, 2, 3, -1, 5, 6, 7, 8, 9, 10, 11, 0};
	expect_edit(&sm, e1, x1, NULL, 5, "line 4 was changed");
	/* line 2 (the block's own proposal) removed */
	int e2[] = {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0};
	expect_edit(&sm, e2, NULL, NULL, 2, "line 2 does not follow line 1");
	/* a forged approval inserted as line 5, carrying line 4's hash as its prev */
	char h4[AGENT_AUDIT_HASH_HEX + 1];
	agent_audit_hash(sm.line[4], sm.len[4], h4);
	char forged[300];
	snprintf(forged, sizeof(forged), "{\"ts\":\"2025-01-02T03:04:05.678Z\",\"event\":\"approved\","
	         "\"id\":\"c1\",\"kind\":\"code\",\"by\":\"user\",\"reason\":\"\",\"prev\":\"%s\"}\n", h4);
	const char *const x3[] = {forged};
	int e3[] = {1, 2, 3, 4, -1, 5, 6, 7, 8, 9, 10, 11, 0};
	expect_edit(&sm, e3, x3, NULL, 5, "line 5 was inserted");
	/* ...and one with a made-up prev */
	const char *const x4[] = {"{\"prev\":\"" "0123456789abcdef0123456789abcdef"
	                          "0123456789abcdef0123456789abcdef\",\"ts\":\"x\"}\n"};
	expect_edit(&sm, e3, x4, NULL, 5, "line 5 does not follow line 4");
	/* two lines swapped */
	int e5[] = {1, 2, 3, 4, 5, 7, 6, 8, 9, 10, 11, 0};
	expect_edit(&sm, e5, NULL, NULL, 6, "line 6 does not follow line 5");
	/* the first line removed */
	int e6[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0};
	expect_edit(&sm, e6, NULL, NULL, 1, "first lines were removed");
	/* the end cut off: the head still counts 11 */
	int e7[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0};
	expect_edit(&sm, e7, NULL, NULL, 10, "cut off");
	/* the last line changed */
	char *last = edited_line(&sm, 11, "\"status\":0", "\"status\":1");
	const char *const x8[] = {last};
	int e8[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, 0};
	expect_edit(&sm, e8, x8, NULL, 11, "changed or replaced");
	/* a line added after the end, chained correctly */
	char h11[AGENT_AUDIT_HASH_HEX + 1];
	agent_audit_hash(sm.line[11], sm.len[11], h11);
	snprintf(forged, sizeof(forged), "{\"ts\":\"2025-01-02T03:04:05.678Z\",\"event\":\"asked\","
	         "\"id\":\"c9\",\"kind\":\"code\",\"reason\":\"\",\"prev\":\"%s\"}\n", h11);
	int e9[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -1, 0};
	expect_edit(&sm, e9, x3, NULL, 12, "after the recorded end (line 11)");
	/* the head lost, or made up */
	expect_edit(&sm, all, NULL, "", 0, "head file is missing");
	expect_edit(&sm, all, NULL, "{\"lines\":11}", 0, "head file is malformed");
	assert_false(agent_audit_verify_head("", 0, NULL, 0, &rep));
	/* the same through the file: the head beside it */
	assert_true(agent_audit_verify_file(p, &rep));
	FILE *f = fopen(p, "w");
	fwrite(sm.text, 1, sm.len[1] + sm.len[2] + sm.len[3], f);
	fclose(f);
	assert_false(agent_audit_verify_file(p, &rep));
	assert_int_equal(rep.bad_line, 4);
	assert_non_null(strstr(rep.problem, "ends after line 3 but its head records 11"));
	free(yes);
	free(last);
	free(sm.text);
	free(sm.head);
}

/*
 * Resuming a conversation continues the chain; a log that no longer
 * verifies (edited, or from before the chain) is kept as it is and the
 * lines go to PATH.2.jsonl, which a later resume extends.
 */
static void resume_continues_or_sets_aside(void **state)
{
	(void)state;
	char p[128], p2[128];
	snprintf(p, sizeof(p), "%s", path_in("resume.jsonl"));
	snprintf(p2, sizeof(p2), "%s", path_in("resume.2.jsonl"));
	write_sample(p);
	agent_audit *a = agent_audit_open(p);
	assert_non_null(a);
	assert_null(agent_audit_set_aside(a));
	assert_true(agent_audit_asked(a, "c3", AGENT_POLICY_CODE, "again"));
	agent_audit_close(a);
	agent_audit_report rep;
	assert_true(agent_audit_verify_file(p, &rep));
	assert_int_equal(rep.lines, SAMPLE_LINES + 1);

	/* a denial turned into an approval */
	size_t len;
	char *text = slurp(p, &len);
	char *at = strstr(text, "\"denied\"");
	memcpy(at, "\"DENIED\"", 8);
	FILE *f = fopen(p, "w");
	fwrite(text, 1, len, f);
	fclose(f);
	a = agent_audit_open(p);
	assert_non_null(a);
	assert_non_null(agent_audit_set_aside(a));
	assert_non_null(strstr(agent_audit_set_aside(a), "resume.jsonl: line 4:"));
	assert_string_equal(agent_audit_path(a), p2);
	agent_policy_settings s = {false, AGENT_POLICY_SAFE_ASK, false};
	assert_true(agent_audit_session(a, "conv", &s));
	agent_audit_close(a);
	size_t len2;
	char *kept = slurp(p, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(kept, text, len); /* the evidence untouched */
	char *next = slurp(p2, &len2);
	assert_non_null(strstr(next, "\"set_aside\":\""));
	assert_true(agent_audit_verify_file(p2, &rep));
	/* the next resume finds the first still broken and extends the second */
	a = agent_audit_open(p);
	assert_non_null(a);
	assert_string_equal(agent_audit_path(a), p2);
	assert_true(agent_audit_asked(a, "c4", AGENT_POLICY_CODE, "more"));
	agent_audit_close(a);
	assert_true(agent_audit_verify_file(p2, &rep));
	assert_int_equal(rep.lines, 2);
	free(text);
	free(kept);
	free(next);

	/* a log without a chain (or without its head) is not extended either */
	char old[128];
	snprintf(old, sizeof(old), "%s", path_in("old.jsonl"));
	f = fopen(old, "w");
	fputs(L("asked", "a", ""), f);
	fclose(f);
	a = agent_audit_open(old);
	assert_non_null(a);
	assert_non_null(strstr(agent_audit_set_aside(a), "line 1: no \"prev\""));
	assert_string_equal(agent_audit_path(a), path_in("old.2.jsonl"));
	agent_audit_close(a);
	/* an empty log whose head is planted, even a huge one, is not taken as new */
	snprintf(old, sizeof(old), "%s", path_in("planted.jsonl"));
	fclose(fopen(old, "w"));
	char head_path[160];
	snprintf(head_path, sizeof(head_path), "%s.head", old);
	f = fopen(head_path, "w");
	for (int i = 0; i < 1000; i++)
		fputs("{\"lines\":0}", f);
	fclose(f);
	a = agent_audit_open(old);
	assert_non_null(a);
	assert_non_null(strstr(agent_audit_set_aside(a), "head file is malformed"));
	agent_audit_close(a);
}

/* A line written behind a handle's back is not blessed by chaining to it. */
static void foreign_line_stops_the_writer(void **state)
{
	(void)state;
	const char *p = path_in("foreign.jsonl");
	agent_audit *a = agent_audit_open(p);
	assert_non_null(a);
	assert_true(agent_audit_asked(a, "a", AGENT_POLICY_CODE, "one"));
	size_t before;
	free(slurp(p, &before));
	FILE *f = fopen(p, "a");
	fputs(L("approved", "a", ",\"by\":\"user\""), f);
	fclose(f);
	assert_false(agent_audit_approved(a, "b", AGENT_POLICY_CODE, true, "yes"));
	assert_non_null(strstr(agent_audit_error(), "changed under deskhand"));
	assert_non_null(strstr(agent_audit_error(), "line 2"));
	size_t after;
	free(slurp(p, &after));
	assert_true(after > before);
	assert_false(agent_audit_asked(a, "c", AGENT_POLICY_CODE, "three"));
	size_t again;
	free(slurp(p, &again));
	assert_int_equal(again, after); /* nothing more added */
	agent_audit_close(a);
}

static void default_path(void **state)
{
	(void)state;
	char data[128];
	snprintf(data, sizeof(data), "%s/xdg-data", dir);
	setenv("XDG_DATA_HOME", data, 1);
	char *p = agent_audit_default_path("2025-01-02_abc-1");
	assert_non_null(p);
	char want[256];
	snprintf(want, sizeof(want), "%s/deskhand/audit/2025-01-02_abc-1.jsonl", data);
	assert_string_equal(p, want);
	struct stat st;
	char sub[200];
	snprintf(sub, sizeof(sub), "%s/deskhand/audit", data);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(sub, sizeof(sub), "%s/deskhand", data);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	agent_audit *a = agent_audit_open(p);
	assert_non_null(a);
	agent_audit_close(a);
	free(p);

	static const char *const bad[] = {"", "../etc/passwd", "a/b", ".hidden", "x y", "é",
	                                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	                                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_null(agent_audit_default_path(bad[i]));
		assert_non_null(strstr(agent_audit_error(), "conversation id"));
	}
	assert_null(agent_audit_default_path(NULL));

	/* relative XDG_DATA_HOME is ignored: ~/.local/share under HOME */
	char home[128];
	snprintf(home, sizeof(home), "%s/home", dir);
	assert_int_equal(mkdir(home, 0700), 0);
	const char *old_home = getenv("HOME");
	char *saved = old_home ? strdup(old_home) : NULL;
	setenv("HOME", home, 1);
	setenv("XDG_DATA_HOME", "relative/dir", 1);
	p = agent_audit_default_path("c");
	snprintf(want, sizeof(want), "%s/.local/share/deskhand/audit/c.jsonl", home);
	assert_string_equal(p, want);
	free(p);
	/* a file where a directory should be */
	snprintf(sub, sizeof(sub), "%s/blocker", dir);
	FILE *f = fopen(sub, "w");
	fclose(f);
	setenv("XDG_DATA_HOME", sub, 1);
	assert_null(agent_audit_default_path("c"));
	if (saved) {
		setenv("HOME", saved, 1);
		free(saved);
	}
	unsetenv("XDG_DATA_HOME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_event_round_trips),
		cmocka_unit_test(hostile_text_stays_valid_json),
		cmocka_unit_test(appends_never_truncates),
		cmocka_unit_test(approval_survives_sudden_death),
		cmocka_unit_test(short_write_is_undone),
		cmocka_unit_test(verifier_catches_violations),
		cmocka_unit_test(tampering_is_detected),
		cmocka_unit_test(resume_continues_or_sets_aside),
		cmocka_unit_test(foreign_line_stops_the_writer),
		cmocka_unit_test(default_path),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
