/*
 * agent/llm/conv_prune — what a request carries of the conversation: the
 * token estimate, and the pruning rule that fits it into the context
 * window without ever orphaning a call or a result (conversation.h).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/conv-internal.h"

long conv_text_tokens(const char *text)
{
	return text ? (long)((strlen(text) + 3) / 4) : 0;
}

static long image_tokens(const struct conv_image *img, bool sent)
{
	if (!img->path)
		return 0;
	return sent ? CONV_IMAGE_TOKENS : conv_text_tokens(CONV_IMAGE_OMITTED);
}

static long block_tokens(const struct conv_block *b, bool image_sent)
{
	switch (b->type) {
	case CONV_TEXT:
		return conv_text_tokens(b->text);
	case CONV_IMAGE:
		return image_tokens(&b->image, image_sent);
	case CONV_TOOL_CALL:
		return CONV_BLOCK_TOKENS + conv_text_tokens(b->id) + conv_text_tokens(b->name) +
		       conv_text_tokens(b->arguments);
	case CONV_TOOL_RESULT:
		return CONV_BLOCK_TOKENS + conv_text_tokens(b->call_id) + conv_text_tokens(b->text) +
		       image_tokens(&b->image, image_sent);
	case CONV_VENDOR:
		return CONV_BLOCK_TOKENS + conv_text_tokens(b->raw);
	}
	return 0;
}

long conv_tokens(const struct conv *c)
{
	long t = 0;
	for (size_t i = 0; i < c->n_messages; i++) {
		const struct conv_message *m = c->messages[i];
		t += CONV_MESSAGE_TOKENS;
		for (size_t j = 0; j < m->n_blocks; j++)
			t += block_tokens(&m->blocks[j], true);
	}
	return t;
}

void conv_view_clear(struct conv_view *v)
{
	if (!v)
		return;
	if (v->image_keep)
		for (size_t i = 0; i < v->n; i++)
			free(v->image_keep[i]);
	free(v->image_keep);
	free(v->index);
	memset(v, 0, sizeof(*v));
}

/* The working state of conv_view_plan, per message of c. Ownership: plan_free. */
struct plan {
	size_t n;
	bool **keep;     /* keep[i][j]: block j of message i sends its image */
	long *cost;      /* estimated tokens */
	bool *drop;
	long total;      /* estimate of the messages not dropped */
};

static void plan_free(struct plan *pl)
{
	for (size_t i = 0; pl->keep && i < pl->n; i++)
		free(pl->keep[i]);
	free(pl->keep);
	free(pl->cost);
	free(pl->drop);
}

/* Which images travel as pixels (the newest keep_images), and what each
 * message costs with them. */
static bool plan_costs(const struct conv *c, int keep_images, struct plan *pl)
{
	size_t n = pl->n;
	pl->keep = calloc(n ? n : 1, sizeof(*pl->keep));
	pl->cost = calloc(n ? n : 1, sizeof(*pl->cost));
	pl->drop = calloc(n ? n : 1, sizeof(*pl->drop));
	if (!pl->keep || !pl->cost || !pl->drop)
		return false;
	long left = keep_images < 0 ? LONG_MAX : keep_images;
	for (size_t i = n; i-- > 0;) {
		const struct conv_message *m = c->messages[i];
		if (!(pl->keep[i] = calloc(m->n_blocks ? m->n_blocks : 1, sizeof(bool))))
			return false;
		pl->cost[i] = CONV_MESSAGE_TOKENS;
		for (size_t j = m->n_blocks; j-- > 0;) {
			if (m->blocks[j].image.path && left > 0) {
				pl->keep[i][j] = true;
				left--;
			}
			pl->cost[i] += block_tokens(&m->blocks[j], pl->keep[i][j]);
		}
	}
	for (size_t i = 0; i < n; i++)
		pl->total += pl->cost[i];
	return true;
}

static bool starts_step(const struct conv_message *m)
{
	return m->role == CONV_ASSISTANT;
}

/*
 * While over budget, drops the messages from i up to limit, oldest first,
 * in whole units: a unit runs from its first message to the next message
 * that `starts` one.
 */
static void drop_oldest(const struct conv *c, struct plan *pl, size_t i, size_t limit,
                        long budget, bool (*starts)(const struct conv_message *))
{
	while (pl->total > budget && i < limit) {
		size_t end = i + 1;
		while (end < limit && !starts(c->messages[end]))
			end++;
		for (size_t k = i; k < end; k++) {
			pl->drop[k] = true;
			pl->total -= pl->cost[k];
		}
		i = end;
	}
}

static void plan_prune(const struct conv *c, long budget, struct plan *pl)
{
	size_t n = pl->n;
	/* The newest human message: it and everything after it stay. */
	size_t newest = 0;
	for (size_t i = n; i-- > 0;)
		if (conv_is_human(c->messages[i])) {
			newest = i;
			break;
		}
	/* First whole turns (a human message up to the next one), oldest first. */
	drop_oldest(c, pl, 0, newest, budget, conv_is_human);
	/*
	 * Then the steps of the newest turn, oldest first: an assistant
	 * message and the tool message answering it go together; the last
	 * step stays so the model knows what it just did.
	 */
	size_t last_step = n;
	for (size_t k = n; k-- > newest + 1;)
		if (starts_step(c->messages[k])) {
			last_step = k;
			break;
		}
	drop_oldest(c, pl, newest + 1, last_step, budget, starts_step);
}

/* The view of the messages kept; their image choices move into it. */
static bool plan_view(struct plan *pl, struct conv_view *v)
{
	size_t kept = 0;
	for (size_t i = 0; i < pl->n; i++)
		kept += !pl->drop[i];
	if (!(v->index = calloc(kept ? kept : 1, sizeof(size_t))) ||
	    !(v->image_keep = calloc(kept ? kept : 1, sizeof(bool *))))
		return false;
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->drop[i]) {
			v->dropped++;
			continue;
		}
		v->index[v->n] = i;
		v->image_keep[v->n++] = pl->keep[i];
		pl->keep[i] = NULL;
	}
	v->tokens = pl->total;
	return true;
}

bool conv_view_plan(const struct conv *c, long budget, int keep_images, struct conv_view *v)
{
	struct plan pl = {.n = c->n_messages};
	memset(v, 0, sizeof(*v));
	bool ok = plan_costs(c, keep_images, &pl);
	if (ok && budget > 0)
		plan_prune(c, budget, &pl);
	ok = ok && plan_view(&pl, v);
	if (!ok) {
		conv_view_clear(v);
		conv_fail("out of memory");
	}
	plan_free(&pl);
	return ok;
}
