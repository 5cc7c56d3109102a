/*
 * agent/ui/markdown — a streaming Markdown-to-ANSI renderer for the terminal.
 *
 * The model's text arrives in fragments of any size, split anywhere (even
 * inside "**"). The renderer is a character state machine: ordinary text is
 * written as soon as it is unambiguous, line starts are held back only until
 * it is clear whether they open a heading, list item, quote or code fence.
 * Handles headings, **bold**, *emphasis*, `inline code`, bullet and numbered
 * lists, block quotes and fenced code blocks labelled with their language.
 *
 * Pure: writes into a caller-supplied sink, no terminal I/O of its own, so it
 * is unit-tested byte for byte. With colour off it passes the text through
 * unchanged (plain text for pipes and files).
 */
#ifndef DESKHAND_AGENT_MARKDOWN_H
#define DESKHAND_AGENT_MARKDOWN_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*agent_md_sink)(const char *s, size_t len, void *user);

typedef struct agent_md {
	agent_md_sink sink;
	void *user;
	bool color;
	/* line-start lookahead */
	char pending[16];
	size_t npending;
	bool at_line_start;
	/* block state */
	bool in_code_block;
	bool code_fence_line;   /* inside the ``` line itself (its label) */
	int fence_ticks;        /* backticks counted at a line start in code */
	bool heading;
	/* inline state */
	bool bold, italic, code;
	int stars;              /* '*' seen and not yet decided */
} agent_md;

/* Sets up a renderer writing to `sink`. No allocation. */
void agent_md_init(agent_md *md, bool color, agent_md_sink sink, void *user);
/* Feeds any fragment of text. */
void agent_md_feed(agent_md *md, const char *s, size_t len);
/* Ends the message: flushes held-back characters and resets all styles. */
void agent_md_finish(agent_md *md);

#endif
