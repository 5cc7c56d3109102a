/*
 * Private to vision/a11y*.c: libatspi, libdbus and the GLib they stand on,
 * loaded when the accessibility tree is first asked for (a11y-libs.c), not
 * linked. With libsystemd under libdbus they were a third of what every
 * command mapped at start, `deskhand --version` and a click included.
 * Included last, after every other header: from here on their functions'
 * names call through the tables. Never included elsewhere.
 */
#ifndef DESKHAND_VISION_A11Y_LIBS_H
#define DESKHAND_VISION_A11Y_LIBS_H

#include <stdbool.h>

#include <atspi/atspi.h>
#include <dbus/dbus.h>

#include "base/base.h"

#define A11Y_ATSPI_FUNCS(X, p) \
	X(p, atspi_accessible_get_child_at_index) X(p, atspi_accessible_get_child_count) \
	X(p, atspi_accessible_get_name) X(p, atspi_accessible_get_process_id) \
	X(p, atspi_accessible_get_toolkit_name) X(p, atspi_accessible_get_toolkit_version) \
	X(p, atspi_get_a11y_bus) X(p, atspi_get_desktop) X(p, atspi_init) \
	X(p, atspi_role_get_name) X(p, atspi_set_timeout)
#define A11Y_GOBJECT_FUNCS(X, p) X(p, g_object_unref)
#define A11Y_GLIB_FUNCS(X, p) \
	X(p, g_clear_error) X(p, g_free) X(p, g_hash_table_destroy) X(p, g_hash_table_insert) \
	X(p, g_hash_table_lookup) X(p, g_hash_table_new) X(p, g_hash_table_new_full) \
	X(p, g_log_set_default_handler) X(p, g_str_equal) X(p, g_str_hash) X(p, g_strconcat)
#define A11Y_DBUS_FUNCS(X, p) \
	X(p, dbus_bus_get_private) X(p, dbus_connection_close) X(p, dbus_connection_dispatch) \
	X(p, dbus_connection_ref) X(p, dbus_connection_send_with_reply) \
	X(p, dbus_connection_send_with_reply_and_block) \
	X(p, dbus_connection_set_exit_on_disconnect) X(p, dbus_connection_unref) \
	X(p, dbus_error_free) X(p, dbus_error_init) X(p, dbus_free) \
	X(p, dbus_message_append_args) X(p, dbus_message_get_args) X(p, dbus_message_get_type) \
	X(p, dbus_message_is_error) \
	X(p, dbus_message_iter_get_arg_type) X(p, dbus_message_iter_get_basic) \
	X(p, dbus_message_iter_get_signature) X(p, dbus_message_iter_init) \
	X(p, dbus_message_iter_next) X(p, dbus_message_iter_recurse) \
	X(p, dbus_message_new_method_call) X(p, dbus_message_set_serial) \
	X(p, dbus_message_unref) X(p, dbus_pending_call_block) X(p, dbus_pending_call_cancel) \
	X(p, dbus_pending_call_steal_reply) X(p, dbus_pending_call_unref) \
	X(p, dbus_validate_bus_name)

A11Y_ATSPI_FUNCS(BASE_DLIB_EXTERN, vision_dl_)
A11Y_GOBJECT_FUNCS(BASE_DLIB_EXTERN, vision_dl_)
A11Y_GLIB_FUNCS(BASE_DLIB_EXTERN, vision_dl_)
A11Y_DBUS_FUNCS(BASE_DLIB_EXTERN, vision_dl_)

/*
 * Loads the four once (thread-safe); false with *why pointing at a
 * static text ("cannot load libatspi.so.0 (install libatspi2.0-0): ...")
 * when one is missing.
 */
bool a11y_libs_load(const char **why);

#define atspi_accessible_get_child_at_index (*vision_dl_atspi_accessible_get_child_at_index)
#define atspi_accessible_get_child_count (*vision_dl_atspi_accessible_get_child_count)
#define atspi_accessible_get_name (*vision_dl_atspi_accessible_get_name)
#define atspi_accessible_get_process_id (*vision_dl_atspi_accessible_get_process_id)
#define atspi_accessible_get_toolkit_name (*vision_dl_atspi_accessible_get_toolkit_name)
#define atspi_accessible_get_toolkit_version (*vision_dl_atspi_accessible_get_toolkit_version)
#define atspi_get_a11y_bus (*vision_dl_atspi_get_a11y_bus)
#define atspi_get_desktop (*vision_dl_atspi_get_desktop)
#define atspi_init (*vision_dl_atspi_init)
#define atspi_role_get_name (*vision_dl_atspi_role_get_name)
#define atspi_set_timeout (*vision_dl_atspi_set_timeout)
#define g_object_unref (*vision_dl_g_object_unref)
#define g_clear_error (*vision_dl_g_clear_error)
#define g_free (*vision_dl_g_free)
#define g_hash_table_destroy (*vision_dl_g_hash_table_destroy)
#define g_hash_table_insert (*vision_dl_g_hash_table_insert)
#define g_hash_table_lookup (*vision_dl_g_hash_table_lookup)
#define g_hash_table_new (*vision_dl_g_hash_table_new)
#define g_hash_table_new_full (*vision_dl_g_hash_table_new_full)
#define g_log_set_default_handler (*vision_dl_g_log_set_default_handler)
/* GLib makes a call of it a strcmp; the hash tables take it as a function. */
#undef g_str_equal
#define g_str_equal (*vision_dl_g_str_equal)
#define g_str_hash (*vision_dl_g_str_hash)
#define g_strconcat (*vision_dl_g_strconcat)
#define dbus_bus_get_private (*vision_dl_dbus_bus_get_private)
#define dbus_connection_close (*vision_dl_dbus_connection_close)
#define dbus_connection_dispatch (*vision_dl_dbus_connection_dispatch)
#define dbus_connection_ref (*vision_dl_dbus_connection_ref)
#define dbus_connection_send_with_reply (*vision_dl_dbus_connection_send_with_reply)
#define dbus_connection_send_with_reply_and_block (*vision_dl_dbus_connection_send_with_reply_and_block)
#define dbus_connection_set_exit_on_disconnect (*vision_dl_dbus_connection_set_exit_on_disconnect)
#define dbus_connection_unref (*vision_dl_dbus_connection_unref)
#define dbus_error_free (*vision_dl_dbus_error_free)
#define dbus_error_init (*vision_dl_dbus_error_init)
#define dbus_free (*vision_dl_dbus_free)
#define dbus_message_append_args (*vision_dl_dbus_message_append_args)
#define dbus_message_get_args (*vision_dl_dbus_message_get_args)
#define dbus_message_get_type (*vision_dl_dbus_message_get_type)
#define dbus_message_is_error (*vision_dl_dbus_message_is_error)
#define dbus_message_iter_get_arg_type (*vision_dl_dbus_message_iter_get_arg_type)
#define dbus_message_iter_get_basic (*vision_dl_dbus_message_iter_get_basic)
#define dbus_message_iter_get_signature (*vision_dl_dbus_message_iter_get_signature)
#define dbus_message_iter_init (*vision_dl_dbus_message_iter_init)
#define dbus_message_iter_next (*vision_dl_dbus_message_iter_next)
#define dbus_message_iter_recurse (*vision_dl_dbus_message_iter_recurse)
#define dbus_message_new_method_call (*vision_dl_dbus_message_new_method_call)
#define dbus_message_set_serial (*vision_dl_dbus_message_set_serial)
#define dbus_message_unref (*vision_dl_dbus_message_unref)
#define dbus_pending_call_block (*vision_dl_dbus_pending_call_block)
#define dbus_pending_call_cancel (*vision_dl_dbus_pending_call_cancel)
#define dbus_pending_call_steal_reply (*vision_dl_dbus_pending_call_steal_reply)
#define dbus_pending_call_unref (*vision_dl_dbus_pending_call_unref)
#define dbus_validate_bus_name (*vision_dl_dbus_validate_bus_name)

#endif
