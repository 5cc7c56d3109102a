/*
 * base/dlib — a library loaded by soname on first use, its functions
 * looked up into a room's table; see base.h.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "base/base.h"
#include "base/base-internal.h"

/* One lock for every table: loads are rare, and a room's two threads
 * (the agent's and a console's) may reach the same one at once. */
static pthread_mutex_t dlib_lock = PTHREAD_MUTEX_INITIALIZER;

static bool dlib_fill(void *h, const base_dlib *lib)
{
	for (size_t i = 0; i < lib->n_syms; i++) {
		dlerror();
		void *p = dlsym(h, lib->syms[i].name);
		if (p == NULL)
			return base_fail("%s lacks %s", lib->soname, lib->syms[i].name);
		*lib->syms[i].slot = p;
	}
	return true;
}

bool base_dlib_load(const base_dlib *lib)
{
	bool ok = true;
	pthread_mutex_lock(&dlib_lock);
	if (*lib->handle != NULL)
		goto out;
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *why = dlerror();
		ok = base_fail("cannot load %s (install %s): %s", lib->soname, lib->package,
		               why != NULL ? why : "not found");
		goto out;
	}
	if (!dlib_fill(h, lib)) {
		ok = false;
		dlclose(h);
		goto out;
	}
	*lib->handle = h;
out:
	pthread_mutex_unlock(&dlib_lock);
	return ok;
}

bool base_dlib_loaded(const base_dlib *lib)
{
	pthread_mutex_lock(&dlib_lock);
	bool loaded = *lib->handle != NULL;
	pthread_mutex_unlock(&dlib_lock);
	return loaded;
}

void *base_dlib_symbol(const base_dlib *lib, const char *name)
{
	if (!base_dlib_loaded(lib))
		return NULL;
	return dlsym(*lib->handle, name);
}
