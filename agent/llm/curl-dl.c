/* agent/llm/curl-dl — libcurl loaded on first use; see curl-dl.h. */
#include <dlfcn.h>

#include "config.h"
#include <stddef.h>

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

/* Without the call macros: the names below are curl's own functions. */
#define AGENT_CURL_NO_MACROS
#include "agent/llm/curl-dl.h"

#define DEFINE(f) __typeof__(f) *agent_dl_##f;
AGENT_CURL_FUNCS(DEFINE)

static void *lib;

bool agent_curl_load(const char **why)
{
	if (lib != NULL)
		return true;
	void *h = dlopen(DESKHAND_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		*why = "cannot load " DESKHAND_CURL_SONAME " (install libcurl4)";
		return false;
	}
#define LOOKUP(f) \
	if ((*(void **)&agent_dl_##f = dlsym(h, #f)) == NULL) { \
		dlclose(h); \
		*why = DESKHAND_CURL_SONAME " lacks " #f; \
		return false; \
	}
	AGENT_CURL_FUNCS(LOOKUP)
	lib = h;
	return true;
}
