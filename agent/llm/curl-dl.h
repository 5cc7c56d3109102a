/*
 * agent/llm/curl-dl — libcurl, loaded when the first request is made.
 *
 * Only the agent talks to a model, but libcurl and what it pulls in (TLS,
 * Kerberos, LDAP, HTTP/2, ...) cost about 3 ms at every process start:
 * more than half of what `deskhand screenshot` or `deskhand click` would
 * otherwise spend. The provider code includes this header instead of
 * <curl/curl.h>; the curl_* names then call through pointers filled by
 * agent_curl_load(). Private to the provider code.
 */
#ifndef DESKHAND_AGENT_CURL_DL_H
#define DESKHAND_AGENT_CURL_DL_H

#include <stdbool.h>

/* The type-checking macros wrap the functions' names; calls go through pointers. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#define AGENT_CURL_FUNCS(X) \
	X(curl_easy_cleanup) X(curl_easy_getinfo) X(curl_easy_init) \
	X(curl_easy_perform) X(curl_easy_reset) X(curl_easy_setopt) \
	X(curl_easy_strerror) X(curl_getdate) X(curl_global_init) \
	X(curl_slist_append) X(curl_slist_free_all)

#define AGENT_CURL_DECLARE(f) extern __typeof__(f) *agent_dl_##f;
AGENT_CURL_FUNCS(AGENT_CURL_DECLARE)

/*
 * Loads libcurl once (thread-unsafe: the agent calls it from one thread).
 * Returns false with *why pointing at a static text when it cannot.
 */
bool agent_curl_load(const char **why);

#ifndef AGENT_CURL_NO_MACROS
/* curl.h wraps these two in macros of its own. */
#undef curl_easy_getinfo
#undef curl_easy_setopt
#define curl_easy_cleanup (*agent_dl_curl_easy_cleanup)
#define curl_easy_getinfo (*agent_dl_curl_easy_getinfo)
#define curl_easy_init (*agent_dl_curl_easy_init)
#define curl_easy_perform (*agent_dl_curl_easy_perform)
#define curl_easy_reset (*agent_dl_curl_easy_reset)
#define curl_easy_setopt (*agent_dl_curl_easy_setopt)
#define curl_easy_strerror (*agent_dl_curl_easy_strerror)
#define curl_getdate (*agent_dl_curl_getdate)
#define curl_global_init (*agent_dl_curl_global_init)
#define curl_slist_append (*agent_dl_curl_slist_append)
#define curl_slist_free_all (*agent_dl_curl_slist_free_all)
#endif

#endif
