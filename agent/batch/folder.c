/*
 * agent/batch/folder — a task's folder as the batch's main process sees
 * it: made fresh before the task (an unfinished run's leftovers removed,
 * without following a link its code may have planted), and read after
 * it: the outcome its init wrote, the steps and actions its conversation
 * and audit log hold.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/batch/batch-internal.h"
#include "base/base.h"

enum { FOLDER_READ_MAX = 256 << 20 };

/* Empties the directory dfd names (closed here); depth bounds a hostile tree. */
static bool empty_dir(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	if (d == NULL) {
		close(dfd);
		return false;
	}
	bool ok = depth < 256;
	for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			ok = false;
			break;
		}
		/* A folder: made ours to read and write first (fchmodat does not
		 * follow: a name that is a link was unlinked above). */
		fchmodat(dirfd(d), e->d_name, 0700, 0);
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		ok = sub >= 0 && empty_dir(sub, depth + 1) &&
		     unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0;
	}
	closedir(d);
	return ok;
}

bool batch_remove_tree(const char *path)
{
	chmod(path, 0700);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? true : unlink(path) == 0;
	return empty_dir(fd, 0) && rmdir(path) == 0;
}

bool batch_folder_fresh(const char *dir, const batch_task *t, char *err, size_t errsize)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, t->id) >= (int)sizeof(path) - 64) {
		snprintf(err, errsize, "%s/%s: too long a path", dir, t->id);
		return false;
	}
	if (!batch_remove_tree(path) || mkdir(path, 0755) != 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return false;
	}
	strcat(path, "/task.json");
	if (!base_atomic_replace(path, t->line, strlen(t->line), 0644)) {
		snprintf(err, errsize, "%s: %s", path, base_error());
		return false;
	}
	return true;
}

static cJSON *read_json(const char *dir, const char *id, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", dir, id, name);
	size_t len = 0;
	char *text = base_read_file(path, FOLDER_READ_MAX, &len);
	cJSON *o = text != NULL ? cJSON_ParseWithLength(text, len) : NULL;
	free(text);
	return o;
}

cJSON *batch_folder_outcome(const char *dir, const char *id)
{
	cJSON *o = read_json(dir, id, "outcome.json");
	if (cJSON_IsObject(o))
		return o;
	cJSON_Delete(o);
	return NULL;
}

void batch_folder_count(const char *dir, const char *id, batch_counts *c)
{
	memset(c, 0, sizeof(*c));
	cJSON *conv = read_json(dir, id, "conversation.json");
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(conv, "messages"))
	{
		const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
		c->steps += cJSON_IsString(role) && strcmp(role->valuestring, "assistant") == 0;
	}
	cJSON_Delete(conv);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/audit.jsonl", dir, id);
	size_t len = 0;
	char *text = base_read_file(path, FOLDER_READ_MAX, &len);
	for (char *s = text, *nl; s != NULL && *s != '\0'; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		if (nl != NULL)
			*nl = '\0';
		cJSON *e = cJSON_Parse(s);
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(e, "event");
		if (cJSON_IsString(ev)) {
			c->actions += strcmp(ev->valuestring, "executed") == 0;
			c->denied += strcmp(ev->valuestring, "denied") == 0;
		}
		cJSON_Delete(e);
	}
	free(text);
}
