/*
 * os/gnome/input-standin — TEMPORARY, on the gnome-core branch only: the
 * input functions of gnome-internal.h failing, until input.c and type.c
 * (branch gnome-input) are merged; meson builds this only when input.c is
 * absent. Delete at the merge.
 */
#include "os/gnome/gnome-internal.h"

#define NOT_YET os_fail("GNOME input is not built yet (os/gnome/input.c)")

bool os_gnome_mouse_move(os_display *d, int x, int y) { return NOT_YET; }
bool os_gnome_mouse_click(os_display *d, os_button b, int count) { return NOT_YET; }
bool os_gnome_mouse_button(os_display *d, os_button b, bool down) { return NOT_YET; }
bool os_gnome_mouse_drag_path(os_display *d, const int *xy, int n, os_button b) { return NOT_YET; }
bool os_gnome_mouse_scroll(os_display *d, os_scroll dir, int amount) { return NOT_YET; }
bool os_gnome_key_combo(os_display *d, const os_combo *c) { return NOT_YET; }
bool os_gnome_key_down(os_display *d, const os_combo *c) { return NOT_YET; }
bool os_gnome_key_up(os_display *d, const os_combo *c) { return NOT_YET; }
bool os_gnome_key_hold(os_display *d, const os_combo *c, int ms) { return NOT_YET; }
bool os_gnome_type(os_display *d, const char *utf8, size_t len, int delay_ms) { return NOT_YET; }
void os_gnome_input_release(struct os_gnome_display *g) { (void)g; }
