/*
 * executors/exec — the output kept for the model: head and tail of a
 * stream of code points, with invalid UTF-8 and NULs made harmless.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "executors/exec.h"

/* One incremental UTF-8 decoder per stream (WHATWG rules: one U+FFFD per
 * maximal invalid subpart, no overlongs, no surrogates, nothing past
 * U+10FFFF). Not base_utf8_next: bytes arrive split anywhere, and each
 * is judged as it comes. */
struct utf8_decoder {
	uint32_t cp;
	int need;
	unsigned char lower, upper;
};

struct exec_output {
	size_t head_max, tail_max;
	char *head;
	size_t head_len, head_cap, head_chars;
	uint32_t *tail;             /* ring of the last tail_max code points */
	size_t tail_start, tail_count;
	size_t total;
	struct utf8_decoder dec[3];
};

exec_output *exec_output_create(size_t max_chars)
{
	if (max_chars == 0)
		max_chars = EXEC_DEFAULT_MAX_OUTPUT;
	exec_output *o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	o->head_max = max_chars / 2;
	o->tail_max = max_chars - o->head_max;
	o->tail = calloc(o->tail_max, sizeof(*o->tail));
	if (o->tail == NULL) {
		free(o);
		return NULL;
	}
	return o;
}

void exec_output_destroy(exec_output *o)
{
	if (o == NULL)
		return;
	free(o->head);
	free(o->tail);
	free(o);
}

static void emit(exec_output *o, uint32_t cp)
{
	o->total++;
	if (o->head_chars < o->head_max) {
		if (o->head_len + 4 > o->head_cap) {
			size_t cap = o->head_cap ? o->head_cap * 2 : 256;
			while (cap < o->head_len + 4)
				cap *= 2;
			char *h = realloc(o->head, cap);
			if (h == NULL)
				return;     /* keep going with what fits; never crash */
			o->head = h;
			o->head_cap = cap;
		}
		o->head_len += (size_t)base_utf8_encode(cp, o->head + o->head_len);
		o->head_chars++;
		return;
	}
	if (o->tail_max == 0)
		return;
	if (o->tail_count < o->tail_max) {
		o->tail[(o->tail_start + o->tail_count) % o->tail_max] = cp;
		o->tail_count++;
	} else {
		o->tail[o->tail_start] = cp;
		o->tail_start = (o->tail_start + 1) % o->tail_max;
	}
}

static void decode_byte(exec_output *o, struct utf8_decoder *d, unsigned char b)
{
	if (d->need > 0) {
		if (b >= d->lower && b <= d->upper) {
			d->lower = 0x80;
			d->upper = 0xBF;
			d->cp = d->cp << 6 | (b & 0x3F);
			if (--d->need == 0)
				emit(o, d->cp);
			return;
		}
		/* The sequence broke off: one replacement for it, and this byte
		 * starts afresh. */
		d->need = 0;
		emit(o, 0xFFFD);
	}
	d->lower = 0x80;
	d->upper = 0xBF;
	if (b == 0) {
		emit(o, 0x2400);                /* ␀, visible and harmless */
	} else if (b < 0x80) {
		emit(o, b);
	} else if (b >= 0xC2 && b <= 0xDF) {
		d->need = 1;
		d->cp = b & 0x1F;
	} else if (b >= 0xE0 && b <= 0xEF) {
		d->need = 2;
		d->cp = b & 0x0F;
		if (b == 0xE0)
			d->lower = 0xA0;            /* no overlongs */
		if (b == 0xED)
			d->upper = 0x9F;            /* no surrogates */
	} else if (b >= 0xF0 && b <= 0xF4) {
		d->need = 3;
		d->cp = b & 0x07;
		if (b == 0xF0)
			d->lower = 0x90;
		if (b == 0xF4)
			d->upper = 0x8F;            /* nothing past U+10FFFF */
	} else {
		emit(o, 0xFFFD);
	}
}

size_t exec_output_feed(exec_output *o, exec_stream stream, const char *buf, size_t len)
{
	struct utf8_decoder *d = &o->dec[stream == EXEC_STDERR ? 2 : 1];
	size_t shown = 0;
	for (size_t i = 0; i < len; i++) {
		if (o->head_chars < o->head_max)
			shown = i + 1;
		decode_byte(o, d, (unsigned char)buf[i]);
	}
	return shown;
}

char *exec_output_text(exec_output *o, size_t *len_out, size_t *head_len_out,
                       size_t *total_out, size_t *omitted_out)
{
	for (int i = 1; i <= 2; i++) {
		if (o->dec[i].need > 0) {
			o->dec[i].need = 0;
			emit(o, 0xFFFD);
		}
	}
	size_t omitted = o->total - o->head_chars - o->tail_count;
	char note[96] = "";
	if (omitted > 0)
		snprintf(note, sizeof(note), "\n\u2026 %zu characters omitted \u2026\n", omitted);
	size_t note_len = strlen(note);
	size_t cap = o->head_len + note_len + o->tail_count * 4 + 1;
	char *text = malloc(cap);
	if (text == NULL)
		return NULL;
	size_t n = 0;
	if (o->head_len > 0)
		memcpy(text, o->head, o->head_len);
	n = o->head_len;
	memcpy(text + n, note, note_len);
	n += note_len;
	for (size_t i = 0; i < o->tail_count; i++)
		n += (size_t)base_utf8_encode(o->tail[(o->tail_start + i) % o->tail_max], text + n);
	text[n] = '\0';
	if (len_out)
		*len_out = n;
	if (head_len_out)
		*head_len_out = omitted > 0 ? o->head_len : n;
	if (total_out)
		*total_out = o->total;
	if (omitted_out)
		*omitted_out = omitted;
	return text;
}
