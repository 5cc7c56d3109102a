/*
 * base/proc — /proc/PID/stat; see base.h. Async-signal-safe throughout:
 * the sandbox's supervisor reads it between fork and exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "base/base.h"

/* The last field read: 51, env_end. */
#define FIELDS_MAX 51

struct field {
	const char *s;
	size_t len;
};

/* f's value when it is all digits; false when it is not. */
static bool field_number(struct field f, unsigned long long *out)
{
	unsigned long long v = 0;
	if (f.len == 0)
		return false;
	for (size_t i = 0; i < f.len; i++) {
		if (f.s[i] < '0' || f.s[i] > '9')
			return false;
		v = v * 10 + (unsigned long long)(f.s[i] - '0');
	}
	*out = v;
	return true;
}

/* Fields 48-51, all four or none. */
static void args_store(const struct field *f, int count, base_proc_info *out)
{
	unsigned long long v[4];
	for (int i = 0; i < 4; i++)
		if (count < 48 + i || !field_number(f[48 + i], &v[i]))
			return;
	out->arg_start = (unsigned long)v[0];
	out->arg_end = (unsigned long)v[1];
	out->env_start = (unsigned long)v[2];
	out->env_end = (unsigned long)v[3];
}

bool base_proc_stat_parse(const char *text, base_proc_info *out)
{
	memset(out, 0, sizeof(*out));
	/* The name (field 2) may hold anything, ')' and spaces too: the
	 * fields start after its last ')'. */
	const char *p = strrchr(text, ')');
	if (p == NULL || p[1] != ' ')
		goto bad;
	p += 2;
	struct field f[FIELDS_MAX + 1];
	int count = 2;
	while (*p != '\0' && *p != '\n' && count < FIELDS_MAX) {
		size_t len = strcspn(p, " \n");
		f[++count] = (struct field){p, len};
		p += len;
		if (*p == ' ')
			p++;
	}
	unsigned long long ppid, pgrp, session;
	if (count < 22 || f[3].len == 0 || !field_number(f[4], &ppid) ||
	    !field_number(f[5], &pgrp) || !field_number(f[6], &session) ||
	    !field_number(f[22], &out->start))
		goto bad;
	out->state = f[3].s[0];
	out->ppid = (int)ppid;
	out->pgrp = (int)pgrp;
	out->session = (int)session;
	args_store(f, count, out);
	return true;
bad:
	errno = EINVAL;
	return false;
}

bool base_proc_stat(int pid, base_proc_info *out)
{
	char path[32] = "/proc/self/stat";
	if (pid > 0) {
		char digits[16];
		int d = 0;
		size_t n = 6;
		do {
			digits[d++] = (char)('0' + pid % 10);
			pid /= 10;
		} while (pid > 0);
		while (d > 0)
			path[n++] = digits[--d];
		memcpy(path + n, "/stat", 6);
	}
	/* 52 fields of at most 20 digits, and a name of at most 64 bytes. */
	char buf[1280];
	ssize_t n = base_read_small(AT_FDCWD, path, buf, sizeof(buf));
	if (n < 0)
		return false;
	if (n == 0) {
		errno = ESRCH;
		return false;
	}
	return base_proc_stat_parse(buf, out);
}

void base_proc_comm(int pid, char *buf, size_t size)
{
	char path[32] = "/proc/";
	char num[16];
	int n = 0;
	for (unsigned v = (unsigned)pid; n == 0 || v > 0; v /= 10)
		num[n++] = (char)('0' + v % 10);
	size_t at = strlen(path);
	while (n > 0)
		path[at++] = num[--n];
	memcpy(path + at, "/comm", 6);
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || size == 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	ssize_t got = read(fd, buf, size - 1);
	close(fd);
	buf[got > 0 ? (size_t)got : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}
