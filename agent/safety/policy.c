/*
 * agent/safety/policy — the decision of run / ask / block, settings at start and
 * under magic commands, and the kill-switch predicate. Pure: see policy.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/safety/policy.h"
#include "base/base.h"

/* ---- names ------------------------------------------------------------- */

static const char *const kind_names[AGENT_POLICY_KIND_COUNT] = {
	[AGENT_POLICY_CODE] = "code",
	[AGENT_POLICY_CODE_DISPLAY] = "code_display",
	[AGENT_POLICY_OS_INPUT] = "os_input",
	[AGENT_POLICY_OS_OBSERVE] = "os_observe",
};

const char *agent_policy_kind_name(agent_policy_kind kind)
{
	return base_name_of(BASE_NAMES(kind_names), (int)kind, "unknown");
}

const char *const agent_policy_safe_mode_names[AGENT_POLICY_SAFE_COUNT] = {
	[AGENT_POLICY_SAFE_OFF] = "off",
	[AGENT_POLICY_SAFE_ASK] = "ask",
	[AGENT_POLICY_SAFE_AUTO] = "auto",
};
BASE_NAME_FUNCTIONS(agent_policy_safe_mode, agent_policy_safe_mode_names,
                    agent_policy_safe_mode_parse, agent_policy_safe_mode_name, "unknown")

static const char *const verdict_names[AGENT_POLICY_VERDICT_COUNT] = {
	[AGENT_POLICY_RUN] = "run",
	[AGENT_POLICY_ASK] = "ask",
	[AGENT_POLICY_BLOCK] = "block",
};

const char *agent_policy_verdict_name(agent_policy_verdict v)
{
	return base_name_of(BASE_NAMES(verdict_names), (int)v, "unknown");
}

/* ---- actions ----------------------------------------------------------- */


bool agent_policy_action_lookup(const char *name, agent_action *action,
                                agent_policy_kind *kind)
{
	agent_action a;
	if (!agent_action_lookup(name, &a))
		return false;
	if (action != NULL)
		*action = a;
	if (kind != NULL)
		*kind = agent_policy_action_kind(a);
	return true;
}

agent_policy_kind agent_policy_action_kind(agent_action action)
{
	/* The table's class; out of range counts as input, the stricter. */
	return agent_action_is_input(action) ? AGENT_POLICY_OS_INPUT : AGENT_POLICY_OS_OBSERVE;
}

/* ---- the decision ------------------------------------------------------ */

static agent_policy_decision decision(agent_policy_verdict v, const char *reason)
{
	agent_policy_decision d;
	memset(&d, 0, sizeof(d));
	d.verdict = v;
	snprintf(d.reason, sizeof(d.reason), "%s", reason);
	return d;
}

static bool is_code(agent_policy_kind k)
{
	return k == AGENT_POLICY_CODE || k == AGENT_POLICY_CODE_DISPLAY;
}

/* Rule 11: code outside any sandbox can reach the display like code given it. */
static agent_policy_kind effective_kind(const agent_policy_input *in)
{
	if (in->kind == AGENT_POLICY_CODE && in->unsandboxed)
		return AGENT_POLICY_CODE_DISPLAY;
	return in->kind;
}

/* Whether a human must answer before this runs, findings aside. */
static bool question_due(const agent_policy_input *in, const char **why)
{
	switch (effective_kind(in)) {
	case AGENT_POLICY_CODE:
		*why = "code needs your yes (auto_run is off)";
		return !in->auto_run;
	case AGENT_POLICY_CODE_DISPLAY:
		if (!in->os_auto_approve) {
			*why = in->kind == AGENT_POLICY_CODE
				? "with --sandbox off every block can reach the display: it needs your yes"
				: "code with access to the display needs your yes";
			return true;
		}
		*why = "code needs your yes (auto_run is off)";
		return !in->auto_run;
	case AGENT_POLICY_OS_INPUT:
		if (in->own_terminal) {
			/* Typed there, it would read as the user's own line. */
			*why = "input that may reach deskhand's own terminal needs your yes, "
			       "even under --os-auto-approve";
			return true;
		}
		*why = "desktop input needs your yes";
		return !in->os_auto_approve;
	case AGENT_POLICY_OS_OBSERVE:
	case AGENT_POLICY_KIND_COUNT:
		break;
	}
	*why = "";
	return false;
}

agent_policy_decision agent_policy_decide(const agent_policy_input *in)
{
	if ((unsigned)in->kind >= AGENT_POLICY_KIND_COUNT ||
	    (unsigned)in->safe_mode >= AGENT_POLICY_SAFE_COUNT) {
		agent_policy_decision d =
			decision(AGENT_POLICY_BLOCK, "invalid input to the policy: unknown kind or safe mode");
		d.end_run = true;
		return d;
	}

	if (in->vendor_check)
		return in->interactive
			? decision(AGENT_POLICY_ASK, "the model's vendor raised a safety check: it needs "
			           "your yes, even under --os-auto-approve")
			: decision(AGENT_POLICY_BLOCK, "the model's vendor raised a safety check and "
			           "nobody is here to acknowledge it");

	if (in->scanned && in->findings > 0) {
		agent_policy_decision d = decision(AGENT_POLICY_ASK, "");
		d.show_findings = true;
		snprintf(d.reason, sizeof(d.reason),
		         "the safety scan found %u issue%s (worst: %s)", in->findings,
		         in->findings == 1 ? "" : "s",
		         agent_scan_severity_name(in->worst));
		return d;
	}

	const char *why = "";
	bool ask = question_due(in, &why);

	if (is_code(in->kind) && !in->scanned && in->safe_mode != AGENT_POLICY_SAFE_OFF) {
		if (in->safe_mode == AGENT_POLICY_SAFE_ASK && ask) {
			agent_policy_decision d = decision(AGENT_POLICY_ASK, why);
			d.offer_scan = true;
			return d;
		}
		agent_policy_decision d = decision(AGENT_POLICY_ASK,
			in->safe_mode == AGENT_POLICY_SAFE_AUTO
				? "safe mode auto: scan before deciding"
				: "safe mode ask under auto_run: scan before running");
		d.scan_first = true;
		return d;
	}

	if (ask)
		return decision(AGENT_POLICY_ASK, why);

	if (in->kill_tripped) {
		agent_policy_decision d;
		if (in->interactive) {
			d = decision(AGENT_POLICY_ASK,
			             "kill switch: automatic control stopped; this action needs your yes");
		} else {
			d = decision(AGENT_POLICY_BLOCK,
			             "kill switch: automatic control stopped; the run ends");
			d.end_run = true;
		}
		d.kill_tripped = true;
		return d;
	}

	switch (effective_kind(in)) {
	case AGENT_POLICY_OS_OBSERVE:
		return decision(AGENT_POLICY_RUN, "observation: runs without a question");
	case AGENT_POLICY_CODE:
		return decision(AGENT_POLICY_RUN, in->scanned ? "auto_run; the scan found nothing" : "auto_run");
	case AGENT_POLICY_CODE_DISPLAY:
		return decision(AGENT_POLICY_RUN, in->scanned
			? "auto_run and os_auto_approve (set at start); the scan found nothing"
			: "auto_run and os_auto_approve (set at start)");
	default:
		return decision(AGENT_POLICY_RUN, "os_auto_approve set at start");
	}
}

/* ---- settings ---------------------------------------------------------- */

static const char banner_text[] =
	"************************************************************************\n"
	"*  WARNING: --os-auto-approve is set.                                  *\n"
	"*  deskhand will move the mouse, click and type on this desktop, and   *\n"
	"*  run code that can reach the display, WITHOUT asking you first.      *\n"
	"*  To stop it: push the mouse pointer into a screen corner, or move    *\n"
	"*  the mouse yourself. Control then returns to you.                    *\n"
	"************************************************************************\n";

agent_policy_startup agent_policy_settings_startup(const agent_policy_settings *requested)
{
	agent_policy_startup st;
	memset(&st, 0, sizeof(st));
	st.settings = *requested;
	if ((unsigned)st.settings.safe_mode >= AGENT_POLICY_SAFE_COUNT) {
		st.settings.safe_mode = AGENT_POLICY_SAFE_ASK;
		st.notices[st.n_notices++] = "unknown safe mode: using safe mode ask";
	}
	if (st.settings.auto_run && st.settings.safe_mode != AGENT_POLICY_SAFE_OFF) {
		st.settings.auto_run = false;
		st.notices[st.n_notices++] =
			st.settings.safe_mode == AGENT_POLICY_SAFE_ASK
				? "auto_run switched off because safe mode is ask (%auto_run true switches it on again)"
				: "auto_run switched off because safe mode is auto (%auto_run true switches it on again)";
	}
	if (st.settings.os_auto_approve)
		st.banner = banner_text;
	return st;
}

const char *agent_policy_settings_stop(agent_policy_settings *s)
{
	s->os_auto_approve = false;
	s->auto_run = false;
	return "automatic control stopped: every action now needs your yes "
	       "(auto_run is off; os_auto_approve stays off until restart)";
}

/* ---- magic commands ---------------------------------------------------- */

/* NONE and UNKNOWN name no command: holes. */
static const char *const magic_names[] = {
	[AGENT_MAGIC_AUTO_RUN] = "auto_run",
	[AGENT_MAGIC_SAFE_MODE] = "safe_mode",
	[AGENT_MAGIC_RESET] = "reset",
	[AGENT_MAGIC_UNDO] = "undo",
	[AGENT_MAGIC_VERBOSE] = "verbose",
	[AGENT_MAGIC_TOKENS] = "tokens",
	[AGENT_MAGIC_SAVE_MESSAGE] = "save_message",
	[AGENT_MAGIC_LOAD_MESSAGE] = "load_message",
	[AGENT_MAGIC_MARKDOWN] = "markdown",
	[AGENT_MAGIC_INFO] = "info",
	[AGENT_MAGIC_HELP] = "help",
	[AGENT_MAGIC_OS_AUTO_APPROVE] = "os_auto_approve",
	[AGENT_MAGIC_UNKNOWN] = NULL,
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* The command typed as name[0..len), where '-' stands for '_'; UNKNOWN for none. */
static agent_policy_magic_cmd magic_lookup(const char *name, size_t len)
{
	char want[32];
	if (len >= sizeof(want))
		return AGENT_MAGIC_UNKNOWN;
	for (size_t i = 0; i < len; i++)
		want[i] = name[i] == '-' ? '_' : name[i];
	int i = base_name_index_len(BASE_NAMES(magic_names), want, len);
	return i < 0 ? AGENT_MAGIC_UNKNOWN : (agent_policy_magic_cmd)i;
}

agent_policy_magic_cmd agent_policy_magic_parse(const char *line, agent_policy_magic *out)
{
	agent_policy_magic m = {AGENT_MAGIC_NONE, NULL, 0};
	if (out != NULL)
		*out = m;
	if (line == NULL)
		return AGENT_MAGIC_NONE;
	const char *p = line;
	while (is_blank(*p))
		p++;
	if (*p != '%')
		return AGENT_MAGIC_NONE;
	p++;
	const char *name = p;
	while (*p != '\0' && !is_blank(*p))
		p++;
	size_t name_len = (size_t)(p - name);
	while (is_blank(*p))
		p++;
	const char *arg = p;
	const char *end = arg + strlen(arg);
	while (end > arg && is_blank(end[-1]))
		end--;

	m.cmd = magic_lookup(name, name_len);
	m.arg = m.cmd == AGENT_MAGIC_UNKNOWN ? name : arg;
	m.arg_len = m.cmd == AGENT_MAGIC_UNKNOWN ? name_len : (size_t)(end - arg);
	if (out != NULL)
		*out = m;
	return m.cmd;
}

const char *agent_policy_magic_name(agent_policy_magic_cmd cmd)
{
	return base_name_of(BASE_NAMES(magic_names), (int)cmd, "");
}

static bool arg_is(const agent_policy_magic *m, const char *word)
{
	return m->arg_len == strlen(word) && memcmp(m->arg, word, m->arg_len) == 0;
}

static agent_policy_change say(char *msg, size_t size, agent_policy_change c,
                               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static agent_policy_change say(char *msg, size_t size, agent_policy_change c,
                               const char *fmt, ...)
{
	if (msg != NULL && size > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, size, fmt, ap);
		va_end(ap);
	}
	return c;
}

agent_policy_change agent_policy_magic_apply(agent_policy_settings *s,
                                             const agent_policy_magic *m,
                                             char *msg, size_t msg_size)
{
	if (m->cmd == AGENT_MAGIC_OS_AUTO_APPROVE)
		return say(msg, msg_size, AGENT_POLICY_REFUSED,
		           "os_auto_approve can only be set when deskhand starts "
		           "(--os-auto-approve or the config file)");

	if (m->cmd == AGENT_MAGIC_AUTO_RUN) {
		bool want;
		if (m->arg_len == 0)
			return say(msg, msg_size, AGENT_POLICY_UNCHANGED, "auto_run is %s",
			           s->auto_run ? "on" : "off");
		if (arg_is(m, "true") || arg_is(m, "on"))
			want = true;
		else if (arg_is(m, "false") || arg_is(m, "off"))
			want = false;
		else
			return say(msg, msg_size, AGENT_POLICY_INVALID,
			           "usage: %%auto_run [true|false]");
		if (s->auto_run == want)
			return say(msg, msg_size, AGENT_POLICY_UNCHANGED, "auto_run is already %s",
			           want ? "on" : "off");
		s->auto_run = want;
		if (!want)
			return say(msg, msg_size, AGENT_POLICY_CHANGED,
			           "auto_run is off: every code block needs your yes");
		return say(msg, msg_size, AGENT_POLICY_CHANGED,
		           "auto_run is on: ordinary code runs without asking; desktop "
		           "actions and blocks with scan findings still ask%s",
		           s->safe_mode == AGENT_POLICY_SAFE_OFF ? "" : " (every block is scanned first)");
	}

	if (m->cmd == AGENT_MAGIC_SAFE_MODE) {
		static const char *const what[AGENT_POLICY_SAFE_COUNT] = {
			[AGENT_POLICY_SAFE_OFF] = "code is not scanned",
			[AGENT_POLICY_SAFE_ASK] = "you are offered a scan before each block",
			[AGENT_POLICY_SAFE_AUTO] = "every block is scanned",
		};
		if (m->arg_len == 0)
			return say(msg, msg_size, AGENT_POLICY_UNCHANGED, "safe mode is %s",
			           agent_policy_safe_mode_name(s->safe_mode));
		int i = base_name_index_len(BASE_NAMES(agent_policy_safe_mode_names), m->arg,
		                            m->arg_len);
		if (i < 0) {
			char modes[32];
			base_names_join(BASE_NAMES(agent_policy_safe_mode_names), "|", NULL, modes,
			                sizeof(modes));
			return say(msg, msg_size, AGENT_POLICY_INVALID, "usage: %%safe_mode %s", modes);
		}
		agent_policy_safe_mode want = (agent_policy_safe_mode)i;
		if (s->safe_mode == want)
			return say(msg, msg_size, AGENT_POLICY_UNCHANGED, "safe mode is already %s",
			           agent_policy_safe_mode_name(want));
		s->safe_mode = want;
		return say(msg, msg_size, AGENT_POLICY_CHANGED, "safe mode is %s: %s",
		           agent_policy_safe_mode_name(want), what[want]);
	}

	if (m->cmd == AGENT_MAGIC_UNKNOWN || m->cmd == AGENT_MAGIC_NONE)
		return say(msg, msg_size, AGENT_POLICY_REFUSED, "unknown command %%%.*s (%%help lists them)",
		           (int)(m->arg_len > 64 ? 64 : m->arg_len), m->arg != NULL ? m->arg : "");
	return say(msg, msg_size, AGENT_POLICY_REFUSED, "%%%s is not a setting",
	           agent_policy_magic_name(m->cmd));
}

/* ---- the kill switch --------------------------------------------------- */

static bool on_monitor(int x, int y, const agent_policy_rect *r)
{
	return x >= r->x && y >= r->y && (long)x < (long)r->x + r->width &&
	       (long)y < (long)r->y + r->height;
}

static bool on_any(int x, int y, const agent_policy_rect *mons, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (on_monitor(x, y, &mons[i]))
			return true;
	return false;
}

static void say_reason(char *reason, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say_reason(char *reason, size_t size, const char *fmt, ...)
{
	if (reason != NULL && size > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(reason, size, fmt, ap);
		va_end(ap);
	}
}

agent_policy_kill agent_policy_killswitch(agent_policy_point p,
                                          const agent_policy_rect *mons,
                                          size_t n, const agent_policy_point *last,
                                          char *reason, size_t reason_size)
{
	if (reason != NULL && reason_size > 0)
		reason[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const agent_policy_rect *r = &mons[i];
		if (r->width <= 0 || r->height <= 0 || !on_monitor(p.x, p.y, r))
			continue;
		/* The four corner pixels and the outward direction of each. */
		const int cx[4] = {r->x, r->x + r->width - 1, r->x, r->x + r->width - 1};
		const int cy[4] = {r->y, r->y, r->y + r->height - 1, r->y + r->height - 1};
		const int dx[4] = {-1, 1, -1, 1};
		const int dy[4] = {-1, -1, 1, 1};
		for (int c = 0; c < 4; c++) {
			int ax = p.x - cx[c], ay = p.y - cy[c];
			if (ax < -AGENT_POLICY_CORNER_PX || ax > AGENT_POLICY_CORNER_PX ||
			    ay < -AGENT_POLICY_CORNER_PX || ay > AGENT_POLICY_CORNER_PX)
				continue;
			if (on_any(cx[c] + dx[c], cy[c], mons, n) ||
			    on_any(cx[c], cy[c] + dy[c], mons, n) ||
			    on_any(cx[c] + dx[c], cy[c] + dy[c], mons, n))
				continue; /* another monitor continues there */
			say_reason(reason, reason_size,
			           "kill switch: the pointer (%d,%d) is in a screen corner (%d,%d)",
			           p.x, p.y, cx[c], cy[c]);
			return AGENT_POLICY_KILL_CORNER;
		}
	}
	if (last != NULL && (last->x != p.x || last->y != p.y)) {
		say_reason(reason, reason_size,
		           "kill switch: someone moved the pointer (deskhand left it at %d,%d; it is at %d,%d)",
		           last->x, last->y, p.x, p.y);
		return AGENT_POLICY_KILL_MOVED;
	}
	return AGENT_POLICY_KILL_NONE;
}
