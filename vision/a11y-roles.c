/*
 * The roles the accessibility walk keeps (see a11y-internal.h): an
 * allowlist, so that a toolkit's new role is left out until someone says
 * what a model would do with it; and the names it drops. Apart from a11y.c
 * so that the walk's file stays readable.
 */
#include "config.h"

#if DESKHAND_HAVE_ATSPI

#include <string.h>

#include "vision/a11y-internal.h"

/* The allowlist: what a person acts on, and text that says something. */
bool vision_a11y_role_interactive(AtspiRole r)
{
	switch (r) {
	case ATSPI_ROLE_PUSH_BUTTON: case ATSPI_ROLE_TOGGLE_BUTTON:
	case ATSPI_ROLE_CHECK_BOX: case ATSPI_ROLE_RADIO_BUTTON:
	case ATSPI_ROLE_COMBO_BOX: case ATSPI_ROLE_MENU: case ATSPI_ROLE_MENU_ITEM:
	case ATSPI_ROLE_CHECK_MENU_ITEM: case ATSPI_ROLE_RADIO_MENU_ITEM:
	case ATSPI_ROLE_PAGE_TAB: case ATSPI_ROLE_LINK: case ATSPI_ROLE_ENTRY:
	case ATSPI_ROLE_PASSWORD_TEXT: case ATSPI_ROLE_SPIN_BUTTON:
	case ATSPI_ROLE_SLIDER: case ATSPI_ROLE_SCROLL_BAR: case ATSPI_ROLE_LIST_ITEM:
	case ATSPI_ROLE_TABLE_CELL: case ATSPI_ROLE_TREE_ITEM: case ATSPI_ROLE_ICON:
	case ATSPI_ROLE_TERMINAL:
	case ATSPI_ROLE_PUSH_BUTTON_MENU: case ATSPI_ROLE_COLOR_CHOOSER:
	case ATSPI_ROLE_DATE_EDITOR: case ATSPI_ROLE_TABLE_COLUMN_HEADER:
	case ATSPI_ROLE_TABLE_ROW_HEADER:
		return true;
	default:
		return false;
	}
}

bool vision_a11y_role_texty(AtspiRole r)
{
	switch (r) {
	case ATSPI_ROLE_LABEL: case ATSPI_ROLE_TEXT: case ATSPI_ROLE_HEADING:
	case ATSPI_ROLE_PARAGRAPH: case ATSPI_ROLE_STATIC: case ATSPI_ROLE_IMAGE:
	case ATSPI_ROLE_CAPTION: case ATSPI_ROLE_STATUS_BAR: case ATSPI_ROLE_ALERT:
	case ATSPI_ROLE_SECTION: case ATSPI_ROLE_DOCUMENT_WEB: case ATSPI_ROLE_NOTIFICATION:
	case ATSPI_ROLE_TOOL_TIP: case ATSPI_ROLE_PROGRESS_BAR: case ATSPI_ROLE_LEVEL_BAR:
		return true;
	default:
		return false;
	}
}

/* GTK 4.8 names an unnamed widget by its class ("GtkToggleButton"): no name. */
bool vision_a11y_gtk_class_name(const char *name)
{
	if (strncmp(name, "Gtk", 3) != 0 || name[3] < 'A' || name[3] > 'Z')
		return false;
	for (const char *c = name + 3; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z')))
			return false;
	return true;
}

#endif /* DESKHAND_HAVE_ATSPI */
