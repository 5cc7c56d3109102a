/* agent/ui/markdown — streaming Markdown rendering; see markdown.h. */
#include <string.h>

#include "agent/ui/markdown.h"

#define SGR_RESET "\033[0m"

void agent_md_init(agent_md *md, bool color, agent_md_sink sink, void *user)
{
	memset(md, 0, sizeof(*md));
	md->sink = sink;
	md->user = user;
	md->color = color;
	md->at_line_start = true;
}

static void out(agent_md *md, const char *s, size_t n)
{
	if (n > 0)
		md->sink(s, n, md->user);
}

static void outs(agent_md *md, const char *s)
{
	out(md, s, strlen(s));
}

/* Re-emits the SGR sequence for the current combination of styles. */
static void style(agent_md *md)
{
	char buf[32] = "\033[0";
	if (md->bold || md->heading)
		strcat(buf, ";1");
	if (md->italic)
		strcat(buf, ";3");
	if (md->code)
		strcat(buf, ";36");
	else if (md->heading)
		strcat(buf, ";35");
	strcat(buf, "m");
	outs(md, buf);
}

static void inline_char(agent_md *md, char c);

static void flush_stars(agent_md *md, char next)
{
	int n = md->stars;
	md->stars = 0;
	if (n == 2) {
		md->bold = !md->bold;
		style(md);
	} else if (n == 1 && (md->italic || (next != ' ' && next != '\n' && next != '\t'))) {
		md->italic = !md->italic;
		style(md);
	} else {
		for (int i = 0; i < n; i++)
			out(md, "*", 1);
	}
}

static void end_line(agent_md *md)
{
	if (md->stars > 0)
		flush_stars(md, '\n');
	bool styled = md->bold || md->italic || md->code || md->heading;
	md->bold = md->italic = md->code = md->heading = false;
	if (styled)
		outs(md, SGR_RESET);
	out(md, "\n", 1);
	md->at_line_start = true;
}

static void inline_char(agent_md *md, char c)
{
	if (c == '\n') {
		end_line(md);
		return;
	}
	if (md->code) {
		if (c == '`') {
			md->code = false;
			style(md);
		} else {
			out(md, &c, 1);
		}
		return;
	}
	if (c == '*') {
		md->stars++;
		return;
	}
	if (md->stars > 0)
		flush_stars(md, c);
	if (c == '`') {
		md->code = true;
		style(md);
		return;
	}
	out(md, &c, 1);
}

/* A code block's line start: "```" closes it, anything else is code. */
static void code_line_char(agent_md *md, char c)
{
	if (md->code_fence_line) {
		/* Skip the rest of the closing fence line. */
		if (c == '\n') {
			md->code_fence_line = false;
			md->at_line_start = true;
		}
		return;
	}
	if (md->at_line_start && c == '`' && md->fence_ticks < 3) {
		md->fence_ticks++;
		if (md->fence_ticks == 3) {
			md->in_code_block = false;
			md->code_fence_line = true;
			md->fence_ticks = 0;
			outs(md, SGR_RESET);
		}
		return;
	}
	if (md->at_line_start) {
		outs(md, "\033[0;36m");
		for (int i = 0; i < md->fence_ticks; i++)
			out(md, "`", 1);
		md->fence_ticks = 0;
		md->at_line_start = false;
	}
	out(md, &c, 1);
	if (c == '\n') {
		outs(md, SGR_RESET);
		md->at_line_start = true;
	}
}

/* Decides what the held-back line start is, once `c` makes it clear. */
/*
 * The markers a line may start with, tried on the characters held at its
 * start (p, n of them, c the newest). Each returns true when they are its
 * marker or may still become it: written as that marker, or held for more.
 */

/* Opening fence: "```label\n". */
static bool fence_start(agent_md *md, const char *p, size_t n, char c)
{
	if (strncmp(p, "```", n < 3 ? n : 3) != 0)
		return false;
	if (n < 3)
		return true;
	if (c != '\n' && n < sizeof(md->pending) - 1)
		return true;
	/* Label complete (or too long to hold: keep what we have). */
	size_t lab = n - 3;
	if (lab > 0 && p[n - 1] == '\n')
		lab--;
	outs(md, "\033[2m── ");
	out(md, lab > 0 ? p + 3 : "code", lab > 0 ? lab : 4);
	outs(md, " ──" SGR_RESET "\n");
	md->in_code_block = true;
	md->npending = 0;
	if (c != '\n') {
		/* An over-long label: drop the rest of the fence line. */
		md->code_fence_line = true;
		md->at_line_start = false;
	} else {
		md->at_line_start = true;
	}
	return true;
}

/* Heading: 1-6 '#' then a space. */
static bool heading_start(agent_md *md, const char *p, size_t n, char c)
{
	size_t hashes = strspn(p, "#");
	if (hashes == n && n <= 6)
		return true;
	if (hashes >= 1 && hashes <= 6 && hashes == n - 1 && c == ' ') {
		md->heading = true;
		md->npending = 0;
		md->at_line_start = false;
		style(md);
		return true;
	}
	return false;
}

/* Bullet: "- ", "* ", "+ " (after the indentation already written). */
static bool bullet_start(agent_md *md, const char *p, size_t n, char c)
{
	if (n == 1 && (c == '-' || c == '*' || c == '+'))
		return true;
	if (n == 2 && (p[0] == '-' || p[0] == '*' || p[0] == '+') && c == ' ') {
		outs(md, "• ");
		md->npending = 0;
		md->at_line_start = false;
		return true;
	}
	return false;
}

/* Numbered item: digits then ". ". */
static bool number_start(agent_md *md, const char *p, size_t n, char c)
{
	size_t digits = strspn(p, "0123456789");
	if (digits == n && n <= 9)
		return true;
	if (digits >= 1 && digits == n - 1 && c == '.')
		return true;
	if (digits >= 1 && digits == n - 2 && p[n - 2] == '.' && c == ' ') {
		outs(md, "\033[1m");
		out(md, p, n - 1);
		outs(md, SGR_RESET " ");
		md->npending = 0;
		md->at_line_start = false;
		return true;
	}
	return false;
}

/* Quote: "> ". */
static bool quote_start(agent_md *md, const char *p, size_t n, char c)
{
	if (n == 1 && c == '>')
		return true;
	if (n == 2 && p[0] == '>' && c == ' ') {
		outs(md, "\033[2m│" SGR_RESET " ");
		md->npending = 0;
		md->at_line_start = false;
		return true;
	}
	return false;
}

/* Indentation passes through and keeps us at a line start. */
static bool indentation(agent_md *md, size_t n, char c)
{
	if (n == 1 && (c == ' ' || c == '\t')) {
		out(md, &c, 1);
		md->npending = 0;
		return true;
	}
	return false;
}

static void line_start_char(agent_md *md, char c)
{
	char *p = md->pending;
	size_t n = md->npending;
	if (n < sizeof(md->pending) - 1)
		p[n++] = c;
	md->npending = n;
	p[n] = '\0';
	if (fence_start(md, p, n, c) || heading_start(md, p, n, c) || bullet_start(md, p, n, c) ||
	    number_start(md, p, n, c) || quote_start(md, p, n, c) || indentation(md, n, c))
		return;
	/* Nothing special: replay what was held as ordinary text. */
	md->npending = 0;
	md->at_line_start = false;
	for (size_t i = 0; i < n; i++)
		inline_char(md, p[i]);
}

void agent_md_feed(agent_md *md, const char *s, size_t len)
{
	if (!md->color) {
		out(md, s, len);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (md->in_code_block)
			code_line_char(md, c);
		else if (md->code_fence_line) {
			if (c == '\n') {
				md->code_fence_line = false;
				md->at_line_start = true;
			}
		} else if (md->at_line_start)
			line_start_char(md, c);
		else
			inline_char(md, c);
	}
}

void agent_md_finish(agent_md *md)
{
	if (!md->color)
		return;
	if (md->npending > 0) {
		size_t n = md->npending;
		char held[sizeof(md->pending)];
		memcpy(held, md->pending, n);
		md->npending = 0;
		md->at_line_start = false;
		if (md->in_code_block)
			out(md, held, n);
		else
			for (size_t i = 0; i < n; i++)
				inline_char(md, held[i]);
	}
	if (md->stars > 0)
		flush_stars(md, ' ');
	bool styled = md->bold || md->italic || md->code || md->heading || md->in_code_block;
	if (styled)
		outs(md, SGR_RESET);
	md->bold = md->italic = md->code = md->heading = false;
	md->in_code_block = md->code_fence_line = false;
	md->fence_ticks = 0;
	md->at_line_start = true;
}
