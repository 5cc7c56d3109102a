/*
 * os/owners — whether input would reach deskhand's own terminal: the
 * nearest of deskhand's ancestors that is a client of the display, against
 * the owners of what the input would reach, as the backend knows them
 * (os_point_owners, os_keys_owners). Where the backend cannot know who owns
 * a window, the answer is "it may": the gate then asks, even under the
 * override.
 */
#include <stdlib.h>
#include <unistd.h>

#include "base/base.h"
#include "os/backend.h"

/* ---- deskhand's own terminal ------------------------------------------ */

#define MAX_CLIENTS 512

/* pid's parent; 0: unknown. */
static int parent_of(int pid)
{
	base_proc_info pi;
	return base_proc_stat(pid, &pi) ? pi.ppid : 0;
}

/* The nearest ancestor of this process that is a client of d; 0: none. */
static int ancestor_client(os_display *d)
{
	int clients[MAX_CLIENTS];
	size_t n = os_client_pids(d, clients, MAX_CLIENTS);
	/* Without X-Resource, the windows' _NET_WM_PID. */
	size_t nw = 0;
	os_window *w = os_windows_list(d, &nw);
	for (size_t i = 0; w != NULL && i < nw && n < MAX_CLIENTS; i++)
		if (w[i].pid > 0)
			clients[n++] = w[i].pid;
	os_windows_free(w, nw);
	int pid = getppid();
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		for (size_t i = 0; i < n; i++)
			if (clients[i] == pid)
				return pid;
		pid = parent_of(pid);
	}
	return 0;
}

bool os_input_reaches_ancestor(os_display *d, const os_point *pts, size_t n, bool keys)
{
	const char *why;
	if (os_feature_how(d, OS_FEATURE_OWNERS, &why) == NULL)
		return true;
	int term = ancestor_client(d);
	if (term <= 0)
		return false;
	int owners[64];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += os_point_owners(d, pts[i].x, pts[i].y, owners + k, 64 - k);
	int x, y;
	if (n == 0 && os_pointer(d, &x, &y))
		k += os_point_owners(d, x, y, owners + k, 64 - k);
	if (keys)
		k += os_keys_owners(d, owners + k, 64 - k);
	for (size_t i = 0; i < k; i++)
		if (owners[i] == term)
			return true;
	return false;
}
