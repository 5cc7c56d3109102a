/*
 * agent/ui/terminal_edit — the line editor's table, filled at the first
 * prompt on a terminal; see terminal-edit.h.
 */
#include "config.h"

#if DESKHAND_HAVE_LIBEDIT

#include "agent/ui/terminal-edit.h"

TERM_EDIT_FUNCS(BASE_DLIB_DEFINE, agent_dl_)

static const base_dlib_sym edit_syms[] = { TERM_EDIT_FUNCS(BASE_DLIB_SYM, agent_dl_) };
static void *edit_handle;
static const base_dlib edit_lib = BASE_DLIB(DESKHAND_EDIT_SONAME, "libedit2", &edit_handle,
                                            edit_syms);

bool term_edit_load(void)
{
	return base_dlib_load(&edit_lib);
}

#endif /* DESKHAND_HAVE_LIBEDIT */
