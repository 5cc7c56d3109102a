/*
 * Private to os/input.c, mouse.c, combo.c, type.c and peer.c: the input
 * state kept on the display (XTest availability, temporary keymap bindings
 * to undo), keymap snapshots, and the signal guard that keeps keys and the
 * keymap from being left changed when SIGINT/SIGTERM/SIGHUP arrive
 * mid-action.
 */
#ifndef DESKHAND_OS_INPUT_INTERNAL_H
#define DESKHAND_OS_INPUT_INTERNAL_H

#include <signal.h>
#include <stdint.h>

#include "os/keys.h"
#include "os/x11/x11.h"

/* ---- peer.c: the client that receives our keystrokes --------------------- */

#define OS_PEER_MAX_SOCKETS 8

/* One watched process and the sockets it reads our keystrokes from. */
struct os_peer_member {
	int pid;
	uint32_t inode[OS_PEER_MAX_SOCKETS];
	int ninode;
};

/*
 * The X client, or a relay (socat) and the client on this machine behind
 * it: the keystrokes are handled once every member has read them.
 */
struct os_peer {
	int diag_fd;            /* NETLINK_SOCK_DIAG socket, -1 when none */
	struct os_peer_member member[2];
	int nmember;            /* 0: not observable */
};

/*
 * Finds the client that owns the focused window (or the window under the
 * pointer when focus follows it) and its X connections; behind a relay
 * (socat, ...) whose far side is a unix socket on this machine, the relay
 * and the process holding that far end. False when it cannot be observed:
 * a remote client (ssh -X, a TCP relay), another user's process, no
 * X-Resource extension. Release with os_peer_release (also after false).
 */
bool os_peer_find(os_x11 *d, struct os_peer *p);
void os_peer_release(struct os_peer *p);
/*
 * One observation: 1 when every member's sockets have nothing left to read
 * and none of its threads is running or in uninterruptible sleep, 0 when
 * busy, -1 when the kernel would not tell. *switches receives the sum of
 * their threads' context switches: equal sums mean no thread ran between.
 */
int os_peer_idle(struct os_peer *p, unsigned long long *switches);

/* ---- the input state ------------------------------------------------------ */

/*
 * Keystrokes are counted in *epochs*: every batch sent and synced ends one.
 * A spare slot (keycode, column) remembers the epoch and time of its last
 * keystroke; `handled` is the last epoch the target client is known to have
 * finished (observed idle after it). Spare keycodes hold no keysym in the
 * user's keymap, so undoing a binding writes NoSymbol; `bound` says which.
 * Bindings are written in one XKB map change per flush (see
 * os_input_bind_flush): `xkb` is the map fetched for it (held from the
 * first binding to the restore), `orig` a bound key's entry before, `cur`
 * what it holds, `pending` what is not written yet. Without XKB they go
 * through the core protocol in runs of neighbouring keycodes that `spare`
 * (empty in the keymap) lets a run cross.
 */
struct os_input_orig {
	uint8_t kt_index[4];
	uint8_t group_info;
	uint8_t width;
};

struct os_input_state {
	bool bound[256];
	bool spare[256];
	bool pending[256];
	uint32_t cur[256][2];
	struct _XkbDesc *xkb;
	bool xkb_failed;        /* for this typing call: core protocol */
	struct os_input_orig orig[256];
	unsigned long use_epoch[256][2];
	int64_t use_time[256][2];   /* base_now_ns */
	unsigned long epoch;
	unsigned long handled;
	struct os_peer peer;
	bool have_peer;
	int shift_code;         /* a keycode with Shift (0: none) */
};

/*
 * When the target client cannot be observed: how long a keycode must rest
 * after its last keystroke before it may be rebound. Measured with xterm
 * drawing CJK text on this 2-core machine: 20 ms already loses characters,
 * 80 ms did not in our runs; 150 ms leaves room for a loaded desktop.
 */
#define OS_TYPE_GUARD_MS 150
/*
 * An observable client counts as having handled its events once it has
 * stayed idle (nothing to read, no thread running, no context switch) for
 * this long while we keep the server dispatching with round trips. A
 * single look is not enough: the server may hold back a client's events
 * while it has a request of that client pending (measured: 2 ms later the
 * client was still decoding keystrokes).
 */
#define OS_PEER_QUIET_MS 10
/* The longest wait for a client that never rests; then typing goes on. */
#define OS_PEER_WAIT_MS 2000

/*
 * Looks up the client that will receive the next keystrokes (best effort;
 * without one, os_input_settle falls back to the guard time).
 */
void os_input_find_peer(os_x11 *d);
/*
 * Flow control for long texts: syncs, and waits for an observable client
 * to catch up, so that the server does not buffer without bound for a
 * client slower than we are. Call only after os_input_epoch_end.
 */
void os_input_drain(os_x11 *d);
/* Keystrokes sent between two drains. */
#define OS_TYPE_DRAIN_EVERY 2048
/* Records a keystroke on a spare slot in the current (unfinished) epoch. */
void os_input_used(os_x11 *d, uint8_t code, int column);
/* Ends the epoch after the caller has synced its keystrokes. */
void os_input_epoch_end(os_x11 *d);
/*
 * Waits until the target client has handled every keystroke on the given
 * slots (columns: bit 0 column 0, bit 1 column 1 of codes[i]): observed idle
 * after their epoch, or, when it cannot be observed, rested for the guard
 * time. Not interrupted by the guarded signals: it is what makes undoing
 * safe after one.
 */
void os_input_settle(os_x11 *d, const uint8_t *codes, const uint8_t *cols,
                     int n);

/* The input state of d, created on first use after checking XTest. */
struct os_input_state *os_input_state(os_x11 *d);

/*
 * Snapshot of the core keymap. Ownership: km->syms is malloc'ed, the caller
 * frees it (free((void *)km->syms)).
 */
bool os_input_keymap(os_x11 *d, os_keymap *km);

/* Binds spare keycode `code` to columns syms[0], syms[1]; recorded only:
 * os_input_bind_flush writes it. */
void os_input_bind(os_x11 *d, uint8_t code, const uint32_t syms[2]);
/*
 * Writes the bindings recorded since the last flush; queued, not synced.
 * Why in one change: every mapping change is one MappingNotify, and each
 * costs a client such as xterm a keymap fetch before it decodes the next
 * keystroke (a round binding 11 keycodes one by one made it fetch 11
 * times). Spare keycodes lie scattered among used ones (Xvfb: 8, 93, 97,
 * 103...), so one change covers the keys between too, written back as the
 * XKB map fetched at the first binding holds them.
 */
void os_input_bind_flush(os_x11 *d);
/* Marks the keycodes a run of bindings may cross: empty in the keymap. */
void os_input_mark_spare(os_x11 *d, const uint8_t *spare, int n);
/*
 * The spare keycodes of km (empty, so free to bind) into spare[], at most
 * 256, marked on d as ones a run of bindings may cross; returns how many.
 */
int os_input_spares(os_x11 *d, const os_keymap *km, uint8_t spare[256]);
/*
 * Settles every bound keycode (os_input_settle), then writes their
 * original (empty) entries back in one change, syncs and forgets the XKB
 * map (a later call fetches it again: the user may switch layouts). Returns false (os_error) on an X
 * error or a lost connection.
 */
bool os_input_restore(os_x11 *d);

/* Syncs so that the events have reached the server; false when the
 * connection is lost. */
bool os_input_sync(os_x11 *d);

#endif
