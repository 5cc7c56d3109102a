/*
 * base/file — whole reads, whole writes and atomic replacement; see
 * base.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/base.h"
#include "base/base-internal.h"

char *base_read_fd(int fd, size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (buf == NULL)
		goto oom;
	for (;;) {
		if (n + 1 >= cap) {
			char *grown = cap > max ? NULL : realloc(buf, cap * 2);
			if (grown == NULL) {
				free(buf);
				if (cap > max)
					goto too_big;
				goto oom;
			}
			buf = grown;
			cap *= 2;
		}
		ssize_t k = read(fd, buf + n, cap - n - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > max) {
			free(buf);
			goto too_big;
		}
	}
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
too_big:
	errno = EFBIG;
	return NULL;
oom:
	errno = ENOMEM;
	return NULL;
}

char *base_read_file(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *text = base_read_fd(fd, max, len);
	int e = errno;
	close(fd);
	errno = e;
	return text;
}

ssize_t base_read_small(int dirfd, const char *path, char *buf, size_t size)
{
	if (size == 0) {
		errno = EINVAL;
		return -1;
	}
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	while (n + 1 < size) {
		ssize_t k = read(fd, buf + n, size - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

bool base_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return false;
		if (w == 0) {
			errno = EIO;
			return false;
		}
		p += w;
		len -= (size_t)w;
	}
	return true;
}

/* ---- atomic replacement ---------------------------------------------- */

/* Length of path's directory part, its last '/' included (0: none). */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash != NULL ? (size_t)(slash - path) + 1 : 0;
}

/* Eight characters of base32 for a temporary name, random enough. */
static void temp_suffix(char out[9], int attempt)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz234567";
	uint8_t rnd[8];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		for (size_t i = 0; i < sizeof(rnd); i++)
			rnd[i] = (uint8_t)(rand() ^ getpid() ^ attempt);
	}
	for (size_t i = 0; i < 8; i++)
		out[i] = digits[rnd[i] & 31];
	out[8] = '\0';
}

/* Path's directory ("." for none) into dir; false when it is too long. */
static bool dir_of(const char *path, char dir[PATH_MAX])
{
	size_t dirlen = dir_len(path);
	if (dirlen >= PATH_MAX)
		return false;
	if (dirlen == 0)
		dirlen = 1, path = ".";
	memcpy(dir, path, dirlen);
	dir[dirlen] = '\0';
	return true;
}

/*
 * The first free name ".NAME.XXXXXXXX" next to path that make(name, arg)
 * takes (true), tried 64 times while a name exists already (EEXIST).
 * Malloc'ed for the caller; NULL with errno (make's, or EEXIST).
 */
static char *temp_name(const char *path, bool (*make)(const char *t, void *arg), void *arg)
{
	size_t dirlen = dir_len(path);
	const char *name = path + dirlen;
	size_t n = dirlen + strlen(name) + 16;
	char *t = malloc(n);
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (int attempt = 0; attempt < 64; attempt++) {
		char suffix[9];
		temp_suffix(suffix, attempt);
		snprintf(t, n, "%.*s.%s.%s", (int)dirlen, path, name, suffix);
		if (make(t, arg))
			return t;
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	free(t);
	errno = e;
	return NULL;
}

struct temp_create {
	mode_t mode;
	int fd;
};

static bool temp_create(const char *t, void *arg)
{
	struct temp_create *c = arg;
	c->fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, c->mode);
	return c->fd >= 0;
}

/* Opens a new file ".NAME.XXXXXXXX" next to path; -1 (base_error) when it cannot. */
static int temp_open(const char *path, mode_t mode, char **tmp)
{
	struct temp_create c = {mode, -1};
	*tmp = temp_name(path, temp_create, &c);
	if (*tmp != NULL)
		return c.fd;
	size_t dirlen = dir_len(path);
	if (errno == ENOMEM)
		base_fail("out of memory");
	else if (errno == EEXIST)
		base_fail("no free temporary name");
	else if (dirlen == 0)
		base_fail("cannot create a file in the current directory: %s", strerror(errno));
	else
		base_fail("cannot create a file in %.*s: %s", (int)dirlen, path, strerror(errno));
	return -1;
}

/*
 * An unnamed file in path's directory (O_TMPFILE), which a crash cannot
 * leave behind: it gets its name only at commit, after its content is on
 * disk. -1 where the filesystem or the kernel has none, or where /proc
 * is missing to link it by (the caller then uses a named file).
 */
static int temp_open_unnamed(const char *path, mode_t mode)
{
	char dir[PATH_MAX];
	if (!dir_of(path, dir) || access("/proc/self/fd", X_OK) != 0)
		return -1;
	return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
}

static bool temp_link_to(const char *t, void *arg)
{
	return linkat(AT_FDCWD, arg, AT_FDCWD, t, AT_SYMLINK_FOLLOW) == 0;
}

/*
 * Names an unnamed file ".NAME.XXXXXXXX" next to a->path, so that the
 * rename can put it in place; between the two is the only moment a crash
 * can leave it behind.
 */
static bool temp_link(base_atomic *a)
{
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", a->fd);
	a->tmp = temp_name(a->path, temp_link_to, proc);
	if (a->tmp != NULL)
		return true;
	return errno == ENOMEM ? base_fail("out of memory")
	                       : base_fail("cannot name it: %s", strerror(errno));
}

bool base_atomic_begin(base_atomic *a, const char *path, mode_t mode)
{
	*a = (base_atomic){.fd = -1};
	if (path[0] == '\0' || path[strlen(path) - 1] == '/') {
		errno = EISDIR;
		return base_fail("not a file name");
	}
	a->path = strdup(path);
	if (a->path == NULL) {
		errno = ENOMEM;
		return base_fail("out of memory");
	}
	a->fd = temp_open_unnamed(path, mode);
	if (a->fd < 0)
		a->fd = temp_open(path, mode, &a->tmp);
	if (a->fd < 0) {
		free(a->path);
		a->path = NULL;
		return false;
	}
	return true;
}

void base_atomic_abort(base_atomic *a)
{
	int saved = errno;
	if (a->fd >= 0)
		close(a->fd);
	if (a->tmp != NULL)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	*a = (base_atomic){.fd = -1};
	errno = saved;
}

/*
 * Flushes the directory entry the rename wrote. A directory this process
 * may not open, or a filesystem that cannot flush one (EINVAL), leaves
 * nothing more to do: the file itself is in place either way.
 */
static bool dir_sync(const char *path)
{
	char dir[PATH_MAX];
	if (!dir_of(path, dir))
		return true;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return true;
	bool ok = fsync(fd) == 0 || errno == EINVAL;
	int e = errno;
	close(fd);
	errno = e;
	return ok || base_fail("cannot flush its directory: %s", strerror(e));
}

bool base_atomic_commit(base_atomic *a)
{
	bool ok = false;
	if (a->fd < 0) {
		errno = EBADF;
		return base_fail("nothing begun");
	}
	if (fsync(a->fd) != 0 && errno != EINVAL) {
		base_fail("cannot flush it to disk: %s", strerror(errno));
		goto out;
	}
	if (a->tmp == NULL && !temp_link(a))
		goto out;
	int fd = a->fd;
	a->fd = -1;
	/* Linux releases the descriptor even when close says EINTR. */
	if (close(fd) != 0 && errno != EINTR) {
		base_fail("%s", strerror(errno));
		goto out;
	}
	if (rename(a->tmp, a->path) != 0) {
		base_fail("cannot replace it: %s", strerror(errno));
		goto out;
	}
	/* In place: nothing to remove any more. */
	free(a->tmp);
	a->tmp = NULL;
	ok = dir_sync(a->path);
out:
	base_atomic_abort(a);
	return ok;
}

bool base_atomic_replace(const char *path, const void *data, size_t len, mode_t mode)
{
	base_atomic a;
	if (!base_atomic_begin(&a, path, mode))
		return false;
	if (!base_write_all(a.fd, data, len)) {
		base_fail("%s", strerror(errno));
		base_atomic_abort(&a);
		return false;
	}
	return base_atomic_commit(&a);
}
