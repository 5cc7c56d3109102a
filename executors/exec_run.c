/*
 * executors/exec — one block's run: the frame sent to the driver, the wait
 * for its end (believed only when the interpreter waits for the next
 * block), interrupts, timeouts, the kill switch's watch, the output routed
 * to the caller, and the message that says how the block ended.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "executors/exec-internal.h"

#ifndef P_PIDFD
#define P_PIDFD 3       /* Linux 5.4; glibc 2.36's idtype_t lacks the name */
#endif

#define GRACE_MS 2000           /* after SIGINT, before killing everything */
#define DRAIN_MS 1000           /* reading what a dead interpreter left */

/* A write to the blocks pipe that cannot raise SIGPIPE in deskhand when
 * the interpreter has just died. */
static ssize_t write_no_sigpipe(int fd, const struct iovec *iov, int n_iov)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t n = writev(fd, iov, n_iov);
	int err = errno;
	if (n < 0 && err == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

bool exec_poke_driver(exec_session *s)
{
	ssize_t w;
	do
		w = write_no_sigpipe(s->code_fd, &(struct iovec){(char *)"\n", 1}, 1);
	while (w < 0 && errno == EINTR);
	/* EAGAIN: the driver has not read what is there yet; that read is
	 * the same event. */
	return w == 1 || (w < 0 && errno == EAGAIN);
}

int exec_poke_pause_ms(int pokes)
{
	int pause = pokes < 2 ? 0 : 1 << (pokes < 5 ? pokes - 2 : 3);
	return pause < EXEC_POKE_PAUSE_MAX_MS ? pause : EXEC_POKE_PAUSE_MAX_MS;
}

struct run_state {
	exec_session *s;
	exec_output *out;
	exec_output_fn fn;
	void *user;
	bool out_open, err_open;
};

/* Reads what is there on one output pipe; false at end of file. */
static bool pump_output(struct run_state *rs, int fd, exec_stream stream)
{
	char buf[65536];
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN;
		}
		if (n == 0)
			return false;
		if (rs->fn != NULL)
			rs->fn(buf, (size_t)n, stream, rs->user);
		exec_output_feed(rs->out, stream, buf, (size_t)n);
		if ((size_t)n < sizeof(buf))
			return true;
	}
	return true;
}

/* Reads both output pipes until they are empty (or closed), or until
 * deadline when wait_eof asks to see the writers gone. */
static void drain_output(struct run_state *rs, bool wait_eof, long long deadline)
{
	for (;;) {
		struct pollfd p[2];
		int n = 0, io = -1, ie = -1;
		if (rs->out_open) {
			io = n;
			p[n++] = (struct pollfd){rs->s->out_fd, POLLIN, 0};
		}
		if (rs->err_open) {
			ie = n;
			p[n++] = (struct pollfd){rs->s->err_fd, POLLIN, 0};
		}
		if (n == 0)
			return;
		long long left = wait_eof ? deadline - base_now_ms() : 0;
		int r = poll(p, (nfds_t)n, left > 0 ? (int)left : 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		if (io >= 0 && p[io].revents)
			rs->out_open = pump_output(rs, rs->s->out_fd, EXEC_STDOUT);
		if (ie >= 0 && p[ie].revents)
			rs->err_open = pump_output(rs, rs->s->err_fd, EXEC_STDERR);
	}
}

static const char *signal_name(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	return abbrev ? abbrev : "?";
}

/* How the interpreter ended, for the model. A SIGKILL nobody in deskhand
 * sent is, when the kernel's count of out-of-memory kills rose since the
 * session started, most likely that killer's (the count is the machine's,
 * so not certainly). */
static void describe_exit(const exec_session *s, char *buf, size_t size, int wstatus,
                          int *status)
{
	if (WIFEXITED(wstatus)) {
		*status = WEXITSTATUS(wstatus);
		snprintf(buf, size, "exited with status %d", *status);
	} else if (WIFSIGNALED(wstatus)) {
		int sig = WTERMSIG(wstatus);
		long long oom = sig == SIGKILL && s->oom_kills >= 0 ? exec_oom_kills() : -1;
		*status = 128 + sig;
		snprintf(buf, size, "was killed by signal %d (SIG%s)%s", sig, signal_name(sig),
		         oom > s->oom_kills ? ", most likely by the kernel's out-of-memory "
		                              "killer: the code needed more memory than the "
		                              "machine or its memory limit allows" : "");
	} else if (WIFSTOPPED(wstatus)) {
		*status = 128 + WSTOPSIG(wstatus);
		snprintf(buf, size, "was stopped by signal %d (SIG%s), and a stopped "
		         "interpreter cannot go on: its session was ended", WSTOPSIG(wstatus),
		         signal_name(WSTOPSIG(wstatus)));
	} else {
		*status = 128 + SIGKILL;
		snprintf(buf, size, "ended");
	}
}

/* Restarts a session whose interpreter ended (between blocks or before);
 * the note tells the model its variables are gone. */
static bool ensure_alive(exec_session *s, exec_result *res, char *note, size_t size)
{
	if (s->alive) {
		/* Did the interpreter end between blocks (a thread called exit)? */
		struct pollfd p = {s->sup_pidfd, POLLIN, 0};
		struct sup_msg m;
		ssize_t c = recv(s->sup_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_PEEK);
		if ((c == (ssize_t)sizeof(m) && m.kind == 'X') || c == 0 || poll(&p, 1, 0) > 0) {
			int ignored;
			describe_exit(s, s->ended_why, sizeof(s->ended_why),
			              c == (ssize_t)sizeof(m) ? m.status : SIGKILL, &ignored);
			exec_session_kill(s);
		}
	}
	if (s->alive)
		return true;
	bool again = s->started;
	if (!exec_session_start(s))
		return false;
	if (again) {
		res->restarted = true;
		snprintf(note, size, "a fresh %s session was started (the previous interpreter %s; "
		         "its variables are gone). ", exec_lang_name(s->lang), s->ended_why);
	}
	return true;
}

/* One block on its way: what is sent, what came back, how it ends. */
struct block {
	const char *code;
	char marker[EXEC_MARKER_LEN + 1];
	char header[64];
	size_t hlen, sent, total;
	unsigned long long since;  /* boot ticks when the code was sent */
	exec_ctl_reader ctl;
	long long deadline, grace_end, next_watch;
	bool interrupting, timed_out, interrupted, stopped;
	bool got_marker, ended, killed, have_wstatus;
	bool done;                 /* reported, and the interpreter waits for more */
	/* After a report: look at /proc (`look`); when the interpreter is not
	 * waiting yet, a token (`poked`, see exec_poke_driver) whose read is
	 * the next reason to look, sent at `poke_due` (`want_poke`). */
	bool look, want_poke, poked;
	int looks;
	long long poke_due;
	int status, wstatus;
};

/* Writes as much of the frame (header, then code) as the pipe takes now;
 * both in one write, so that a short block wakes the driver once. */
static void send_code(exec_session *s, struct block *b)
{
	while (b->sent < b->total) {
		struct iovec iov[2];
		int n = 0;
		if (b->sent < b->hlen)
			iov[n++] = (struct iovec){b->header + b->sent, b->hlen - b->sent};
		size_t from = b->sent > b->hlen ? b->sent - b->hlen : 0;
		if (b->total - b->hlen > from)
			iov[n++] = (struct iovec){(char *)b->code + from, b->total - b->hlen - from};
		ssize_t w = write_no_sigpipe(s->code_fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				b->sent = b->total;   /* interpreter gone: its exit says so */
			return;
		}
		b->sent += (size_t)w;
	}
}

/* The supervisor's word: the interpreter exited (with its status), or it died. */
static void read_supervisor(exec_session *s, struct block *b)
{
	struct sup_msg m;
	ssize_t c = recv(s->sup_fd, &m, sizeof(m), MSG_DONTWAIT);
	if (c == (ssize_t)sizeof(m) && m.kind == 'X') {
		b->wstatus = m.status;
		b->have_wstatus = true;
		b->ended = true;
	} else if (c == 0) {
		b->ended = true;
	}
}

/* SIGINT to the block (Ctrl-C or the timeout), then GRACE_MS to stop. */
static void start_interrupt(exec_session *s, struct block *b, long long now)
{
	struct sup_cmd cmd = {'I', b->since};
	send(s->sup_fd, &cmd, sizeof(cmd), MSG_NOSIGNAL);
	b->interrupting = true;
	b->grace_end = now + GRACE_MS;
}

/* One wait for anything: output, the end marker, the interpreter's end, an
 * interrupt request, room to send code; or the deadline. */
static void wait_once(exec_session *s, struct run_state *rs, struct block *b)
{
	struct pollfd p[7];
	int n = 0, i_out = -1, i_err = -1, i_code = -1;
	if (rs->out_open) {
		i_out = n;
		p[n++] = (struct pollfd){s->out_fd, POLLIN, 0};
	}
	if (rs->err_open) {
		i_err = n;
		p[n++] = (struct pollfd){s->err_fd, POLLIN, 0};
	}
	int i_ctl = n;
	p[n++] = (struct pollfd){s->ctl_fd, POLLIN, 0};
	int i_sup = n;
	p[n++] = (struct pollfd){s->sup_fd, POLLIN, 0};
	int i_pid = n;
	p[n++] = (struct pollfd){s->sup_pidfd, POLLIN, 0};
	int i_intr = n;
	p[n++] = (struct pollfd){s->intr_r, POLLIN, 0};
	if (b->sent < b->total || b->poked) {
		i_code = n;
		p[n++] = (struct pollfd){s->code_fd, POLLOUT, 0};
	}
	long long until = b->interrupting ? b->grace_end : b->deadline;
	if (s->watch != NULL && b->next_watch < until)
		until = b->next_watch;
	if (b->want_poke && !b->poked && b->poke_due < until)
		until = b->poke_due;
	long long left = until - base_now_ms();
	int r = poll(p, (nfds_t)n, left > 0 ? (int)left : 0);
	if (r < 0 && errno != EINTR) {
		exec_fail("poll: %s", strerror(errno));
		b->killed = true;
		return;
	}
	if (r <= 0)
		return;
	if (i_code >= 0 && p[i_code].revents && b->sent < b->total) {
		send_code(s, b);
	} else if (i_code >= 0 && p[i_code].revents) {
		b->poked = false;           /* the driver read the token */
		b->look = !(p[i_code].revents & POLLERR);
	}
	if (i_out >= 0 && p[i_out].revents)
		rs->out_open = pump_output(rs, s->out_fd, EXEC_STDOUT);
	if (i_err >= 0 && p[i_err].revents)
		rs->err_open = pump_output(rs, s->err_fd, EXEC_STDERR);
	if (p[i_ctl].revents) {
		char buf[256];
		ssize_t c = read(s->ctl_fd, buf, sizeof(buf));
		if (c > 0 && exec_ctl_feed(&b->ctl, b->marker, buf, (size_t)c, &b->status))
			b->got_marker = b->look = true;
	}
	if (p[i_sup].revents)
		read_supervisor(s, b);
	if (p[i_pid].revents & POLLIN)
		b->ended = true;
	if (p[i_intr].revents) {
		char junk[64];
		while (read(s->intr_r, junk, sizeof(junk)) > 0)
			;
		if (!b->interrupting) {
			start_interrupt(s, b, base_now_ms());
			b->interrupted = true;
		}
	}
}

/*
 * A report is believed once the interpreter really waits for the next
 * block: code that forged it may still be running. Looked at on the
 * report, then each time the driver read a token: no timer while code
 * runs. A driver that reads tokens and still does not wait (code reading
 * the blocks pipe itself) gets them ever slower (exec_poke_pause_ms)
 * apart. True when the block is done.
 */
static bool look_idle(exec_session *s, struct block *b, long long now)
{
	if (b->look) {
		b->look = false;
		if (exec_interp_idle(s) != 0)
			return b->done = true;
		b->want_poke = true;
		b->poke_due = now + exec_poke_pause_ms(b->looks++);
	}
	/* Only between frames: the driver skips a token where a header may
	 * begin, not inside the code. */
	if (b->want_poke && !b->poked && b->sent == b->total && now >= b->poke_due) {
		b->want_poke = false;
		b->poked = exec_poke_driver(s);
	}
	return false;
}

/* Runs the block until its marker, the interpreter's end, or the end of the
 * grace after an interrupt or the timeout. */
static void run_block(exec_session *s, struct run_state *rs, struct block *b)
{
	while (!b->done && !b->ended && !b->killed) {
		wait_once(s, rs, b);
		if (b->ended || b->killed)
			break;
		long long now = base_now_ms();
		if (look_idle(s, b, now))
			break;
		if (s->watch != NULL && now >= b->next_watch) {
			b->next_watch = now + EXEC_WATCH_MS;
			if (s->watch(s->watch_user)) {
				/* No grace: what the watch guards must end now. */
				b->stopped = b->killed = true;
				break;
			}
		}
		if (!b->interrupting && now >= b->deadline) {
			start_interrupt(s, b, now);
			b->timed_out = true;
		} else if (b->interrupting && now >= b->grace_end) {
			b->killed = true;
		}
	}
}

/* After the block: the rest of its output, and what is left of the session. */
static void settle_block(exec_session *s, struct run_state *rs, struct block *b,
                         char *how, size_t size)
{
	if (b->done && !b->timed_out) {
		drain_output(rs, false, 0);
	} else if (b->ended) {
		/* The interpreter is gone; the supervisor is taking the rest of
		 * the session down. Read what they wrote until the pipes close. */
		drain_output(rs, true, base_now_ms() + DRAIN_MS);
		if (!b->have_wstatus) {
			/* The supervisor itself died; its status is all there is. */
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			if (waitid((idtype_t)P_PIDFD, (id_t)s->sup_pidfd, &si, WEXITED | WNOWAIT) == 0)
				b->wstatus = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
			else
				b->wstatus = SIGKILL;
		}
		describe_exit(s, how, size, b->wstatus, &b->status);
		exec_session_kill(s);
	} else if (b->killed || b->timed_out) {
		/* Nothing survives a timeout, even a block that obeyed SIGINT:
		 * what it started in the background goes too. */
		drain_output(rs, false, 0);
		exec_session_terminate(s);
		drain_output(rs, true, base_now_ms() + DRAIN_MS);
		exec_session_kill(s);
	}
}

/* The block's status and the message for the model about how it ended. */
static void block_message(exec_session *s, struct block *b, const char *how,
                          char *msg, size_t size)
{
	const char *lang = exec_lang_name(s->lang);
	msg[0] = '\0';
	if (b->stopped) {
		b->status = EXEC_STATUS_STOPPED;
		snprintf(msg, size, "stopped at once: every process of the session was killed; "
		         "the next block starts a fresh %s session", lang);
		snprintf(s->ended_why, sizeof(s->ended_why), "was stopped at once");
	} else if (b->timed_out) {
		b->status = EXEC_STATUS_TIMEOUT;
		snprintf(msg, size, "timed out after %u s: interrupted, then every process "
		         "of the session was stopped; the next block starts a fresh %s session",
		         (s->timeout_ms + 999) / 1000, lang);
		snprintf(s->ended_why, sizeof(s->ended_why), "was stopped after a timeout");
	} else if (b->interrupted && b->killed) {
		b->status = EXEC_STATUS_INTERRUPTED;
		snprintf(msg, size, "interrupted: the block did not stop within %d s, so "
		         "every process of the session was stopped; the next block starts a "
		         "fresh %s session", GRACE_MS / 1000, lang);
		snprintf(s->ended_why, sizeof(s->ended_why), "was stopped after an interrupt");
	} else if (b->ended) {
		if (b->interrupted && WIFSIGNALED(b->wstatus) && WTERMSIG(b->wstatus) == SIGINT)
			b->status = EXEC_STATUS_INTERRUPTED;
		snprintf(msg, size, "%sduring the block, the %s interpreter %s; the next "
		         "block starts a fresh session", b->interrupted ? "interrupted: " : "",
		         lang, how);
		snprintf(s->ended_why, sizeof(s->ended_why), "%s", how);
	} else if (b->interrupted) {
		snprintf(msg, size, "interrupted");
	}
}

#define EARLIER_HEAD "[deskhand: output of an earlier block's background work, written " \
	"after that block ended:]\n"
#define EARLIER_TAIL "\n[deskhand: this block's output:]\n"

/* Whatever arrived between blocks was written by work an earlier block left
 * running: it opens this block's output under a label, never as its own. */
static void take_earlier_output(exec_session *s, struct run_state *rs)
{
	exec_output *earlier = exec_output_create(s->max_output);
	if (earlier == NULL)
		return;
	/* Is what an earlier block left still there? */
	if (s->lingering && s->interp_pid != 0)
		s->lingering = exec_interp_threads(s) > s->base_threads || exec_block_processes(s, 0) > 0;
	struct run_state tmp = {s, earlier, NULL, NULL, true, true};
	drain_output(&tmp, false, 0);
	size_t len = 0, total = 0;
	char *text = exec_output_text(earlier, &len, NULL, &total, NULL);
	if (text != NULL && total > 0) {
		static const char head[] = EARLIER_HEAD, tail[] = EARLIER_TAIL;
		bool nl = len > 0 && text[len - 1] == '\n';
		const char *parts[3] = {head, text, tail + nl};
		size_t lens[3] = {sizeof(head) - 1, len, sizeof(tail) - 1 - nl};
		for (int i = 0; i < 3; i++) {
			if (rs->fn != NULL)
				rs->fn(parts[i], lens[i], EXEC_STDOUT, rs->user);
			exec_output_feed(rs->out, EXEC_STDOUT, parts[i], lens[i]);
		}
	}
	free(text);
	exec_output_destroy(earlier);
}

bool exec_session_run(exec_session *s, const char *code, size_t len,
                      exec_output_fn fn, void *user, exec_result *res)
{
	memset(res, 0, sizeof(*res));
	if (memchr(code, '\0', len) != NULL)
		return exec_fail("the code contains a NUL byte; nothing was run");
	char restart_note[sizeof(s->ended_why) + 160] = "";
	if (!ensure_alive(s, res, restart_note, sizeof(restart_note)))
		return false;
	/* Interrupt requests made while nothing ran are stale. */
	char junk[64];
	while (read(s->intr_r, junk, sizeof(junk)) > 0)
		;
	struct block b;
	memset(&b, 0, sizeof(b));
	b.code = code;
	if (!exec_marker_new(b.marker))
		return false;
	b.hlen = exec_frame_header(b.header, sizeof(b.header), b.marker, len);
	b.total = b.hlen + len;
	struct run_state rs = {s, exec_output_create(s->max_output), fn, user, true, true};
	if (rs.out == NULL)
		return exec_fail("out of memory");
	/* Taken before the code is sent: every process the block starts
	 * begins at this tick or later (see interrupt_block,
	 * exec_supervisor.c). */
	take_earlier_output(s, &rs);
	b.since = exec_boot_ticks();
	b.deadline = base_now_ms() + s->timeout_ms;
	run_block(s, &rs, &b);

	char how[sizeof(s->ended_why)] = "", msg[400], left_running[300] = "";
	settle_block(s, &rs, &b, how, sizeof(how));
	block_message(s, &b, how, msg, sizeof(msg));
	if (b.done && s->alive)
		exec_lingering_note(s, b.since, left_running, sizeof(left_running));
	res->status = b.status;
	res->timed_out = b.timed_out;
	res->interrupted = b.interrupted;
	res->stopped = b.stopped;
	res->session_ended = !s->alive;
	int n = snprintf(res->message, sizeof(res->message), "%s%s%s%s", restart_note, msg,
	                 msg[0] && left_running[0] ? "; " : "", left_running);
	/* A message cut to fit says so rather than ending mid-word. */
	if (n >= (int)sizeof(res->message))
		memcpy(res->message + sizeof(res->message) - 4, "...", 4);
	/* Trailing space of the note alone is noise. */
	size_t ml = strlen(res->message);
	while (ml > 0 && res->message[ml - 1] == ' ')
		res->message[--ml] = '\0';
	res->output = exec_output_text(rs.out, &res->output_len, &res->output_head_len,
	                               &res->chars_total, &res->chars_omitted);
	exec_output_destroy(rs.out);
	if (res->output == NULL) {
		res->output = calloc(1, 1);
		res->output_len = res->output_head_len = 0;
	}
	return true;
}
