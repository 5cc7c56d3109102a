/*
 * agent/safety/policy: the whole truth table of agent_policy_decide(), settings at
 * start, magic commands (and that nothing turns os_auto_approve on), the
 * kill-switch predicate on single and multi-monitor layouts, and the list
 * of computer actions.
 *
 * The expected decisions come from an oracle written here from issue 5's
 * rules, one predicate per rule, not from the implementation; every
 * combination of the inputs is checked against it, and against properties
 * that restate each rule on its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/safety/policy.h"

/* ---- the oracle ---------------------------------------------------------- */

struct expect {
	agent_policy_verdict verdict;
	bool scan_first, offer_scan, show_findings, kill_tripped, end_run;
};

static bool is_code_kind(agent_policy_kind k)
{
	return k == AGENT_POLICY_CODE || k == AGENT_POLICY_CODE_DISPLAY;
}

/* Rule 5: findings exist once a scan found something. */
static bool rule5_findings(const agent_policy_input *in)
{
	return in->scanned && in->findings > 0;
}

/* Rules 1, 2, 3: whether a human yes is required for this kind. */
static bool rules123_needs_yes(const agent_policy_input *in)
{
	/* Rule 11: code without a sandbox reaches the display too. */
	bool os_half = in->kind == AGENT_POLICY_OS_INPUT || in->kind == AGENT_POLICY_CODE_DISPLAY ||
	               (in->kind == AGENT_POLICY_CODE && in->unsandboxed);
	bool code_half = in->kind == AGENT_POLICY_CODE || in->kind == AGENT_POLICY_CODE_DISPLAY;
	/* Rule 10: nothing waives input aimed at deskhand's own terminal. */
	if (in->kind == AGENT_POLICY_OS_INPUT && in->own_terminal)
		return true;
	/* Rule 1: only os_auto_approve waives the OS half. */
	if (os_half && !in->os_auto_approve)
		return true;
	/* Rule 3: auto_run waives the code half (ordinary code only). */
	if (code_half && !in->auto_run)
		return true;
	/* Rule 2: observations never ask. */
	return false;
}

/* Rule 5: safe mode decides whether a scan must come first. */
static bool rule5_scan_pending(const agent_policy_input *in)
{
	return is_code_kind(in->kind) && !in->scanned && in->safe_mode != AGENT_POLICY_SAFE_OFF;
}

static struct expect oracle(const agent_policy_input *in)
{
	struct expect e = {0};
	/* Rule 12: a vendor's safety check is a human's, whatever else holds. */
	if (in->vendor_check) {
		e.verdict = in->interactive ? AGENT_POLICY_ASK : AGENT_POLICY_BLOCK;
		return e;
	}
	if (rule5_findings(in)) {
		e.verdict = AGENT_POLICY_ASK;
		e.show_findings = true;
		return e;
	}
	bool needs_yes = rules123_needs_yes(in);
	if (rule5_scan_pending(in)) {
		e.verdict = AGENT_POLICY_ASK;
		/* ask: a scan is offered when a question is due; with nobody to
		 * ask (auto_run), it happens by itself, as under auto. */
		if (in->safe_mode == AGENT_POLICY_SAFE_ASK && needs_yes)
			e.offer_scan = true;
		else
			e.scan_first = true;
		return e;
	}
	if (needs_yes) {
		e.verdict = AGENT_POLICY_ASK;
		return e;
	}
	/* Rule 8: the kill switch guards what would run without a question. */
	if (in->kill_tripped) {
		e.kill_tripped = true;
		e.verdict = in->interactive ? AGENT_POLICY_ASK : AGENT_POLICY_BLOCK;
		e.end_run = !in->interactive;
		return e;
	}
	e.verdict = AGENT_POLICY_RUN;
	return e;
}

/* ---- enumeration ----------------------------------------------------------- */

static const unsigned findings_values[] = {0, 1, 7};

typedef void (*case_fn)(const agent_policy_input *in, const agent_policy_decision *d,
                        void *ctx);

static size_t for_each_input(case_fn fn, void *ctx)
{
	size_t n = 0;
	for (int kind = 0; kind < AGENT_POLICY_KIND_COUNT; kind++)
	for (int ar = 0; ar < 2; ar++)
	for (int sm = 0; sm < AGENT_POLICY_SAFE_COUNT; sm++)
	for (int sc = 0; sc < 2; sc++)
	for (size_t fi = 0; fi < 3; fi++)
	for (int sev = 0; sev < AGENT_SCAN_SEVERITY_COUNT; sev++)
	for (int oa = 0; oa < 2; oa++)
	for (int kt = 0; kt < 2; kt++)
	for (int ia = 0; ia < 2; ia++)
	for (int ot = 0; ot < 2; ot++)
	for (int un = 0; un < 2; un++)
	for (int vc = 0; vc < 2; vc++) {
		agent_policy_input in = {
			.kind = (agent_policy_kind)kind,
			.auto_run = ar,
			.safe_mode = (agent_policy_safe_mode)sm,
			.scanned = sc,
			.findings = findings_values[fi],
			.worst = (agent_scan_severity)sev,
			.os_auto_approve = oa,
			.kill_tripped = kt,
			.interactive = ia,
			.own_terminal = ot,
			.unsandboxed = un,
			.vendor_check = vc,
		};
		agent_policy_decision d = agent_policy_decide(&in);
		fn(&in, &d, ctx);
		n++;
	}
	return n;
}

static void describe(const agent_policy_input *in, char *buf, size_t size)
{
	snprintf(buf, size,
	         "kind=%s auto_run=%d safe=%s scanned=%d findings=%u worst=%s os_auto=%d kill=%d "
	         "interactive=%d own_terminal=%d unsandboxed=%d vendor_check=%d",
	         agent_policy_kind_name(in->kind), in->auto_run,
	         agent_policy_safe_mode_name(in->safe_mode), in->scanned, in->findings,
	         agent_scan_severity_name(in->worst), in->os_auto_approve, in->kill_tripped,
	         in->interactive, in->own_terminal, in->unsandboxed, in->vendor_check);
}

static void check_oracle(const agent_policy_input *in, const agent_policy_decision *d, void *ctx)
{
	size_t *bad = ctx;
	struct expect e = oracle(in);
	bool same = d->verdict == e.verdict && d->scan_first == e.scan_first &&
	            d->offer_scan == e.offer_scan && d->show_findings == e.show_findings &&
	            d->kill_tripped == e.kill_tripped && d->end_run == e.end_run;
	if (!same) {
		char what[256];
		describe(in, what, sizeof(what));
		print_error("mismatch: %s: got %s scan_first=%d offer=%d show=%d kill=%d end=%d, "
		            "expected %s %d %d %d %d %d\n", what,
		            agent_policy_verdict_name(d->verdict), d->scan_first, d->offer_scan,
		            d->show_findings, d->kill_tripped, d->end_run,
		            agent_policy_verdict_name(e.verdict), e.scan_first, e.offer_scan,
		            e.show_findings, e.kill_tripped, e.end_run);
		(*bad)++;
	}
	if (d->reason[0] == '\0' || memchr(d->reason, '\0', sizeof(d->reason)) == NULL) {
		print_error("empty or unterminated reason\n");
		(*bad)++;
	}
}

static void truth_table_matches_oracle(void **state)
{
	(void)state;
	size_t bad = 0;
	size_t n = for_each_input(check_oracle, &bad);
	assert_int_equal(n, 4 * 2 * 3 * 2 * 3 * 5 * 2 * 2 * 2 * 2 * 2 * 2);
	assert_int_equal(bad, 0);
}

/* Each rule restated on its own, over the whole table. */
static void check_properties(const agent_policy_input *in, const agent_policy_decision *d,
                             void *ctx)
{
	size_t *bad = ctx;
	char what[256];
	describe(in, what, sizeof(what));
#define PROP(cond, name)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			print_error("property '%s' broken: %s -> %s\n", name, what, \
			            agent_policy_verdict_name(d->verdict));         \
			(*bad)++;                                               \
		}                                                               \
	} while (0)

	bool run = d->verdict == AGENT_POLICY_RUN;
	/* 1: input and display code never run unasked without os_auto_approve. */
	PROP(!(run && (in->kind == AGENT_POLICY_OS_INPUT || in->kind == AGENT_POLICY_CODE_DISPLAY) &&
	       !in->os_auto_approve), "rule 1");
	/* 10: input aimed at deskhand's own terminal never runs unasked. */
	PROP(!(run && in->kind == AGENT_POLICY_OS_INPUT && in->own_terminal), "rule 10");
	/* 11: without a sandbox, no code runs unasked without os_auto_approve. */
	PROP(!(run && is_code_kind(in->kind) && in->unsandboxed && !in->os_auto_approve),
	     "rule 11");
	/* Each of the two matters only for its own kinds. */
	if (in->kind != AGENT_POLICY_OS_INPUT) {
		agent_policy_input o2 = *in;
		o2.own_terminal = !in->own_terminal;
		PROP(agent_policy_decide(&o2).verdict == d->verdict, "own_terminal only for input");
	}
	if (in->kind != AGENT_POLICY_CODE) {
		agent_policy_input o2 = *in;
		o2.unsandboxed = !in->unsandboxed;
		PROP(agent_policy_decide(&o2).verdict == d->verdict, "unsandboxed only for code");
	}
	/* 2: a clean observation with no kill switch runs, whatever else is set. */
	PROP(!(in->kind == AGENT_POLICY_OS_OBSERVE && !rule5_findings(in) && !in->kill_tripped &&
	       !in->vendor_check) || run, "rule 2");
	/* 12: a vendor's safety check never runs unasked, not even under
	 * os_auto_approve; asked when someone is there, refused otherwise. */
	PROP(!(in->vendor_check && run), "rule 12 never unasked");
	PROP(!(in->vendor_check && in->interactive) || d->verdict == AGENT_POLICY_ASK,
	     "rule 12 asked");
	PROP(!(in->vendor_check && !in->interactive) ||
	     (d->verdict == AGENT_POLICY_BLOCK && !d->end_run), "rule 12 refused");
	/* 3: ordinary code runs unasked only under auto_run. */
	PROP(!(run && is_code_kind(in->kind) && !in->auto_run), "rule 3");
	/* 5: findings never run; code is never run unscanned under ask/auto. */
	PROP(!(run && rule5_findings(in)), "rule 5 findings");
	PROP(!(rule5_findings(in) && !in->vendor_check && !d->show_findings), "rule 5 shown");
	PROP(!(run && is_code_kind(in->kind) && !in->scanned &&
	       in->safe_mode != AGENT_POLICY_SAFE_OFF), "rule 5 scan");
	/* 8: a tripped kill switch never runs anything unasked. */
	PROP(!(run && in->kill_tripped), "rule 8");
	/* BLOCK only for the kill switch in a non-interactive run, ending it. */
	PROP(d->verdict != AGENT_POLICY_BLOCK ||
	     (in->kill_tripped && !in->interactive && d->end_run && d->kill_tripped) ||
	     (in->vendor_check && !in->interactive), "block");
	/* end_run only with BLOCK. */
	PROP(!d->end_run || d->verdict == AGENT_POLICY_BLOCK, "end_run");
	/* flags that ask for a question come with ASK. */
	PROP(!(d->offer_scan || d->show_findings || d->scan_first) || d->verdict == AGENT_POLICY_ASK,
	     "flags imply ask");
	/* severity never changes the verdict: any finding goes to a human. */
	agent_policy_input other = *in;
	other.worst = in->worst == AGENT_SCAN_CRITICAL ? AGENT_SCAN_LOW : AGENT_SCAN_CRITICAL;
	PROP(agent_policy_decide(&other).verdict == d->verdict, "severity-independent");
	/* auto_run has no say over OS input or observations. */
	if (in->kind == AGENT_POLICY_OS_INPUT || in->kind == AGENT_POLICY_OS_OBSERVE) {
		other = *in;
		other.auto_run = !in->auto_run;
		PROP(agent_policy_decide(&other).verdict == d->verdict, "auto_run only for code");
	}
	/* The kill switch is consulted only for what would run unasked. */
	if (in->kill_tripped) {
		other = *in;
		other.kill_tripped = false;
		agent_policy_decision without = agent_policy_decide(&other);
		PROP(without.verdict == AGENT_POLICY_RUN || (without.verdict == d->verdict &&
		                                             !d->kill_tripped),
		     "kill only when unasked");
	}
#undef PROP
}

static void truth_table_properties(void **state)
{
	(void)state;
	size_t bad = 0;
	for_each_input(check_properties, &bad);
	assert_int_equal(bad, 0);
}

/*
 * The caller's protocol: scan when asked to (scan_first), or when the human
 * accepts the offer, then decide again. The second decision never asks for
 * a scan again, and a clean scan under auto_run runs.
 */
static void check_two_phase(const agent_policy_input *in, const agent_policy_decision *d,
                            void *ctx)
{
	size_t *bad = ctx;
	if (!d->scan_first && !d->offer_scan)
		return;
	if (in->scanned) {
		(*bad)++;
		return;
	}
	agent_policy_input again = *in;
	again.scanned = true;
	agent_policy_decision d2 = agent_policy_decide(&again);
	if (d2.scan_first || d2.offer_scan)
		(*bad)++;
	if (in->findings > 0 && !(d2.verdict == AGENT_POLICY_ASK && d2.show_findings))
		(*bad)++;
	if (in->findings == 0 && in->auto_run && in->kind == AGENT_POLICY_CODE &&
	    (!in->unsandboxed || in->os_auto_approve) &&
	    !in->kill_tripped && d2.verdict != AGENT_POLICY_RUN)
		(*bad)++;
}

static void two_phase_scan_protocol(void **state)
{
	(void)state;
	size_t bad = 0;
	for_each_input(check_two_phase, &bad);
	assert_int_equal(bad, 0);
}

static void invalid_input_blocks(void **state)
{
	(void)state;
	agent_policy_input in = {.kind = (agent_policy_kind)42, .auto_run = true,
	                         .os_auto_approve = true};
	agent_policy_decision d = agent_policy_decide(&in);
	assert_int_equal(d.verdict, AGENT_POLICY_BLOCK);
	assert_true(d.end_run);
	in.kind = AGENT_POLICY_OS_OBSERVE;
	in.safe_mode = (agent_policy_safe_mode)9;
	d = agent_policy_decide(&in);
	assert_int_equal(d.verdict, AGENT_POLICY_BLOCK);
}

static void reasons_name_the_cause(void **state)
{
	(void)state;
	agent_policy_input in = {.kind = AGENT_POLICY_CODE, .scanned = true, .findings = 2,
	                         .worst = AGENT_SCAN_CRITICAL, .auto_run = true};
	agent_policy_decision d = agent_policy_decide(&in);
	assert_non_null(strstr(d.reason, "2 issues"));
	assert_non_null(strstr(d.reason, "critical"));
	in = (agent_policy_input){.kind = AGENT_POLICY_OS_INPUT, .os_auto_approve = true,
	                          .kill_tripped = true, .interactive = false};
	d = agent_policy_decide(&in);
	assert_non_null(strstr(d.reason, "kill switch"));
}

/* ---- settings -------------------------------------------------------------- */

static void startup_reconciliation(void **state)
{
	(void)state;
	for (int ar = 0; ar < 2; ar++)
	for (int sm = 0; sm < AGENT_POLICY_SAFE_COUNT; sm++)
	for (int oa = 0; oa < 2; oa++) {
		agent_policy_settings req = {ar, (agent_policy_safe_mode)sm, oa};
		agent_policy_startup st = agent_policy_settings_startup(&req);
		bool switched = ar && sm != AGENT_POLICY_SAFE_OFF;
		assert_int_equal(st.settings.auto_run, ar && !switched);
		assert_int_equal(st.settings.safe_mode, sm);
		assert_int_equal(st.settings.os_auto_approve, oa);
		assert_int_equal(st.n_notices, switched ? 1 : 0);
		if (switched) {
			assert_non_null(strstr(st.notices[0], "auto_run switched off"));
			assert_non_null(strstr(st.notices[0], agent_policy_safe_mode_name(sm)));
		}
		if (oa) {
			assert_non_null(st.banner);
			assert_non_null(strstr(st.banner, "WARNING"));
			assert_non_null(strstr(st.banner, "corner"));
		} else {
			assert_null(st.banner);
		}
	}
	agent_policy_settings bad = {true, (agent_policy_safe_mode)7, false};
	agent_policy_startup st = agent_policy_settings_startup(&bad);
	assert_int_equal(st.settings.safe_mode, AGENT_POLICY_SAFE_ASK);
	assert_false(st.settings.auto_run);
	assert_int_equal(st.n_notices, 2);
}

static void stop_turns_automatic_control_off(void **state)
{
	(void)state;
	agent_policy_settings s = {true, AGENT_POLICY_SAFE_OFF, true};
	const char *notice = agent_policy_settings_stop(&s);
	assert_false(s.auto_run);
	assert_false(s.os_auto_approve);
	assert_non_null(notice);
	/* Afterwards OS input asks again. */
	agent_policy_input in = {.kind = AGENT_POLICY_OS_INPUT, .os_auto_approve = s.os_auto_approve};
	assert_int_equal(agent_policy_decide(&in).verdict, AGENT_POLICY_ASK);
}

/* ---- magic commands -------------------------------------------------------- */

static void assert_magic(const char *line, agent_policy_magic_cmd cmd, const char *arg)
{
	agent_policy_magic m;
	agent_policy_magic_cmd got = agent_policy_magic_parse(line, &m);
	if (got != cmd)
		fail_msg("'%s': got command %d, expected %d", line ? line : "(null)", got, cmd);
	assert_int_equal(m.cmd, cmd);
	if (arg != NULL) {
		assert_int_equal(m.arg_len, strlen(arg));
		assert_memory_equal(m.arg, arg, m.arg_len);
	}
}

static void magic_parsing(void **state)
{
	(void)state;
	assert_magic("%auto_run true", AGENT_MAGIC_AUTO_RUN, "true");
	assert_magic("  %auto_run   false  \n", AGENT_MAGIC_AUTO_RUN, "false");
	assert_magic("%auto-run on", AGENT_MAGIC_AUTO_RUN, "on");
	assert_magic("%auto_run", AGENT_MAGIC_AUTO_RUN, "");
	assert_magic("%safe_mode auto", AGENT_MAGIC_SAFE_MODE, "auto");
	assert_magic("%reset", AGENT_MAGIC_RESET, "");
	assert_magic("%undo", AGENT_MAGIC_UNDO, "");
	assert_magic("%verbose true", AGENT_MAGIC_VERBOSE, "true");
	assert_magic("%tokens", AGENT_MAGIC_TOKENS, "");
	assert_magic("%save_message  my chat.json \r\n", AGENT_MAGIC_SAVE_MESSAGE, "my chat.json");
	assert_magic("%load_message /tmp/x.json", AGENT_MAGIC_LOAD_MESSAGE, "/tmp/x.json");
	assert_magic("%markdown", AGENT_MAGIC_MARKDOWN, "");
	assert_magic("%info", AGENT_MAGIC_INFO, "");
	assert_magic("%help", AGENT_MAGIC_HELP, "");
	assert_magic("%os_auto_approve true", AGENT_MAGIC_OS_AUTO_APPROVE, "true");
	assert_magic("%os-auto-approve", AGENT_MAGIC_OS_AUTO_APPROVE, "");
	assert_magic("%frobnicate now", AGENT_MAGIC_UNKNOWN, "frobnicate");
	assert_magic("%", AGENT_MAGIC_UNKNOWN, "");
	assert_magic("%AUTO_RUN true", AGENT_MAGIC_UNKNOWN, "AUTO_RUN");
	assert_magic("%auto_runx true", AGENT_MAGIC_UNKNOWN, "auto_runx");
	assert_magic("hello %auto_run true", AGENT_MAGIC_NONE, NULL);
	assert_magic("100% sure", AGENT_MAGIC_NONE, NULL);
	assert_magic("", AGENT_MAGIC_NONE, NULL);
	assert_magic(NULL, AGENT_MAGIC_NONE, NULL);
	assert_int_equal(agent_policy_magic_parse("%help", NULL), AGENT_MAGIC_HELP);
	assert_string_equal(agent_policy_magic_name(AGENT_MAGIC_SAFE_MODE), "safe_mode");
	assert_string_equal(agent_policy_magic_name(AGENT_MAGIC_NONE), "");
}

static agent_policy_change apply_line(agent_policy_settings *s, const char *line, char *msg)
{
	agent_policy_magic m;
	agent_policy_magic_parse(line, &m);
	return agent_policy_magic_apply(s, &m, msg, 200);
}

static void magic_settings(void **state)
{
	(void)state;
	char msg[200];
	agent_policy_settings s = {false, AGENT_POLICY_SAFE_ASK, false};
	assert_int_equal(apply_line(&s, "%auto_run true", msg), AGENT_POLICY_CHANGED);
	assert_true(s.auto_run);
	assert_non_null(strstr(msg, "scanned"));
	assert_int_equal(apply_line(&s, "%auto_run true", msg), AGENT_POLICY_UNCHANGED);
	assert_int_equal(apply_line(&s, "%auto_run", msg), AGENT_POLICY_UNCHANGED);
	assert_string_equal(msg, "auto_run is on");
	assert_int_equal(apply_line(&s, "%auto_run maybe", msg), AGENT_POLICY_INVALID);
	assert_true(s.auto_run);
	assert_int_equal(apply_line(&s, "%auto_run false", msg), AGENT_POLICY_CHANGED);
	assert_false(s.auto_run);
	assert_int_equal(apply_line(&s, "%safe_mode auto", msg), AGENT_POLICY_CHANGED);
	assert_int_equal(s.safe_mode, AGENT_POLICY_SAFE_AUTO);
	assert_int_equal(apply_line(&s, "%safe_mode", msg), AGENT_POLICY_UNCHANGED);
	assert_string_equal(msg, "safe mode is auto");
	assert_int_equal(apply_line(&s, "%safe_mode paranoid", msg), AGENT_POLICY_INVALID);
	assert_int_equal(s.safe_mode, AGENT_POLICY_SAFE_AUTO);
	assert_int_equal(apply_line(&s, "%safe_mode off", msg), AGENT_POLICY_CHANGED);
	assert_int_equal(apply_line(&s, "%reset", msg), AGENT_POLICY_REFUSED);
	assert_string_equal(msg, "%reset is not a setting");
	assert_int_equal(apply_line(&s, "%frob x", msg), AGENT_POLICY_REFUSED);
	assert_string_equal(msg, "unknown command %frob (%help lists them)");
	/* A truncated message buffer stays terminated. */
	agent_policy_magic m;
	agent_policy_magic_parse("%os_auto_approve true", &m);
	char tiny[8];
	assert_int_equal(agent_policy_magic_apply(&s, &m, tiny, sizeof(tiny)), AGENT_POLICY_REFUSED);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_int_equal(agent_policy_magic_apply(&s, &m, NULL, 0), AGENT_POLICY_REFUSED);
}

/* No command, with any argument, can switch os_auto_approve on. */
static void nothing_enables_os_auto_approve(void **state)
{
	(void)state;
	static const char *const names[] = {
		"auto_run", "safe_mode", "reset", "undo", "verbose", "tokens", "save_message",
		"load_message", "markdown", "info", "help", "os_auto_approve", "os-auto-approve",
		"os_auto_approval", "osautoapprove", "set",
	};
	static const char *const args[] = {"", "true", "on", "1", "yes", "auto", "ask", "off",
	                                   "os_auto_approve=true", "true --force"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (size_t j = 0; j < sizeof(args) / sizeof(args[0]); j++) {
			char line[128], msg[200];
			snprintf(line, sizeof(line), "%%%s %s", names[i], args[j]);
			agent_policy_settings s = {false, AGENT_POLICY_SAFE_OFF, false};
			agent_policy_change c = apply_line(&s, line, msg);
			assert_false(s.os_auto_approve);
			if (strcmp(names[i], "os_auto_approve") == 0 ||
			    strcmp(names[i], "os-auto-approve") == 0) {
				assert_int_equal(c, AGENT_POLICY_REFUSED);
				assert_non_null(strstr(msg, "only be set when deskhand starts"));
			}
		}
	}
	/* Refusing does not switch it off either when it was set at start. */
	agent_policy_settings s = {false, AGENT_POLICY_SAFE_OFF, true};
	char msg[200];
	assert_int_equal(apply_line(&s, "%os_auto_approve false", msg), AGENT_POLICY_REFUSED);
	assert_true(s.os_auto_approve);
}

/* ---- kill switch ----------------------------------------------------------- */

static agent_policy_kill ks(int x, int y, const agent_policy_rect *m, size_t n,
                            const agent_policy_point *last)
{
	char reason[160];
	agent_policy_kill k = agent_policy_killswitch((agent_policy_point){x, y}, m, n, last,
	                                              reason, sizeof(reason));
	if (k != AGENT_POLICY_KILL_NONE)
		assert_true(strlen(reason) > 10);
	else
		assert_string_equal(reason, "");
	return k;
}

static void killswitch_single_monitor(void **state)
{
	(void)state;
	const agent_policy_rect one[] = {{0, 0, 1920, 1080}};
	const int corners[4][2] = {{0, 0}, {1919, 0}, {0, 1079}, {1919, 1079}};
	const int inward[4][2] = {{1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
	for (int c = 0; c < 4; c++) {
		int x = corners[c][0], y = corners[c][1], dx = inward[c][0], dy = inward[c][1];
		assert_int_equal(ks(x, y, one, 1, NULL), AGENT_POLICY_KILL_CORNER);
		/* exactly 2 px away still trips, 3 px does not */
		assert_int_equal(ks(x + 2 * dx, y, one, 1, NULL), AGENT_POLICY_KILL_CORNER);
		assert_int_equal(ks(x, y + 2 * dy, one, 1, NULL), AGENT_POLICY_KILL_CORNER);
		assert_int_equal(ks(x + 2 * dx, y + 2 * dy, one, 1, NULL), AGENT_POLICY_KILL_CORNER);
		assert_int_equal(ks(x + 3 * dx, y, one, 1, NULL), AGENT_POLICY_KILL_NONE);
		assert_int_equal(ks(x, y + 3 * dy, one, 1, NULL), AGENT_POLICY_KILL_NONE);
		assert_int_equal(ks(x + 3 * dx, y + 2 * dy, one, 1, NULL), AGENT_POLICY_KILL_NONE);
	}
	assert_int_equal(ks(960, 540, one, 1, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(960, 0, one, 1, NULL), AGENT_POLICY_KILL_NONE); /* an edge */
	/* A monitor not at the origin. */
	const agent_policy_rect off[] = {{100, 50, 800, 600}};
	assert_int_equal(ks(100, 50, off, 1, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(899, 649, off, 1, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(102, 52, off, 1, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(103, 50, off, 1, NULL), AGENT_POLICY_KILL_NONE);
}

static void killswitch_multi_monitor(void **state)
{
	(void)state;
	/* Side by side, same height: the shared corners are passages. */
	const agent_policy_rect pair[] = {{0, 0, 1920, 1080}, {1920, 0, 1920, 1080}};
	assert_int_equal(ks(1919, 0, pair, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1920, 0, pair, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1919, 1079, pair, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1921, 1078, pair, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(0, 0, pair, 2, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(3839, 0, pair, 2, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(3837, 1077, pair, 2, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(0, 1079, pair, 2, NULL), AGENT_POLICY_KILL_CORNER);

	/* Different heights, tops aligned: the taller one's lower right corner
	 * is real, the shorter one's lower left is not. */
	const agent_policy_rect mixed[] = {{0, 0, 1920, 1080}, {1920, 0, 1280, 1024}};
	assert_int_equal(ks(1919, 1079, mixed, 2, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(1920, 1023, mixed, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1919, 0, mixed, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(3199, 1023, mixed, 2, NULL), AGENT_POLICY_KILL_CORNER);

	/* The right one lower by 200 px: A's top right is a corner. */
	const agent_policy_rect lower[] = {{0, 0, 1920, 1080}, {1920, 200, 1920, 1080}};
	assert_int_equal(ks(1919, 0, lower, 2, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(1920, 200, lower, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1920, 1279, lower, 2, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(1919, 1079, lower, 2, NULL), AGENT_POLICY_KILL_NONE);

	/* Stacked vertically. */
	const agent_policy_rect stack[] = {{0, 0, 1920, 1080}, {0, 1080, 1920, 1080}};
	assert_int_equal(ks(0, 1079, stack, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1919, 1080, stack, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(0, 2159, stack, 2, NULL), AGENT_POLICY_KILL_CORNER);

	/* Touching only diagonally: the pointer can cross there. */
	const agent_policy_rect diag[] = {{0, 0, 1920, 1080}, {1920, 1080, 1920, 1080}};
	assert_int_equal(ks(1919, 1079, diag, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1920, 1080, diag, 2, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(1919, 0, diag, 2, NULL), AGENT_POLICY_KILL_CORNER);

	/* Mirrored (cloned) monitors on the same area. */
	const agent_policy_rect clone[] = {{0, 0, 1920, 1080}, {0, 0, 1920, 1080}};
	assert_int_equal(ks(0, 0, clone, 2, NULL), AGENT_POLICY_KILL_CORNER);
	assert_int_equal(ks(1919, 1079, clone, 2, NULL), AGENT_POLICY_KILL_CORNER);
}

static void killswitch_moved(void **state)
{
	(void)state;
	const agent_policy_rect one[] = {{0, 0, 1920, 1080}};
	agent_policy_point last = {500, 400};
	assert_int_equal(ks(500, 400, one, 1, &last), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(501, 400, one, 1, &last), AGENT_POLICY_KILL_MOVED);
	assert_int_equal(ks(500, 399, one, 1, &last), AGENT_POLICY_KILL_MOVED);
	assert_int_equal(ks(501, 400, one, 1, NULL), AGENT_POLICY_KILL_NONE);
	/* A corner wins over a move, and trips even where deskhand left it. */
	assert_int_equal(ks(0, 0, one, 1, &last), AGENT_POLICY_KILL_CORNER);
	agent_policy_point at_corner = {1919, 0};
	assert_int_equal(ks(1919, 0, one, 1, &at_corner), AGENT_POLICY_KILL_CORNER);
	/* No monitors: only the move check. */
	assert_int_equal(ks(0, 0, NULL, 0, NULL), AGENT_POLICY_KILL_NONE);
	assert_int_equal(ks(0, 0, NULL, 0, &last), AGENT_POLICY_KILL_MOVED);
	/* Degenerate monitors are ignored; NULL reason is allowed. */
	const agent_policy_rect empty[] = {{0, 0, 0, 0}};
	assert_int_equal(agent_policy_killswitch((agent_policy_point){0, 0}, empty, 1, NULL, NULL, 0),
	                 AGENT_POLICY_KILL_NONE);
}

/* ---- actions --------------------------------------------------------------- */

static void action_classes(void **state)
{
	(void)state;
	static const char *const inputs[] = {
		"key", "type", "mouse_move", "left_click", "right_click", "middle_click", "back_click",
		"forward_click",
		"double_click", "triple_click", "left_click_drag", "left_mouse_down",
		"left_mouse_up", "scroll", "hold_key", "key_down", "key_up",
	};
	static const char *const observations[] = {"screenshot", "cursor_position", "zoom", "wait",
	                                           "find_text", "elements", "windows"};
	agent_action a;
	agent_policy_kind k;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		assert_true(agent_policy_action_lookup(inputs[i], &a, &k));
		assert_int_equal(k, AGENT_POLICY_OS_INPUT);
		assert_string_equal(agent_action_name(a), inputs[i]);
		assert_int_equal(agent_policy_action_kind(a), AGENT_POLICY_OS_INPUT);
	}
	for (size_t i = 0; i < sizeof(observations) / sizeof(observations[0]); i++) {
		assert_true(agent_policy_action_lookup(observations[i], &a, &k));
		assert_int_equal(k, AGENT_POLICY_OS_OBSERVE);
		assert_string_equal(agent_action_name(a), observations[i]);
	}
	assert_int_equal(sizeof(inputs) / sizeof(inputs[0]) +
	                 sizeof(observations) / sizeof(observations[0]), AGENT_ACTION_COUNT);
	a = AGENT_ACTION_KEY;
	k = AGENT_POLICY_CODE;
	static const char *const unknown[] = {"launch_missiles", "", "Left_Click", "screenshot ",
	                                      "left_click\n", "zoom_in"};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		assert_false(agent_policy_action_lookup(unknown[i], &a, &k));
	assert_false(agent_policy_action_lookup(NULL, &a, &k));
	assert_int_equal(a, AGENT_ACTION_KEY); /* untouched on failure */
	assert_int_equal(k, AGENT_POLICY_CODE);
	assert_int_equal(agent_policy_action_kind((agent_action)99), AGENT_POLICY_OS_INPUT);
	assert_string_equal(agent_action_name((agent_action)99), "unknown");
	assert_true(agent_policy_action_lookup("wait", NULL, NULL));
}

static void names(void **state)
{
	(void)state;
	agent_policy_safe_mode m;
	assert_true(agent_policy_safe_mode_parse("auto", &m));
	assert_int_equal(m, AGENT_POLICY_SAFE_AUTO);
	assert_false(agent_policy_safe_mode_parse("Auto", &m));
	assert_false(agent_policy_safe_mode_parse(NULL, &m));
	assert_string_equal(agent_policy_kind_name(AGENT_POLICY_CODE_DISPLAY), "code_display");
	assert_string_equal(agent_policy_kind_name((agent_policy_kind)-1), "unknown");
	assert_string_equal(agent_policy_verdict_name(AGENT_POLICY_BLOCK), "block");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(truth_table_matches_oracle),
		cmocka_unit_test(truth_table_properties),
		cmocka_unit_test(two_phase_scan_protocol),
		cmocka_unit_test(invalid_input_blocks),
		cmocka_unit_test(reasons_name_the_cause),
		cmocka_unit_test(startup_reconciliation),
		cmocka_unit_test(stop_turns_automatic_control_off),
		cmocka_unit_test(magic_parsing),
		cmocka_unit_test(magic_settings),
		cmocka_unit_test(nothing_enables_os_auto_approve),
		cmocka_unit_test(killswitch_single_monitor),
		cmocka_unit_test(killswitch_multi_monitor),
		cmocka_unit_test(killswitch_moved),
		cmocka_unit_test(action_classes),
		cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
