/*
 * os/image — the BGRX image os/ hands around (see os.h), and mapping the
 * pages of a fresh buffer in one call. Capture fills images, the PNG codec
 * reads and makes them: both use this file, neither the other.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#include "os/backend.h"

os_image *os_image_create(int width, int height)
{
	if (width <= 0 || height <= 0 || width > (INT32_MAX / 4) ||
	    (size_t)height > SIZE_MAX / ((size_t)width * 4)) {
		os_fail("bad image size %dx%d", width, height);
		return NULL;
	}
	os_image *img = calloc(1, sizeof(*img));
	if (img == NULL)
		goto oom;
	img->width = width;
	img->height = height;
	img->stride = width * 4;
	img->pixels = calloc((size_t)height, (size_t)img->stride);
	if (img->pixels == NULL) {
		free(img);
		goto oom;
	}
	return img;
oom:
	os_fail("out of memory for a %dx%d image", width, height);
	return NULL;
}

void os_image_destroy(os_image *img)
{
	if (img == NULL)
		return;
	free(img->pixels);
	free(img);
}

void os_mem_populate(const void *p, size_t len, bool write)
{
	if (len == 0)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(page - 1);
	uintptr_t e = (uintptr_t)p + len;
	/* Older kernels refuse: then the pages fault in one by one, as before. */
	madvise((void *)a, e - a, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}
