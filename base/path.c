/*
 * base/path — programs found on PATH, the one way every room looks for
 * them (the interpreters, dbus-daemon, doctor's browsers): only absolute
 * directories count, since an empty or relative entry means the current
 * directory and nothing is ever taken from there.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

const char *base_path_or_default(const char *path)
{
	return path != NULL && path[0] != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
}

bool base_path_next(const char **cursor, char *dir, size_t size)
{
	while (**cursor != '\0') {
		const char *start = *cursor;
		size_t len = strcspn(start, ":");
		*cursor += len + (start[len] == ':');
		if (len > 0 && start[0] == '/' && len < size) {
			memcpy(dir, start, len);
			dir[len] = '\0';
			return true;
		}
	}
	return false;
}

bool base_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool base_path_find(const char *path, const char *prog, char *out, size_t size)
{
	char dir[4096];
	while (base_path_next(&path, dir, sizeof(dir)))
		if (snprintf(out, size, "%s/%s", dir, prog) < (int)size && base_executable_file(out))
			return true;
	return false;
}
