/* agent/ui/terminal — human and --json faces of the agent; see terminal.h. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <errno.h>
#include <termios.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/ui/markdown.h"
#include "agent/ui/terminal.h"
#include "agent/util/textutil.h"
#include "config.h"

#if DESKHAND_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

struct agent_term {
	char *history;          /* the line editor's history file, or NULL */
	bool json;
	bool color;
	bool tty_in;
	bool err_tty;
	agent_md md;
	bool in_text;
	bool in_thinking;       /* dimmed thinking was written; a newline closes it */
	/* Foreign text on its way to the terminal: the model's, code output's. */
	agent_show text_show, out_show[2];
	pthread_mutex_t lock;
	pthread_t spinner;
	bool spinner_running;
	volatile bool spinner_stop;
	char spinner_label[64];
	bool work_mode;         /* the terminal is held between prompts */
	bool discard_at_read;   /* an action ran: discard its input before reading */
	/* A second place that answers (agent_term_set_remote). */
	agent_term_remote remote;
	bool have_remote;
	bool stdin_ended;       /* with a remote: the terminal can no longer answer */
	char answered_from[64];
	char *edit_text;        /* the remote's edit, until taken */
};

/*
 * Between prompts (while the model thinks or code runs) the terminal is held
 * without canonical input and echo, keeping signals. Without this, a key
 * typed while deskhand works meets the kernel's line discipline instead of
 * the line editor: Ctrl-D becomes an end-of-file marker that turns into a
 * stray character at the next prompt (after which Ctrl-D no longer quits),
 * and typed-ahead text is echoed into the model's output. Held, every key
 * waits as a plain byte for the line editor, which shows and reads it.
 *
 * The terminal as found is kept here, not in agent_term, so that a signal
 * handler can put it back (agent_term_tty_restore).
 */
static struct termios tty_found;
static volatile sig_atomic_t tty_found_valid;

/*
 * Only the terminal's foreground job may set its modes: a background one
 * (deskhand -m TASK &) would be stopped by SIGTTOU, so it leaves the
 * terminal alone. tcgetpgrp is async-signal-safe.
 */
static bool tty_in_foreground(void)
{
	return tcgetpgrp(STDIN_FILENO) == getpgrp();
}

static void tty_hold(agent_term *t)
{
	if (!t->work_mode || !tty_in_foreground())
		return;
	struct termios w = tty_found;
	w.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ECHONL | IEXTEN);
	w.c_lflag |= ISIG;
	w.c_cc[VMIN] = 1;
	w.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &w);
}

void agent_term_tty_restore(void)
{
	if (tty_found_valid && tty_in_foreground())
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_found);
}

void agent_term_tty_release(agent_term *t)
{
	if (t != NULL && t->work_mode)
		agent_term_tty_restore();
}

void agent_term_tty_reclaim(agent_term *t)
{
	if (t != NULL)
		tty_hold(t);
}

static void md_sink(const char *s, size_t len, void *user)
{
	(void)user;
	fwrite(s, 1, len, stdout);
}

agent_term *agent_term_create(bool json)
{
	agent_term *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->json = json;
	t->tty_in = isatty(STDIN_FILENO);
	t->err_tty = isatty(STDERR_FILENO);
	const char *term = getenv("TERM");
	t->color = !json && isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL &&
	           !(term != NULL && strcmp(term, "dumb") == 0);
	pthread_mutex_init(&t->lock, NULL);
	agent_md_init(&t->md, t->color, md_sink, t);
	agent_show_init(&t->text_show, AGENT_SHOW_LINES);
	agent_show_init(&t->out_show[0], AGENT_SHOW_LINES);
	agent_show_init(&t->out_show[1], AGENT_SHOW_LINES);
#if DESKHAND_HAVE_LIBEDIT
	/* History survives sessions, like a shell's: $XDG_DATA_HOME/deskhand/history.
	 * Setting the line editor up sets the terminal's modes: not from a
	 * background job (it would stop); its first prompt does it later. */
	if (t->tty_in && !json && tty_in_foreground()) {
		char dir[4000], path[4096] = "";
		if (agent_own_dir(AGENT_DIR_DATA, dir, sizeof(dir)))
			snprintf(path, sizeof(path), "%s/history", dir);
		using_history();
		stifle_history(1000);
		if (path[0] != '\0') {
			t->history = strdup(path);
			read_history(path);
		}
		/* using_history() has set the line editor up from the terminal as
		 * found. Its mode outside editing becomes the held one, so that no
		 * key meets canonical input between its return and tty_hold. */
		if (tcgetattr(STDIN_FILENO, &tty_found) == 0) {
			tty_found_valid = 1;
			t->work_mode = true;
			rl_parse_and_bind("setty -x -icanon -echo -echonl -iexten");
			tty_hold(t);
		}
	}
#endif
	return t;
}

void agent_term_destroy(agent_term *t)
{
	if (t == NULL)
		return;
	agent_term_spinner_stop(t);
	agent_term_text_end(t);
	fflush(stdout);
	free(t->edit_text);
#if DESKHAND_HAVE_LIBEDIT
	if (t->history != NULL) {
		/* Created private: it holds what the user typed. */
		mode_t old = umask(077);
		write_history(t->history);
		umask(old);
	}
#endif
	free(t->history);
	agent_term_tty_release(t);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

bool agent_term_interactive(const agent_term *t)
{
	return t->tty_in;
}

void agent_term_details(agent_term *t, const char *id, const char *text)
{
	agent_term_print(t, text);
	if (t->have_remote && t->remote.details != NULL)
		t->remote.details(t->remote.ctx, id, text);
}

bool agent_term_answerable(const agent_term *t)
{
	return t->tty_in || t->have_remote;
}

void agent_term_set_remote(agent_term *t, const agent_term_remote *r)
{
	t->have_remote = r != NULL;
	if (r != NULL)
		t->remote = *r;
}

const char *agent_term_answered_from(const agent_term *t)
{
	return t->answered_from[0] != '\0' ? t->answered_from : "terminal";
}

char *agent_term_take_edit(agent_term *t)
{
	char *e = t->edit_text;
	t->edit_text = NULL;
	return e;
}

bool agent_term_json(const agent_term *t)
{
	return t->json;
}

/* Emits one JSON event line; takes ownership of `ev`. */
static void emit(agent_term *t, cJSON *ev)
{
	char *s = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	if (s == NULL)
		return;
	pthread_mutex_lock(&t->lock);
	fputs(s, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&t->lock);
	free(s);
}

/* Adds a string member, replacing invalid UTF-8 so the line stays JSON. */
static void add_text(cJSON *o, const char *key, const char *s, size_t n)
{
	char *clean = agent_utf8_sanitize(s, n, NULL);
	cJSON_AddStringToObject(o, key, clean != NULL ? clean : "");
	free(clean);
}

static cJSON *event(const char *type)
{
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "event", type);
	return ev;
}

/* Ends a run of thinking with its line (called with the lock held). */
static void thinking_close(agent_term *t)
{
	if (!t->in_thinking)
		return;
	fputc('\n', stdout);
	t->in_thinking = false;
}

void agent_term_thinking(agent_term *t, const char *s, size_t n)
{
	agent_term_spinner_stop(t);
	if (t->json) {
		cJSON *ev = event("thinking");
		add_text(ev, "text", s, n);
		emit(t, ev);
		return;
	}
	agent_buf shown;
	agent_buf_init(&shown);
	agent_show_append(&shown, s, n, AGENT_SHOW_LINES);
	pthread_mutex_lock(&t->lock);
	/* The styling is deskhand's own, written apart from the shown text. */
	if (t->color)
		fputs("\033[2m", stdout);
	fwrite(shown.data != NULL ? shown.data : "", 1, shown.len, stdout);
	if (t->color)
		fputs("\033[0m", stdout);
	t->in_thinking = true;
	fflush(stdout);
	pthread_mutex_unlock(&t->lock);
	agent_buf_finish(&shown);
}

void agent_term_text(agent_term *t, const char *s, size_t n)
{
	agent_term_spinner_stop(t);
	if (t->json) {
		cJSON *ev = event("text");
		add_text(ev, "text", s, n);
		emit(t, ev);
		return;
	}
	agent_buf shown;
	agent_buf_init(&shown);
	pthread_mutex_lock(&t->lock);
	thinking_close(t);
	t->in_text = true;
	agent_show_feed(&t->text_show, &shown, s, n);
	agent_md_feed(&t->md, shown.data != NULL ? shown.data : "", shown.len);
	fflush(stdout);
	pthread_mutex_unlock(&t->lock);
	agent_buf_finish(&shown);
}

void agent_term_text_end(agent_term *t)
{
	if (!t->json && t->in_thinking) {
		pthread_mutex_lock(&t->lock);
		thinking_close(t);
		fflush(stdout);
		pthread_mutex_unlock(&t->lock);
	}
	if (t->json || !t->in_text)
		return;
	agent_buf shown;
	agent_buf_init(&shown);
	pthread_mutex_lock(&t->lock);
	agent_show_end(&t->text_show, &shown);
	agent_md_feed(&t->md, shown.data != NULL ? shown.data : "", shown.len);
	agent_buf_finish(&shown);
	agent_md_finish(&t->md);
	fputc('\n', stdout);
	fflush(stdout);
	t->in_text = false;
	pthread_mutex_unlock(&t->lock);
}

/*
 * Writes text deskhand did not write, or built around such text, in its
 * shown form (agent_show_append): deskhand's own styling is written apart
 * from it, so it is the only escape sequence that reaches the terminal.
 */
static void put_shown(FILE *f, const char *s, size_t n, unsigned flags)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_show_append(&b, s, n, flags);
	fwrite(agent_buf_cstr(&b), 1, strlen(agent_buf_cstr(&b)), f);
	agent_buf_finish(&b);
}

/* The end of code output: a character it left half-written shows as U+FFFD. */
static void output_end(agent_term *t)
{
	for (int i = 0; i < 2; i++) {
		agent_buf b;
		agent_buf_init(&b);
		agent_show_end(&t->out_show[i], &b);
		fputs(agent_buf_cstr(&b), i ? stderr : stdout);
		agent_buf_finish(&b);
	}
}

/*
 * Before human output: the spinner's line and any open model text end
 * first, and the output holds the lock (the spinner thread writes too).
 * The caller unlocks t->lock.
 */
static void human_begin(agent_term *t)
{
	agent_term_spinner_stop(t);
	agent_term_text_end(t);
	pthread_mutex_lock(&t->lock);
	output_end(t);
}

static void human(agent_term *t, FILE *f, const char *sgr, const char *prefix,
                  const char *fmt, va_list ap)
{
	human_begin(t);
	fflush(stdout);
	bool color = t->color && (f == stdout || t->err_tty);
	if (color)
		fputs(sgr, f);
	fputs(prefix, f);
	/* The arguments carry server replies, file names, scanner findings. */
	char *text = agent_vformat(fmt, ap);
	if (text != NULL)
		put_shown(f, text, strlen(text), AGENT_SHOW_LINES);
	free(text);
	if (color)
		fputs("\033[0m", f);
	fputc('\n', f);
	fflush(f);
	pthread_mutex_unlock(&t->lock);
}

/* One line of notice, warning or error: a JSON event or stderr text. */
static void message(agent_term *t, const char *type, const char *sgr, const char *prefix,
                    const char *fmt, va_list ap)
{
	if (!t->json) {
		human(t, stderr, sgr, prefix, fmt, ap);
		return;
	}
	char buf[2048];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	cJSON *ev = event(type);
	add_text(ev, "message", buf, strlen(buf));
	emit(t, ev);
}

#define TERM_MESSAGE(name, type, sgr, prefix) \
	void name(agent_term *t, const char *fmt, ...) \
	{ \
		va_list ap; \
		va_start(ap, fmt); \
		message(t, type, sgr, prefix, fmt, ap); \
		va_end(ap); \
	}

TERM_MESSAGE(agent_term_notice, "notice", "\033[2m", "")
TERM_MESSAGE(agent_term_warning, "warning", "\033[1;33m", "warning: ")
TERM_MESSAGE(agent_term_error, "error", "\033[1;31m", "deskhand: ")

void agent_term_print(agent_term *t, const char *text)
{
	if (t->json) {
		cJSON *ev = event("info");
		add_text(ev, "text", text, strlen(text));
		emit(t, ev);
		return;
	}
	human_begin(t);
	put_shown(stdout, text, strlen(text), AGENT_SHOW_LINES);
	if (text[0] != '\0' && text[strlen(text) - 1] != '\n')
		fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&t->lock);
}

void agent_term_show_code(agent_term *t, const char *id, const char *language,
                          const char *code, bool display)
{
	if (t->json) {
		cJSON *ev = event("tool_call");
		cJSON_AddStringToObject(ev, "id", id);
		cJSON_AddStringToObject(ev, "tool", "execute");
		cJSON_AddStringToObject(ev, "language", language);
		add_text(ev, "code", code, strlen(code));
		cJSON_AddBoolToObject(ev, "display", display);
		emit(t, ev);
		return;
	}
	human_begin(t);
	char *lang = agent_show_dup(language, 0);
	if (t->color)
		printf("\033[2m── %s%s ──\033[0m\n\033[36m", lang ? lang : "?",
		       display ? " (with the display)" : "");
	else
		printf("── %s%s ──\n", lang ? lang : "?", display ? " (with the display)" : "");
	free(lang);
	/* What the human approves: nothing in it may hide or move a line. */
	put_shown(stdout, code, strlen(code), AGENT_SHOW_LINES | AGENT_SHOW_STRICT);
	if (code[0] != '\0' && code[strlen(code) - 1] != '\n')
		fputc('\n', stdout);
	if (t->color)
		fputs("\033[0m", stdout);
	fflush(stdout);
	pthread_mutex_unlock(&t->lock);
}

void agent_term_show_action(agent_term *t, const char *id, const char *summary,
                            const char *action_json)
{
	if (t->json) {
		cJSON *ev = event("tool_call");
		cJSON_AddStringToObject(ev, "id", id);
		cJSON_AddStringToObject(ev, "tool", "computer");
		add_text(ev, "summary", summary, strlen(summary));
		cJSON *a = cJSON_Parse(action_json);
		if (a != NULL)
			cJSON_AddItemToObject(ev, "action", a);
		emit(t, ev);
		return;
	}
	human_begin(t);
	fputs(t->color ? "\033[1;34m▶ " : "> ", stdout);
	put_shown(stdout, summary, strlen(summary), AGENT_SHOW_LINES);
	fputs(t->color ? "\033[0m\n" : "\n", stdout);
	fflush(stdout);
	pthread_mutex_unlock(&t->lock);
}

void agent_term_output(agent_term *t, const char *s, size_t n, agent_term_stream st)
{
	if (t->json) {
		cJSON *ev = event("output");
		cJSON_AddStringToObject(ev, "stream", st == AGENT_TERM_STDERR ? "stderr" : "stdout");
		add_text(ev, "text", s, n);
		emit(t, ev);
		return;
	}
	agent_buf shown;
	agent_buf_init(&shown);
	pthread_mutex_lock(&t->lock);
	FILE *f = st == AGENT_TERM_STDERR ? stderr : stdout;
	agent_show_feed(&t->out_show[st == AGENT_TERM_STDERR], &shown, s, n);
	fputs(agent_buf_cstr(&shown), f);
	fflush(f);
	pthread_mutex_unlock(&t->lock);
	agent_buf_finish(&shown);
}

void agent_term_result(agent_term *t, const char *id, const char *status,
                       const char *text)
{
	if (!t->json)
		return;
	cJSON *ev = event("result");
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "status", status);
	add_text(ev, "text", text, strlen(text));
	emit(t, ev);
}

void agent_term_decision(agent_term *t, const char *id, const char *decision,
                         const char *reason)
{
	if (t->json) {
		cJSON *ev = event("decision");
		cJSON_AddStringToObject(ev, "id", id);
		cJSON_AddStringToObject(ev, "decision", decision);
		add_text(ev, "reason", reason, strlen(reason));
		emit(t, ev);
		return;
	}
	agent_term_notice(t, "%s: %s", decision, reason);
}

/* ---- inline images ---------------------------------------------------- */

static char *base64(const unsigned char *in, size_t n, size_t *out_len)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1);
	if (out == NULL)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = tbl[(v >> 18) & 63];
		out[o++] = tbl[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? tbl[v & 63] : '=';
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

void agent_term_show_image(agent_term *t, const char *png_path)
{
	if (t->json) {
		cJSON *ev = event("image");
		add_text(ev, "path", png_path, strlen(png_path));
		emit(t, ev);
		return;
	}
	if (!isatty(STDOUT_FILENO))
		return;
	const char *term = getenv("TERM");
	const char *prog = getenv("TERM_PROGRAM");
	bool kitty = getenv("KITTY_WINDOW_ID") != NULL || (term && strstr(term, "kitty"));
	bool iterm = prog && (strcmp(prog, "iTerm.app") == 0 || strcmp(prog, "WezTerm") == 0);
	if (!kitty && !iterm)
		return;
	FILE *f = fopen(png_path, "rb");
	if (f == NULL)
		return;
	agent_buf b;
	agent_buf_init(&b);
	char chunk[8192];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len < (8u << 20))
		agent_buf_append(&b, chunk, n);
	fclose(f);
	size_t len = 0;
	char *enc = base64((const unsigned char *)b.data, b.len, &len);
	size_t raw = b.len;
	agent_buf_finish(&b);
	if (enc == NULL)
		return;
	human_begin(t);
	if (iterm) {
		printf("\033]1337;File=inline=1;size=%zu:%s\a\n", raw, enc);
	} else {
		/* kitty: PNG (f=100), sent in chunks of at most 4096 bytes. */
		for (size_t off = 0; off < len; off += 4096) {
			size_t k = len - off < 4096 ? len - off : 4096;
			bool more = off + k < len;
			if (off == 0)
				printf("\033_Ga=T,f=100,m=%d;", more ? 1 : 0);
			else
				printf("\033_Gm=%d;", more ? 1 : 0);
			fwrite(enc + off, 1, k, stdout);
			fputs("\033\\", stdout);
		}
		fputc('\n', stdout);
	}
	fflush(stdout);
	pthread_mutex_unlock(&t->lock);
	free(enc);
}

/* ---- spinner --------------------------------------------------------- */

static void *spinner_main(void *arg)
{
	agent_term *t = arg;
	static const char *const frames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
	unsigned i = 0;
	while (!t->spinner_stop) {
		pthread_mutex_lock(&t->lock);
		fprintf(stderr, "\r\033[2m%s %s\033[0m\033[K", frames[i++ % 10], t->spinner_label);
		fflush(stderr);
		pthread_mutex_unlock(&t->lock);
		struct timespec ts = {0, 80 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&t->lock);
	fputs("\r\033[K", stderr);
	fflush(stderr);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

void agent_term_spinner_start(agent_term *t, const char *label)
{
	if (t->json || !t->err_tty || t->spinner_running)
		return;
	snprintf(t->spinner_label, sizeof(t->spinner_label), "%s", label);
	t->spinner_stop = false;
	if (pthread_create(&t->spinner, NULL, spinner_main, t) == 0)
		t->spinner_running = true;
}

void agent_term_spinner_stop(agent_term *t)
{
	if (!t->spinner_running)
		return;
	t->spinner_stop = true;
	pthread_join(t->spinner, NULL);
	t->spinner_running = false;
}

/* ---- input ----------------------------------------------------------- */

/* Discards what waits on the terminal; returns how many bytes it was. */
static int discard_pending(agent_term *t)
{
	int pending = 0;
	if (!t->tty_in || t->json)
		return 0;
	if (ioctl(STDIN_FILENO, FIONREAD, &pending) != 0 || pending <= 0)
		return 0;
	if (tcflush(STDIN_FILENO, TCIFLUSH) != 0)
		return 0;
	return pending;
}

/*
 * A question counts only keys pressed after it appeared: text typed ahead
 * for the next task, a "y" among it, must never answer a confirmation.
 */
static void discard_typeahead(agent_term *t)
{
	int pending = discard_pending(t);
	if (pending > 0)
		agent_term_notice(t, "%d typed-ahead character%s discarded: a question takes "
		                  "only keys pressed after it appears", pending,
		                  pending == 1 ? "" : "s");
}

/* Input that deskhand's own action typed into its own terminal. */
static void discard_action_input(agent_term *t)
{
	int pending = discard_pending(t);
	if (pending > 0)
		agent_term_notice(t, "%d character%s discarded: they reached this terminal while "
		                  "deskhand's own action ran, so they were not typed by you",
		                  pending, pending == 1 ? "" : "s");
}

void agent_term_discard_action_input(agent_term *t)
{
	if (t == NULL || !t->tty_in || t->json)
		return;
	discard_action_input(t);
	t->discard_at_read = true;
}

static char *read_plain_line(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	if (n > 0 && line[n - 1] == '\r')
		line[--n] = '\0';
	return line;
}

char *agent_term_read_line(agent_term *t, const char *prompt)
{
	agent_term_spinner_stop(t);
	agent_term_text_end(t);
	if (t->discard_at_read) {
		t->discard_at_read = false;
		discard_action_input(t);
	}
#if DESKHAND_HAVE_LIBEDIT
	if (t->tty_in && !t->json) {
		char *line = readline(prompt);
		tty_hold(t);
		if (line != NULL && line[0] != '\0')
			add_history(line);
		return line;
	}
#endif
	if (t->tty_in && !t->json) {
		fputs(prompt, stdout);
		fflush(stdout);
	}
	return read_plain_line();
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	size_t lead = strspn(s, " \t");
	memmove(s, s + lead, strlen(s + lead) + 1);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

/* The answers a question may take, by key and by word. */
static const struct {
	char key;
	const char *word;
	const char *label;
	agent_term_answer answer;
} ask_opts[] = {
	{'y', "yes", "y=run", AGENT_ANSWER_YES},
	{'n', "no", "n=deny", AGENT_ANSWER_NO},
	{'e', "edit", "e=edit", AGENT_ANSWER_EDIT},
	{'d', "details", "d=details", AGENT_ANSWER_DETAILS},
	{'s', "scan", "s=scan", AGENT_ANSWER_SCAN},
};
#define ASK_OPTS (sizeof(ask_opts) / sizeof(ask_opts[0]))

enum waited { WAITED_INPUT, WAITED_REMOTE, WAITED_INTERRUPT };

/*
 * With a remote attached: waits until standard input has a line to read
 * or the remote has an answer, or Ctrl-C. The end of standard input is
 * seen by the reader, which then stops offering it here.
 *
 * Ctrl-C is seen by its flag, looked at before each wait and at least
 * every WAIT_CANCEL_MS: a SIGINT that came just before poll, or that
 * another thread (the console's) took, interrupts no poll here, and a
 * question waiting for it would wait for ever.
 */
#define WAIT_CANCEL_MS 200
static enum waited wait_terminal_or_remote(agent_term *t)
{
	for (;;) {
		if (t->remote.cancel != NULL && *t->remote.cancel)
			return WAITED_INTERRUPT;
		struct pollfd fds[2] = {
			{.fd = t->remote.fd, .events = POLLIN},
			{.fd = t->stdin_ended ? -1 : STDIN_FILENO, .events = POLLIN},
		};
		int n = poll(fds, 2, WAIT_CANCEL_MS);
		if (n == 0 || (n < 0 && errno == EINTR))
			continue; /* the flag is looked at above; another signal: wait on */
		if (n < 0 || (fds[0].revents & POLLIN))
			return WAITED_REMOTE;
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR))
			return WAITED_INPUT;
	}
}

/* One line for the question, from the line editor or plain input; NULL at end of input. */
static char *ask_read_line(agent_term *t, const char *prompt)
{
	if (!t->json && t->tty_in)
		return agent_term_read_line(t, prompt);
	if (!t->json) {
		agent_term_spinner_stop(t);
		agent_term_text_end(t);
		fputs(prompt, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	return read_plain_line();
}

/* The answer a line gives; *known: it was one of the choices. */
static agent_term_answer parse_answer(char *line, const char *choices, bool *known)
{
	trim(line);
	agent_term_answer ans = AGENT_ANSWER_NO;
	*known = false;
	for (size_t i = 0; i < ASK_OPTS; i++) {
		if (strchr(choices, ask_opts[i].key) == NULL)
			continue;
		if ((line[0] == ask_opts[i].key && line[1] == '\0') ||
		    strcmp(line, ask_opts[i].word) == 0) {
			ans = ask_opts[i].answer;
			*known = true;
		}
	}
	return ans;
}

/*
 * The terminal's own answer. *remote_first: the remote's fd turned readable
 * first (the returned answer is then meaningless).
 */
static agent_term_answer ask_terminal(agent_term *t, const char *prompt, const char *choices,
                                      bool *remote_first)
{
	*remote_first = false;
	for (int attempt = 0; attempt < 10; attempt++) {
		char *line;
		if (t->have_remote) {
			/* Asked here and in the console at once: the prompt first, then
			 * whichever answers. */
			if (!t->json && !t->stdin_ended) {
				agent_term_spinner_stop(t);
				agent_term_text_end(t);
				fputs(prompt, stdout);
				fputs(t->tty_in ? "" : "\n", stdout);
				fflush(stdout);
			}
			enum waited w = wait_terminal_or_remote(t);
			if (w == WAITED_INTERRUPT)
				return AGENT_ANSWER_NONE;  /* Ctrl-C: no answer, which is a no */
			if (w == WAITED_REMOTE) {
				*remote_first = true;
				return AGENT_ANSWER_NONE;
			}
			line = t->tty_in && !t->json ? agent_term_read_line(t, "") : read_plain_line();
		} else {
			line = ask_read_line(t, prompt);
		}
		if (line == NULL && t->have_remote) {
			/* The terminal cannot answer any more; the console still can. */
			t->stdin_ended = true;
			agent_term_notice(t, "the terminal's input ended: the question waits for "
			                  "an answer in the console");
			attempt--;
			continue;
		}
		if (line == NULL)
			return AGENT_ANSWER_NONE;  /* end of input is a no */
		bool known;
		agent_term_answer ans = parse_answer(line, choices, &known);
		free(line);
		/* Off a terminal, only a clear yes approves: anything else denies. */
		if (!t->tty_in || t->json)
			return ans == AGENT_ANSWER_YES ? AGENT_ANSWER_YES : AGENT_ANSWER_NO;
		if (known)
			return ans;
		fputs("please answer with one of the letters shown\n", stderr);
	}
	return AGENT_ANSWER_NO;
}

static const char *answer_word(agent_term_answer a)
{
	for (size_t i = 0; i < ASK_OPTS; i++)
		if (ask_opts[i].answer == a)
			return ask_opts[i].word;
	return "no";
}

agent_term_answer agent_term_ask_ex(agent_term *t, const char *id, const char *question,
                                    const char *choices, const agent_term_ask_info *info)
{
	t->answered_from[0] = '\0';
	free(t->edit_text);
	t->edit_text = NULL;
	if (t->json) {
		cJSON *ev = event("confirmation");
		cJSON_AddStringToObject(ev, "id", id);
		add_text(ev, "question", question, strlen(question));
		cJSON_AddStringToObject(ev, "choices", choices);
		emit(t, ev);
	}
	char menu[80] = "";
	for (const char *c = choices; *c; c++)
		for (size_t i = 0; i < ASK_OPTS; i++)
			if (ask_opts[i].key == *c) {
				if (menu[0] != '\0')
					strcat(menu, " ");
				strcat(menu, ask_opts[i].label);
			}
	if (!t->json && t->tty_in)
		discard_typeahead(t);
	char prompt[512];
	char *shown = agent_show_dup(question, AGENT_SHOW_LINES);
	snprintf(prompt, sizeof(prompt), "%s [%s] ", shown ? shown : "?", menu);
	free(shown);
	if (!t->have_remote) {
		bool unused;
		return ask_terminal(t, prompt, choices, &unused);
	}
	t->remote.open(t->remote.ctx, id, question, choices, info);
	bool remote_first;
	agent_term_answer a = ask_terminal(t, prompt, choices, &remote_first);
	char who[sizeof(t->answered_from)] = "";
	if (remote_first && a == AGENT_ANSWER_NONE)
		a = AGENT_ANSWER_NO; /* what the terminal would say if it had the last word */
	if (t->remote.settle(t->remote.ctx, &a, &t->edit_text, who, sizeof(who))) {
		snprintf(t->answered_from, sizeof(t->answered_from), "%s", who);
		agent_term_notice(t, "answered in the %s: %s", who, answer_word(a));
	}
	return a;
}

agent_term_answer agent_term_ask(agent_term *t, const char *id,
                                 const char *question, const char *choices)
{
	return agent_term_ask_ex(t, id, question, choices, NULL);
}
