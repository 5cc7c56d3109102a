/*
 * executors/exec — the sessions of one conversation: one per language and
 * grant of the display, started on first use, sharing one interrupt pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executors/exec-internal.h"

extern char **environ;

struct exec_sessions {
	exec_config cfg;
	char *workspace;
	char **environ;
	char **hidden;
	sandbox_limits limits;
	bool have_limits;
	exec_session *s[EXEC_LANG_COUNT][2];
	int intr_r, intr_w;
};

/* A deep copy of a NULL-terminated string array (freed with
 * sandbox_env_destroy); NULL on allocation failure. */
static char **strv_dup(const char *const *v)
{
	size_t n = 0;
	while (v != NULL && v[n] != NULL)
		n++;
	char **out = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; out != NULL && i < n; i++) {
		if ((out[i] = strdup(v[i])) == NULL) {
			sandbox_env_destroy(out);
			return NULL;
		}
	}
	return out;
}

exec_sessions *exec_sessions_create(const exec_config *cfg)
{
	exec_sessions *set = calloc(1, sizeof(*set));
	if (set == NULL)
		return exec_fail("out of memory"), NULL;
	set->intr_r = set->intr_w = -1;
	if (cfg != NULL)
		set->cfg = *cfg;
	else
		exec_config_init(&set->cfg);
	char cwd[PATH_MAX];
	const char *ws = set->cfg.workspace;
	if (ws == NULL) {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			exec_fail("cannot read the current directory: %s", strerror(errno));
			goto fail;
		}
		ws = cwd;
	}
	if ((set->workspace = strdup(ws)) == NULL)
		goto oom;
	set->cfg.workspace = set->workspace;
	char *const *base = set->cfg.environ ? set->cfg.environ : environ;
	if ((set->environ = strv_dup((const char *const *)base)) == NULL ||
	    (set->hidden = strv_dup(set->cfg.hidden)) == NULL)
		goto oom;
	set->cfg.environ = set->environ;
	set->cfg.hidden = (const char *const *)set->hidden;
	/* Before any code of this set runs: which program a session starts
	 * must not depend on what earlier blocks wrote into PATH folders. */
	exec_interpreters_resolve(sandbox_env_get(set->environ, "PATH"));
	if (set->cfg.limits != NULL) {
		set->limits = *set->cfg.limits;
		set->cfg.limits = &set->limits;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
		exec_fail("pipe: %s", strerror(errno));
		goto fail;
	}
	set->intr_r = p[0];
	set->intr_w = p[1];
	return set;
oom:
	exec_fail("out of memory");
fail:
	exec_sessions_destroy(set);
	return NULL;
}

void exec_sessions_destroy(exec_sessions *set)
{
	if (set == NULL)
		return;
	for (int l = 0; l < EXEC_LANG_COUNT; l++)
		for (int d = 0; d < 2; d++)
			exec_session_destroy(set->s[l][d]);
	exec_close_fd(&set->intr_r);
	exec_close_fd(&set->intr_w);
	sandbox_env_destroy(set->environ);
	sandbox_env_destroy(set->hidden);
	free(set->workspace);
	free(set);
}

bool exec_sessions_run(exec_sessions *set, exec_lang lang, bool display,
                       const char *code, size_t len, exec_output_fn fn, void *user,
                       exec_result *res)
{
	memset(res, 0, sizeof(*res));
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return exec_fail("unknown language");
	exec_session **slot = &set->s[lang][display ? 1 : 0];
	if (*slot == NULL) {
		*slot = exec_session_new(lang, display, &set->cfg, set->intr_r, set->intr_w);
		if (*slot == NULL)
			return false;
	}
	return exec_session_run(*slot, code, len, fn, user, res);
}

void exec_sessions_interrupt(exec_sessions *set)
{
	if (set != NULL)
		exec_poke_interrupt(set->intr_w);
}

void exec_sessions_reset(exec_sessions *set, exec_lang lang, bool display)
{
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return;
	exec_session **slot = &set->s[lang][display ? 1 : 0];
	exec_session_destroy(*slot);
	*slot = NULL;
}
