/*
 * Private to os/gnome/: GIO, GLib and libpipewire, loaded when a GNOME
 * display is first opened (gnome-libs.c), not linked. GLib and what it
 * pulls in (libmount, libselinux, libblkid, libffi, ...) were the biggest
 * part of what every command mapped at start, X11 and sway sessions
 * included, which never use them. Included last, after every other
 * header: from here on their functions' names call through the tables.
 */
#ifndef DESKHAND_OS_GNOME_LIBS_H
#define DESKHAND_OS_GNOME_LIBS_H

#include <stdbool.h>

#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <pipewire/pipewire.h>

#include "base/base.h"

#define GNOME_GIO_FUNCS(X, p) X(p, g_dbus_connection_call_sync) \
	X(p, g_dbus_connection_call_with_unix_fd_list_sync) X(p, g_dbus_connection_is_closed) \
	X(p, g_dbus_connection_new_for_address_sync) X(p, g_dbus_connection_set_exit_on_close) \
	X(p, g_dbus_connection_signal_subscribe) X(p, g_dbus_connection_signal_unsubscribe) \
	X(p, g_dbus_error_quark) X(p, g_unix_fd_list_get)
#define GNOME_GOBJECT_FUNCS(X, p) X(p, g_object_unref)
#define GNOME_GLIB_FUNCS(X, p) X(p, g_byte_array_append) X(p, g_byte_array_free_to_bytes) \
	X(p, g_byte_array_new) X(p, g_byte_array_unref) X(p, g_bytes_get_data) X(p, g_bytes_new) \
	X(p, g_bytes_ref) X(p, g_bytes_unref) X(p, g_clear_error) X(p, g_error_free) \
	X(p, g_error_matches) X(p, g_free) X(p, g_main_context_iteration) X(p, g_main_context_new) \
	X(p, g_main_context_pop_thread_default) X(p, g_main_context_push_thread_default) \
	X(p, g_main_context_unref) X(p, g_source_attach) X(p, g_source_destroy) \
	X(p, g_source_set_callback) X(p, g_source_unref) X(p, g_strdup) X(p, g_strdup_printf) \
	X(p, g_string_append_printf) X(p, g_string_append_unichar) X(p, g_string_free) \
	X(p, g_string_new) X(p, g_strndup) X(p, g_timeout_source_new) X(p, g_usleep) \
	X(p, g_variant_builder_add) X(p, g_variant_builder_end) X(p, g_variant_builder_init) \
	X(p, g_variant_get) X(p, g_variant_get_boolean) X(p, g_variant_get_child) \
	X(p, g_variant_get_child_value) X(p, g_variant_get_int32) X(p, g_variant_get_string) \
	X(p, g_variant_is_of_type) X(p, g_variant_iter_free) X(p, g_variant_iter_init) \
	X(p, g_variant_iter_next) X(p, g_variant_iter_next_value) X(p, g_variant_lookup) \
	X(p, g_variant_n_children) X(p, g_variant_new) X(p, g_variant_new_string) \
	X(p, g_variant_new_uint32) X(p, g_variant_ref_sink) X(p, g_variant_type_checked_) \
	X(p, g_variant_unref)
#define GNOME_PIPEWIRE_FUNCS(X, p) X(p, pw_context_connect) X(p, pw_context_destroy) \
	X(p, pw_context_new) X(p, pw_core_disconnect) X(p, pw_init) X(p, pw_log_set_level) \
	X(p, pw_properties_new) X(p, pw_stream_add_listener) X(p, pw_stream_connect) \
	X(p, pw_stream_dequeue_buffer) X(p, pw_stream_destroy) X(p, pw_stream_disconnect) \
	X(p, pw_stream_new) X(p, pw_stream_queue_buffer) X(p, pw_stream_update_params) \
	X(p, pw_thread_loop_destroy) X(p, pw_thread_loop_get_loop) X(p, pw_thread_loop_get_time) \
	X(p, pw_thread_loop_lock) X(p, pw_thread_loop_new) X(p, pw_thread_loop_signal) \
	X(p, pw_thread_loop_start) X(p, pw_thread_loop_stop) X(p, pw_thread_loop_timed_wait_full) \
	X(p, pw_thread_loop_unlock)

GNOME_GIO_FUNCS(BASE_DLIB_EXTERN, os_gnome_dl_)
GNOME_GOBJECT_FUNCS(BASE_DLIB_EXTERN, os_gnome_dl_)
GNOME_GLIB_FUNCS(BASE_DLIB_EXTERN, os_gnome_dl_)
GNOME_PIPEWIRE_FUNCS(BASE_DLIB_EXTERN, os_gnome_dl_)

/* Loads them once (thread-safe); false with os_error() naming the one
 * missing and its package. */
bool os_gnome_libs_load(void);

#define g_byte_array_append (*os_gnome_dl_g_byte_array_append)
#define g_byte_array_free_to_bytes (*os_gnome_dl_g_byte_array_free_to_bytes)
#define g_byte_array_new (*os_gnome_dl_g_byte_array_new)
#define g_byte_array_unref (*os_gnome_dl_g_byte_array_unref)
#define g_bytes_get_data (*os_gnome_dl_g_bytes_get_data)
#define g_bytes_new (*os_gnome_dl_g_bytes_new)
#define g_bytes_ref (*os_gnome_dl_g_bytes_ref)
#define g_bytes_unref (*os_gnome_dl_g_bytes_unref)
#define g_clear_error (*os_gnome_dl_g_clear_error)
#define g_dbus_connection_call_sync (*os_gnome_dl_g_dbus_connection_call_sync)
#define g_dbus_connection_call_with_unix_fd_list_sync (*os_gnome_dl_g_dbus_connection_call_with_unix_fd_list_sync)
#define g_dbus_connection_is_closed (*os_gnome_dl_g_dbus_connection_is_closed)
#define g_dbus_connection_new_for_address_sync (*os_gnome_dl_g_dbus_connection_new_for_address_sync)
#define g_dbus_connection_set_exit_on_close (*os_gnome_dl_g_dbus_connection_set_exit_on_close)
#define g_dbus_connection_signal_subscribe (*os_gnome_dl_g_dbus_connection_signal_subscribe)
#define g_dbus_connection_signal_unsubscribe (*os_gnome_dl_g_dbus_connection_signal_unsubscribe)
#define g_dbus_error_quark (*os_gnome_dl_g_dbus_error_quark)
#define g_error_free (*os_gnome_dl_g_error_free)
#define g_error_matches (*os_gnome_dl_g_error_matches)
#define g_free (*os_gnome_dl_g_free)
#define g_main_context_iteration (*os_gnome_dl_g_main_context_iteration)
#define g_main_context_new (*os_gnome_dl_g_main_context_new)
#define g_main_context_pop_thread_default (*os_gnome_dl_g_main_context_pop_thread_default)
#define g_main_context_push_thread_default (*os_gnome_dl_g_main_context_push_thread_default)
#define g_main_context_unref (*os_gnome_dl_g_main_context_unref)
#define g_object_unref (*os_gnome_dl_g_object_unref)
#define g_source_attach (*os_gnome_dl_g_source_attach)
#define g_source_destroy (*os_gnome_dl_g_source_destroy)
#define g_source_set_callback (*os_gnome_dl_g_source_set_callback)
#define g_source_unref (*os_gnome_dl_g_source_unref)
#define g_strdup (*os_gnome_dl_g_strdup)
#define g_strdup_printf (*os_gnome_dl_g_strdup_printf)
#define g_string_append_printf (*os_gnome_dl_g_string_append_printf)
#define g_string_append_unichar (*os_gnome_dl_g_string_append_unichar)
#define g_string_free (*os_gnome_dl_g_string_free)
#define g_string_new (*os_gnome_dl_g_string_new)
#define g_strndup (*os_gnome_dl_g_strndup)
#define g_timeout_source_new (*os_gnome_dl_g_timeout_source_new)
#define g_unix_fd_list_get (*os_gnome_dl_g_unix_fd_list_get)
#define g_usleep (*os_gnome_dl_g_usleep)
#define g_variant_builder_add (*os_gnome_dl_g_variant_builder_add)
#define g_variant_builder_end (*os_gnome_dl_g_variant_builder_end)
#define g_variant_builder_init (*os_gnome_dl_g_variant_builder_init)
#define g_variant_get (*os_gnome_dl_g_variant_get)
#define g_variant_get_boolean (*os_gnome_dl_g_variant_get_boolean)
#define g_variant_get_child (*os_gnome_dl_g_variant_get_child)
#define g_variant_get_child_value (*os_gnome_dl_g_variant_get_child_value)
#define g_variant_get_int32 (*os_gnome_dl_g_variant_get_int32)
#define g_variant_get_string (*os_gnome_dl_g_variant_get_string)
#define g_variant_is_of_type (*os_gnome_dl_g_variant_is_of_type)
#define g_variant_iter_free (*os_gnome_dl_g_variant_iter_free)
#define g_variant_iter_init (*os_gnome_dl_g_variant_iter_init)
#define g_variant_iter_next (*os_gnome_dl_g_variant_iter_next)
#define g_variant_iter_next_value (*os_gnome_dl_g_variant_iter_next_value)
#define g_variant_lookup (*os_gnome_dl_g_variant_lookup)
#define g_variant_n_children (*os_gnome_dl_g_variant_n_children)
#define g_variant_new (*os_gnome_dl_g_variant_new)
#define g_variant_new_string (*os_gnome_dl_g_variant_new_string)
#define g_variant_new_uint32 (*os_gnome_dl_g_variant_new_uint32)
#define g_variant_ref_sink (*os_gnome_dl_g_variant_ref_sink)
#define g_variant_type_checked_ (*os_gnome_dl_g_variant_type_checked_)
#define g_variant_unref (*os_gnome_dl_g_variant_unref)
#define pw_context_connect (*os_gnome_dl_pw_context_connect)
#define pw_context_destroy (*os_gnome_dl_pw_context_destroy)
#define pw_context_new (*os_gnome_dl_pw_context_new)
#define pw_core_disconnect (*os_gnome_dl_pw_core_disconnect)
#define pw_init (*os_gnome_dl_pw_init)
#define pw_log_set_level (*os_gnome_dl_pw_log_set_level)
#define pw_properties_new (*os_gnome_dl_pw_properties_new)
#define pw_stream_add_listener (*os_gnome_dl_pw_stream_add_listener)
#define pw_stream_connect (*os_gnome_dl_pw_stream_connect)
#define pw_stream_dequeue_buffer (*os_gnome_dl_pw_stream_dequeue_buffer)
#define pw_stream_destroy (*os_gnome_dl_pw_stream_destroy)
#define pw_stream_disconnect (*os_gnome_dl_pw_stream_disconnect)
#define pw_stream_new (*os_gnome_dl_pw_stream_new)
#define pw_stream_queue_buffer (*os_gnome_dl_pw_stream_queue_buffer)
#define pw_stream_update_params (*os_gnome_dl_pw_stream_update_params)
#define pw_thread_loop_destroy (*os_gnome_dl_pw_thread_loop_destroy)
#define pw_thread_loop_get_loop (*os_gnome_dl_pw_thread_loop_get_loop)
#define pw_thread_loop_get_time (*os_gnome_dl_pw_thread_loop_get_time)
#define pw_thread_loop_lock (*os_gnome_dl_pw_thread_loop_lock)
#define pw_thread_loop_new (*os_gnome_dl_pw_thread_loop_new)
#define pw_thread_loop_signal (*os_gnome_dl_pw_thread_loop_signal)
#define pw_thread_loop_start (*os_gnome_dl_pw_thread_loop_start)
#define pw_thread_loop_stop (*os_gnome_dl_pw_thread_loop_stop)
#define pw_thread_loop_timed_wait_full (*os_gnome_dl_pw_thread_loop_timed_wait_full)
#define pw_thread_loop_unlock (*os_gnome_dl_pw_thread_loop_unlock)

#endif
