/*
 * Unit tests of base/dlib: a library named by soname is loaded only when
 * asked (not before), its table filled so that calls through it reach the
 * library, loaded once; a missing library or a missing function leaves
 * the table unloaded and a reason naming the soname, the package and the
 * function. zlib stands in for the libraries deskhand loads so: this test
 * does not link it.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "base/base.h"

#define Z_FUNCS(X, p) X(p, zlibVersion) X(p, crc32)
Z_FUNCS(BASE_DLIB_STATIC, t_dl_)
static const base_dlib_sym z_syms[] = { Z_FUNCS(BASE_DLIB_SYM, t_dl_) };
static void *z_handle;
static const base_dlib z_lib = BASE_DLIB("libz.so.1", "zlib1g", &z_handle, z_syms);

static void test_loads_on_demand(void **state)
{
	(void)state;
	assert_null(dlopen("libz.so.1", RTLD_NOW | RTLD_NOLOAD));
	assert_false(base_dlib_loaded(&z_lib));
	assert_null(base_dlib_symbol(&z_lib, "crc32"));
	assert_true(base_dlib_load(&z_lib));
	assert_true(base_dlib_loaded(&z_lib));
	assert_string_equal((*t_dl_zlibVersion)(), ZLIB_VERSION);
	assert_int_equal((*t_dl_crc32)(0, (const Bytef *)"abc", 3), 0x352441c2);
	void *first = z_handle;
	assert_true(base_dlib_load(&z_lib));
	assert_ptr_equal(z_handle, first);
	assert_ptr_equal(base_dlib_symbol(&z_lib, "crc32"), (void *)t_dl_crc32);
	assert_null(base_dlib_symbol(&z_lib, "no_such_function_here"));
}

static void test_missing_library(void **state)
{
	(void)state;
	static void *handle;
	static int (*fn)(void);
	static const base_dlib_sym syms[] = { { "whatever", (void **)&fn } };
	static const base_dlib lib = BASE_DLIB("libdeskhand-absent.so.9", "deskhand-absent",
	                                       &handle, syms);
	assert_false(base_dlib_load(&lib));
	assert_false(base_dlib_loaded(&lib));
	assert_null(fn);
	assert_non_null(strstr(base_error(), "cannot load libdeskhand-absent.so.9 (install deskhand-absent)"));
}

static void test_missing_function(void **state)
{
	(void)state;
	static void *handle;
	static uLong (*crc)(uLong, const Bytef *, uInt);
	static void (*absent)(void);
	static const base_dlib_sym syms[] = {
		{ "crc32", (void **)&crc }, { "zlib_has_no_such_function", (void **)&absent },
	};
	static const base_dlib lib = BASE_DLIB("libz.so.1", "zlib1g", &handle, syms);
	assert_false(base_dlib_load(&lib));
	assert_false(base_dlib_loaded(&lib));
	assert_null(handle);
	assert_string_equal(base_error(), "libz.so.1 lacks zlib_has_no_such_function");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_on_demand),
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_missing_function),
	};
	return cmocka_run_group_tests_name("base-dlib", tests, NULL, NULL);
}
