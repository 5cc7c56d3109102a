/*
 * os/wlroots/sway-ipc — sway's IPC: one connection per message (the
 * socket is local and cheap to open; no state to keep in step), the tree
 * flattened into its views.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "os/backend.h"
#include "os/wlroots/sway-ipc.h"

#define IPC_MAGIC "i3-ipc"
#define IPC_HEADER (6 + 4 + 4)
#define IPC_MAX_REPLY (64u << 20)

static int ipc_connect(const char *sock)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(sa.sun_path)) {
		os_fail("sway IPC socket path is too long: %s", sock);
		return -1;
	}
	strcpy(sa.sun_path, sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		os_fail("cannot create a socket for sway IPC: %s", strerror(errno));
		return -1;
	}
	/* A compositor that stopped answering must not hang the agent. */
	struct timeval tv = {.tv_sec = 2};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		os_fail("cannot connect to sway IPC at %s: %s", sock, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static bool send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return os_fail("sway IPC: cannot send: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool recv_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return os_fail("sway IPC: the compositor closed the connection");
		if (n < 0)
			return os_fail("sway IPC: cannot read the reply: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool send_message(int fd, uint32_t type, const char *payload)
{
	uint32_t len = payload != NULL ? (uint32_t)strlen(payload) : 0;
	char head[IPC_HEADER];
	memcpy(head, IPC_MAGIC, 6);
	memcpy(head + 6, &len, 4);
	memcpy(head + 10, &type, 4);
	return send_all(fd, head, sizeof(head)) && send_all(fd, payload, len);
}

/* One message: its type and payload (NUL-terminated, malloc'ed). */
static char *recv_message(int fd, uint32_t *type)
{
	char head[IPC_HEADER];
	if (!recv_all(fd, head, sizeof(head)))
		return NULL;
	uint32_t rlen;
	memcpy(&rlen, head + 6, 4);
	memcpy(type, head + 10, 4);
	if (memcmp(head, IPC_MAGIC, 6) != 0) {
		os_fail("sway IPC: the socket does not answer as sway does");
		return NULL;
	}
	if (rlen > IPC_MAX_REPLY) {
		os_fail("sway IPC: a reply of %u bytes is too long", rlen);
		return NULL;
	}
	char *msg = malloc((size_t)rlen + 1);
	if (msg == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	if (!recv_all(fd, msg, rlen)) {
		free(msg);
		return NULL;
	}
	msg[rlen] = '\0';
	return msg;
}

char *os_sway_ipc(const char *sock, uint32_t type, const char *payload)
{
	int fd = ipc_connect(sock);
	if (fd < 0)
		return NULL;
	char *reply = NULL;
	uint32_t rtype;
	if (send_message(fd, type, payload) && (reply = recv_message(fd, &rtype)) != NULL &&
	    rtype != type) {
		os_fail("sway IPC: %s does not answer as sway does", sock);
		free(reply);
		reply = NULL;
	}
	close(fd);
	return reply;
}

bool os_sway_succeeded(const char *reply)
{
	cJSON *root = cJSON_Parse(reply);
	const cJSON *first = cJSON_IsArray(root) ? cJSON_GetArrayItem(root, 0) : root;
	bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(first, "success"));
	cJSON_Delete(root);
	return ok;
}

int os_sway_subscribe(const char *sock, const char *events)
{
	int fd = ipc_connect(sock);
	if (fd < 0)
		return -1;
	uint32_t type;
	char *reply = NULL;
	if (!send_message(fd, OS_SWAY_SUBSCRIBE, events) ||
	    (reply = recv_message(fd, &type)) == NULL)
		goto fail;
	if (type != OS_SWAY_SUBSCRIBE || !os_sway_succeeded(reply)) {
		os_fail("sway IPC: subscribing to %s was refused: %s", events, reply);
		goto fail;
	}
	free(reply);
	return fd;
fail:
	free(reply);
	close(fd);
	return -1;
}

int os_sway_event(int fd, char **payload)
{
	*payload = NULL;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r = poll(&p, 1, 0);
	if (r == 0)
		return 0;
	if (r < 0)
		return errno == EINTR ? 0 : (os_fail("sway IPC: %s", strerror(errno)), -1);
	uint32_t type;
	*payload = recv_message(fd, &type);
	return *payload != NULL ? 1 : -1;
}

int os_sway_socket_pid(const char *sock)
{
	int fd = ipc_connect(sock);
	if (fd < 0)
		return 0;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int pid = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
		pid = cred.pid;
	close(fd);
	return pid;
}

char *os_sway_version(const char *sock)
{
	char *text = os_sway_ipc(sock, OS_SWAY_GET_VERSION, "");
	if (text == NULL)
		return NULL;
	char *out = NULL;
	cJSON *root = cJSON_Parse(text);
	const cJSON *hr = cJSON_GetObjectItemCaseSensitive(root, "human_readable");
	if (cJSON_IsString(hr))
		out = strdup(hr->valuestring);
	if (out == NULL)
		os_fail("sway IPC: get_version gave no version");
	cJSON_Delete(root);
	free(text);
	return out;
}

/* ---- the tree ------------------------------------------------------------ */

struct view_list {
	os_sway_view *v;
	size_t n, cap;
	bool oom;
};

static os_rect json_rect(const cJSON *o)
{
	os_rect r = {0, 0, 0, 0};
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, "x");
	const cJSON *y = cJSON_GetObjectItemCaseSensitive(o, "y");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "width");
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "height");
	if (cJSON_IsNumber(x) && cJSON_IsNumber(y) && cJSON_IsNumber(w) && cJSON_IsNumber(h))
		r = (os_rect){x->valueint, y->valueint, w->valueint, h->valueint};
	return r;
}

static const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

static bool json_true(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* A view: a container with a pid or an app_id (or an X window). */
static bool is_view(const cJSON *node)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(node, "type");
	if (!cJSON_IsString(type) || (strcmp(type->valuestring, "con") != 0 &&
	                              strcmp(type->valuestring, "floating_con") != 0))
		return false;
	return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(node, "pid")) ||
	       json_str(node, "app_id") != NULL ||
	       cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(node, "window_properties"));
}

static void add_view(struct view_list *l, const cJSON *node, bool floating)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		os_sway_view *nv = realloc(l->v, cap * sizeof(*nv));
		if (nv == NULL) {
			l->oom = true;
			return;
		}
		l->v = nv;
		l->cap = cap;
	}
	os_sway_view *v = &l->v[l->n];
	memset(v, 0, sizeof(*v));
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(node, "id");
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(node, "pid");
	v->con_id = cJSON_IsNumber(id) ? (long long)id->valuedouble : 0;
	v->pid = cJSON_IsNumber(pid) ? pid->valueint : 0;
	const char *app = json_str(node, "app_id");
	if (app == NULL) /* an Xwayland window: its WM_CLASS class */
		app = json_str(cJSON_GetObjectItemCaseSensitive(node, "window_properties"), "class");
	const char *title = json_str(node, "name");
	v->app_id = strdup(app != NULL ? app : "");
	v->title = strdup(title != NULL ? title : "");
	if (v->app_id == NULL || v->title == NULL) {
		free(v->app_id);
		free(v->title);
		l->oom = true;
		return;
	}
	v->frame = json_rect(cJSON_GetObjectItemCaseSensitive(node, "rect"));
	os_rect wr = json_rect(cJSON_GetObjectItemCaseSensitive(node, "window_rect"));
	v->content = (os_rect){v->frame.x + wr.x, v->frame.y + wr.y, wr.width, wr.height};
	v->focused = json_true(node, "focused");
	v->visible = json_true(node, "visible");
	v->floating = floating;
	l->n++;
}

static void walk(struct view_list *l, const cJSON *node, bool floating, int depth)
{
	if (depth > 64 || l->oom)
		return;
	if (is_view(node))
		add_view(l, node, floating);
	const cJSON *child;
	cJSON_ArrayForEach(child, cJSON_GetObjectItemCaseSensitive(node, "nodes"))
		walk(l, child, floating, depth + 1);
	cJSON_ArrayForEach(child, cJSON_GetObjectItemCaseSensitive(node, "floating_nodes"))
		walk(l, child, true, depth + 1);
}

bool os_sway_views(const char *sock, os_sway_view **out, size_t *n)
{
	char *text = os_sway_ipc(sock, OS_SWAY_GET_TREE, "");
	if (text == NULL)
		return false;
	cJSON *root = cJSON_Parse(text);
	free(text);
	if (root == NULL)
		return os_fail("sway IPC: get_tree's reply is not JSON");
	struct view_list l = {0};
	walk(&l, root, false, 0);
	cJSON_Delete(root);
	if (l.oom) {
		os_sway_views_free(l.v, l.n);
		return os_fail("out of memory");
	}
	*out = l.v;
	*n = l.n;
	return true;
}

void os_sway_views_free(os_sway_view *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].app_id);
		free(v[i].title);
	}
	free(v);
}

bool os_sway_focus(const char *sock, long long con_id)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "[con_id=%lld] focus", con_id);
	char *text = os_sway_ipc(sock, OS_SWAY_RUN_COMMAND, cmd);
	if (text == NULL)
		return false;
	cJSON *root = cJSON_Parse(text);
	free(text);
	const cJSON *first = cJSON_GetArrayItem(root, 0);
	bool ok = json_true(first, "success");
	if (!ok) {
		const char *err = json_str(first, "error");
		os_fail("sway could not focus window %lld: %s", con_id,
		        err != NULL ? err : "no reason given");
	}
	cJSON_Delete(root);
	return ok;
}
