/*
 * base/conns — the bound on strangers' connections; see base.h. A list in
 * opening order under one lock: servers hold at most a few dozen.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "base/base.h"

struct base_conn {
	struct base_conn *prev, *next;
	int fd;
	bool stranger;
	bool cut;           /* shut down; waiting for the server to close it */
	int64_t since_ns;   /* opened, or its last request ended */
};

struct base_conns {
	pthread_mutex_t lock;
	struct base_conn *head, *tail;
	int max_strangers;
	int64_t deadline_ns;
};

base_conns *base_conns_new(int max_strangers, long deadline_ms)
{
	base_conns *cs = calloc(1, sizeof(*cs));
	if (cs == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&cs->lock, NULL);
	cs->max_strangers = max_strangers > 0 ? max_strangers : 1;
	cs->deadline_ns = (int64_t)deadline_ms * BASE_NS_PER_MS;
	return cs;
}

void base_conns_destroy(base_conns *cs)
{
	if (cs == NULL)
		return;
	struct base_conn *c = cs->head;
	while (c != NULL) {
		struct base_conn *next = c->next;
		free(c);
		c = next;
	}
	pthread_mutex_destroy(&cs->lock);
	free(cs);
}

static void cut(struct base_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->cut = true;
}

/* Under the lock: the strangers past their deadline, then the oldest
 * until one more fits. */
static void sweep(base_conns *cs, int64_t now)
{
	int strangers = 0;
	for (struct base_conn *c = cs->head; c != NULL; c = c->next) {
		if (!c->stranger || c->cut)
			continue;
		if (now - c->since_ns >= cs->deadline_ns)
			cut(c);
		else
			strangers++;
	}
	while (strangers >= cs->max_strangers) {
		struct base_conn *oldest = NULL;
		for (struct base_conn *c = cs->head; c != NULL; c = c->next)
			if (c->stranger && !c->cut && (oldest == NULL || c->since_ns < oldest->since_ns))
				oldest = c;
		if (oldest == NULL)
			break;
		cut(oldest);
		strangers--;
	}
}

base_conn *base_conns_opened(base_conns *cs, int fd)
{
	struct base_conn *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->fd = fd;
	c->stranger = true;
	pthread_mutex_lock(&cs->lock);
	c->since_ns = base_now_ns();
	sweep(cs, c->since_ns);
	c->prev = cs->tail;
	if (cs->tail != NULL)
		cs->tail->next = c;
	else
		cs->head = c;
	cs->tail = c;
	pthread_mutex_unlock(&cs->lock);
	return c;
}

void base_conns_known(base_conns *cs, base_conn *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&cs->lock);
	c->stranger = false;
	pthread_mutex_unlock(&cs->lock);
}

void base_conns_ended(base_conns *cs, base_conn *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&cs->lock);
	c->stranger = true;
	c->since_ns = base_now_ns();
	pthread_mutex_unlock(&cs->lock);
}

void base_conns_closed(base_conns *cs, base_conn *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&cs->lock);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		cs->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		cs->tail = c->prev;
	pthread_mutex_unlock(&cs->lock);
	free(c);
}
