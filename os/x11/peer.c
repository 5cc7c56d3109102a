/*
 * os/peer — the client our keystrokes go to, and whether it has handled
 * them. Rebinding a spare keycode is only safe once the client has decoded
 * every keystroke typed with the old binding, and the X protocol offers no
 * way to learn that: a round trip proves the server sent the events, not
 * that the client read them. For a client on this machine the kernel can
 * tell: the X server names the client's process (X-Resource); when the
 * receive queue of that process's X connection is empty and none of its
 * threads is running, it has read every event and gone back to waiting.
 * An event loop waits only with an empty event queue, but a client also
 * waits, just as idle-looking, for the reply to a request, typically the
 * keymap fetch that follows MappingNotify, and the server may answer it
 * with a newer keymap; and a server holds back the events of a client
 * whose request it has not yet served. The caller (input.c) therefore
 * requires the client to stay idle, with no context switch, for a while
 * during which it keeps the server dispatching with round trips of its own.
 * A relay's being idle (sshd for ssh -X, socat, ...) proves nothing about
 * the real client behind it. When the relay's far end is a unix socket on
 * this machine (socat between two local sockets), the process holding it
 * is the real client, and both are watched: events are handled once the
 * relay has passed them on and the client has read them. Otherwise (ssh,
 * a TCP relay) the client is not observed and the caller falls back to
 * time.
 */
#include <X11/Xlib.h>
#include <X11/extensions/XRes.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "os/x11/input-internal.h"

struct diag {
	bool found;
	uint32_t rqueue;
	uint32_t peer;
	char name[108];
};

/* Asks the kernel about one unix socket by inode (sock_diag exact lookup). */
static bool unix_diag(int fd, uint32_t ino, uint32_t show, struct diag *out)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} msg;
	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST;
	msg.req.sdiag_family = AF_UNIX;
	msg.req.udiag_states = ~0u;
	msg.req.udiag_ino = ino;
	msg.req.udiag_show = show;
	msg.req.udiag_cookie[0] = msg.req.udiag_cookie[1] = ~0u;
	memset(out, 0, sizeof(*out));
	if (send(fd, &msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
		return false;
	union {
		char buf[8192];
		struct nlmsghdr align;
	} u;
	ssize_t n = recv(fd, u.buf, sizeof(u.buf), 0);
	if (n <= 0)
		return false;
	for (struct nlmsghdr *h = &u.align; NLMSG_OK(h, (unsigned)n);
	     h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE)
			return false;
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
			continue;
		struct unix_diag_msg *m = NLMSG_DATA(h);
		if (m->udiag_ino != ino)
			continue;
		out->found = true;
		int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
		for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len);
		     a = RTA_NEXT(a, len)) {
			if (a->rta_type == UNIX_DIAG_RQLEN &&
			    RTA_PAYLOAD(a) >= sizeof(struct unix_diag_rqlen)) {
				struct unix_diag_rqlen rq;
				memcpy(&rq, RTA_DATA(a), sizeof(rq));
				out->rqueue = rq.udiag_rqueue;
			} else if (a->rta_type == UNIX_DIAG_PEER &&
			           RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
				memcpy(&out->peer, RTA_DATA(a), sizeof(uint32_t));
			} else if (a->rta_type == UNIX_DIAG_NAME) {
				size_t l = RTA_PAYLOAD(a);
				if (l >= sizeof(out->name))
					l = sizeof(out->name) - 1;
				memcpy(out->name, RTA_DATA(a), l);
				/* Abstract names start with NUL: make them printable. */
				for (size_t i = 0; i < l; i++)
					if (out->name[i] == '\0')
						out->name[i] = '@';
				out->name[l] = '\0';
			}
		}
		return true;
	}
	return false;
}

/* The window whose client gets key events now. */
static Window key_target(os_x11 *d)
{
	Window focus = None;
	int revert;
	XGetInputFocus(d->dpy, &focus, &revert);
	if (focus == PointerRoot || focus == None) {
		Window root, child = None;
		int rx, ry, wx, wy;
		unsigned mask;
		XQueryPointer(d->dpy, d->root, &root, &child, &rx, &ry, &wx, &wy, &mask);
		focus = child;
	}
	return focus == d->root ? None : focus;
}

int os_x_window_pid(os_x11 *d, Window w)
{
	int ev, err;
	if (w == None || !XResQueryExtension(d->dpy, &ev, &err))
		return 0;
	XResClientIdSpec spec = {.client = w, .mask = XRES_CLIENT_ID_PID_MASK};
	long n = 0;
	XResClientIdValue *ids = NULL;
	int pid = 0;
	os_x_trap_begin(d);
	Status st = XResQueryClientIds(d->dpy, 1, &spec, &n, &ids);
	if (os_x_trap_end(d, "asking for the focused client") == 0 && st == Success) {
		for (long i = 0; i < n && pid <= 0; i++)
			pid = XResGetClientPid(&ids[i]);
	}
	if (ids != NULL)
		XResClientIdsDestroy(n, ids);
	return pid > 0 ? pid : 0;
}

void os_peer_release(struct os_peer *p)
{
	if (p->diag_fd >= 0)
		close(p->diag_fd);
	memset(p, 0, sizeof(*p));
	p->diag_fd = -1;
}

/*
 * Processes that relay X connections for clients elsewhere (ssh -X, socat,
 * xpra, waypipe): their being idle says nothing about the real client.
 */
static bool is_relay(int pid)
{
	static const char *const relays[] = {"sshd", "ssh", "socat", "xpra",
	                                     "nxagent", "nxproxy", "waypipe",
	                                     "x11vnc", "Xephyr"};
	char path[64], comm[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (base_read_small(AT_FDCWD, path, comm, sizeof(comm)) <= 0)
		return true;
	comm[strcspn(comm, "\n")] = '\0';
	for (size_t i = 0; i < sizeof(relays) / sizeof(relays[0]); i++)
		if (strcmp(comm, relays[i]) == 0)
			return true;
	return false;
}

/* The inode of the socket an fd link names ("socket:[N]"), else 0. */
static uint32_t fd_socket(int dirfd, const char *name)
{
	char target[64];
	ssize_t l = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (l <= 0)
		return 0;
	target[l] = '\0';
	unsigned ino;
	if (sscanf(target, "socket:[%u]", &ino) != 1)
		return 0;
	return ino;
}

/*
 * Sorts the connected unix sockets of `pid`: those whose far end is the X
 * server go to `m`; the far ends of those it accepted on an X-like socket
 * name (a relay's listener, as socat's ABSTRACT-LISTEN:/tmp/.X11-unix/X9)
 * go to far[] (at most *nfar on entry; on return, how many there were,
 * which may be more). Other connections (an ssh agent, a log socket) carry
 * no events and are left out.
 */
static bool sort_sockets(int diag_fd, int pid, struct os_peer_member *m,
                         uint32_t *far, int *nfar)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	DIR *dir = opendir(path);
	if (dir == NULL)
		return false;
	int cap = *nfar;
	*nfar = 0;
	m->pid = pid;
	m->ninode = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		uint32_t ino = fd_socket(dirfd(dir), de->d_name);
		struct diag self, peer;
		if (ino == 0 ||
		    !unix_diag(diag_fd, ino, UDIAG_SHOW_PEER | UDIAG_SHOW_NAME, &self) ||
		    !self.found || self.peer == 0)
			continue;
		if (strstr(self.name, ".X11-unix/X") != NULL) {
			if (*nfar < cap)
				far[*nfar] = self.peer;
			(*nfar)++;
			continue;
		}
		/* The server's end carries the X socket's name. */
		if (!unix_diag(diag_fd, self.peer, UDIAG_SHOW_NAME, &peer))
			continue;
		if (strstr(peer.name, ".X11-unix/X") != NULL &&
		    m->ninode < OS_PEER_MAX_SOCKETS)
			m->inode[m->ninode++] = ino;
	}
	closedir(dir);
	return m->ninode > 0;
}

/*
 * The one process, other than `relay` and other relays, that holds one of
 * the sockets far[]: the client behind a local relay, with those sockets.
 * False when there is none (the far side is not on this machine, or not
 * ours to read) or more than one.
 */
static bool far_client(int relay, const uint32_t *far, int nfar,
                       struct os_peer_member *m)
{
	DIR *proc = opendir("/proc");
	if (proc == NULL)
		return false;
	int found = 0;
	struct dirent *de;
	while ((de = readdir(proc)) != NULL && found <= 1) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == relay || pid == getpid())
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
		DIR *dir = opendir(path);
		if (dir == NULL)
			continue;
		struct os_peer_member here = {.pid = (int)pid};
		struct dirent *fe;
		while ((fe = readdir(dir)) != NULL) {
			uint32_t ino = fd_socket(dirfd(dir), fe->d_name);
			for (int i = 0; ino != 0 && i < nfar; i++)
				if (far[i] == ino && here.ninode < OS_PEER_MAX_SOCKETS)
					here.inode[here.ninode++] = ino;
		}
		closedir(dir);
		if (here.ninode == 0 || is_relay((int)pid))
			continue;
		*m = here;
		found++;
	}
	closedir(proc);
	return found == 1;
}

bool os_peer_find(os_x11 *d, struct os_peer *p)
{
	os_peer_release(p);
	int pid = os_x_window_pid(d, key_target(d));
	if (pid <= 0 || pid == getpid())
		return false;
	p->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (p->diag_fd < 0)
		return false;
	uint32_t far[OS_PEER_MAX_SOCKETS];
	int nfar = OS_PEER_MAX_SOCKETS;
	if (!sort_sockets(p->diag_fd, pid, &p->member[0], far, &nfar))
		goto unobservable;
	p->nmember = 1;
	/* A process that accepted X connections relays them, whatever its name. */
	if (is_relay(pid) || nfar > 0) {
		/* Its being idle proves nothing alone: the client must be too.
		 * Many connections would make the client a guess: not watched. */
		if (nfar == 0 || nfar > OS_PEER_MAX_SOCKETS ||
		    !far_client(pid, far, nfar, &p->member[1]))
			goto unobservable;
		p->nmember = 2;
	}
	return true;
unobservable:
	os_peer_release(p);
	return false;
}

/*
 * Reads every thread's state and context-switch counts. Sets *busy when a
 * thread is running or in uninterruptible sleep; *switches sums the
 * counts, which move whenever any thread has run. False when the process
 * is gone.
 */
static bool threads_scan(int pid, bool *busy, unsigned long long *switches)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *dir = opendir(path);
	if (dir == NULL)
		return false;
	*busy = false;
	*switches = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char name[300], buf[2048];
		snprintf(name, sizeof(name), "%s/status", de->d_name);
		if (base_read_small(dirfd(dir), name, buf, sizeof(buf)) <= 0)
			continue;
		const char *st = strstr(buf, "\nState:");
		if (st != NULL) {
			st += strlen("\nState:");
			while (*st == ' ' || *st == '\t')
				st++;
			if (*st == 'R' || *st == 'D')
				*busy = true;
		}
		static const char *const keys[2] = {"\nvoluntary_ctxt_switches:",
		                                    "\nnonvoluntary_ctxt_switches:"};
		for (int k = 0; k < 2; k++) {
			const char *v = strstr(buf, keys[k]);
			if (v != NULL)
				*switches += strtoull(v + strlen(keys[k]), NULL, 10);
		}
	}
	closedir(dir);
	return true;
}

int os_peer_idle(struct os_peer *p, unsigned long long *switches)
{
	*switches = 0;
	bool busy = false;
	for (int k = 0; k < p->nmember; k++) {
		const struct os_peer_member *m = &p->member[k];
		for (int i = 0; i < m->ninode; i++) {
			struct diag dg;
			if (!unix_diag(p->diag_fd, m->inode[i], UDIAG_SHOW_RQLEN, &dg))
				return -1;
			if (dg.found && dg.rqueue != 0)
				return 0;
			/* Not found: the connection is closed, nothing left to read. */
		}
		bool b = false;
		unsigned long long sw = 0;
		if (threads_scan(m->pid, &b, &sw)) {
			busy = busy || b;
			*switches += sw;
		}
		/* A process that is gone has nothing left to handle. */
	}
	return busy ? 0 : 1;
}
