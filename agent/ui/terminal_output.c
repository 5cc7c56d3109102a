/*
 * agent/ui/terminal_output — what deskhand shows, in both faces: the
 * model's text (streamed Markdown) and thinking, proposals, code output,
 * notices, warnings and errors, inline images; for a person as text in its
 * shown form (agent_show_*), for --json as one event a line. See
 * terminal.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/ui/terminal-internal.h"

/* Emits one JSON event line; takes ownership of `ev`. */
void term_emit(agent_term *t, cJSON *ev)
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
void term_add_text(cJSON *o, const char *key, const char *s, size_t n)
{
	char *clean = agent_utf8_sanitize(s, n, NULL);
	cJSON_AddStringToObject(o, key, clean != NULL ? clean : "");
	free(clean);
}

cJSON *term_event(const char *type)
{
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "event", type);
	return ev;
}

/* An event whose one member besides its type is text (made valid UTF-8). */
static void emit_text_event(agent_term *t, const char *type, const char *key, const char *s,
                            size_t n)
{
	cJSON *ev = term_event(type);
	term_add_text(ev, key, s, n);
	term_emit(t, ev);
}

/* Ends a run of thinking with its line (called with the lock held). */
static void thinking_close(agent_term *t)
{
	if (!t->in_thinking)
		return;
	fputc('\n', stdout);
	t->in_thinking = false;
}

/*
 * The model's text of either kind arriving: the spinner's line ends, and
 * in --json the text is an event of that type. True: nothing more to do.
 */
static bool model_stream_event(agent_term *t, const char *type, const char *s, size_t n)
{
	agent_term_spinner_stop(t);
	if (!t->json)
		return false;
	emit_text_event(t, type, "text", s, n);
	return true;
}

void agent_term_thinking(agent_term *t, const char *s, size_t n)
{
	if (model_stream_event(t, "thinking", s, n))
		return;
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
	if (model_stream_event(t, "text", s, n))
		return;
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
	emit_text_event(t, type, "message", buf, strlen(buf));
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
		emit_text_event(t, "info", "text", text, strlen(text));
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
		cJSON *ev = term_event("tool_call");
		cJSON_AddStringToObject(ev, "id", id);
		cJSON_AddStringToObject(ev, "tool", "execute");
		cJSON_AddStringToObject(ev, "language", language);
		term_add_text(ev, "code", code, strlen(code));
		cJSON_AddBoolToObject(ev, "display", display);
		term_emit(t, ev);
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
		cJSON *ev = term_event("tool_call");
		cJSON_AddStringToObject(ev, "id", id);
		cJSON_AddStringToObject(ev, "tool", "computer");
		term_add_text(ev, "summary", summary, strlen(summary));
		cJSON *a = cJSON_Parse(action_json);
		if (a != NULL)
			cJSON_AddItemToObject(ev, "action", a);
		term_emit(t, ev);
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
		cJSON *ev = term_event("output");
		cJSON_AddStringToObject(ev, "stream", st == AGENT_TERM_STDERR ? "stderr" : "stdout");
		term_add_text(ev, "text", s, n);
		term_emit(t, ev);
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
	cJSON *ev = term_event("result");
	cJSON_AddStringToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "status", status);
	term_add_text(ev, "text", text, strlen(text));
	term_emit(t, ev);
}

void agent_term_decision(agent_term *t, const char *id, const char *decision,
                         const char *reason)
{
	if (t->json) {
		cJSON *ev = term_event("decision");
		cJSON_AddStringToObject(ev, "id", id);
		cJSON_AddStringToObject(ev, "decision", decision);
		term_add_text(ev, "reason", reason, strlen(reason));
		term_emit(t, ev);
		return;
	}
	agent_term_notice(t, "%s: %s", decision, reason);
}

/* ---- inline images ---------------------------------------------------- */

void agent_term_show_image(agent_term *t, const char *png_path)
{
	if (t->json) {
		emit_text_event(t, "image", "path", png_path, strlen(png_path));
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
	char *enc = agent_base64((const unsigned char *)b.data, b.len, &len);
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
