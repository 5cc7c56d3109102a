/*
 * PNG. Even first byte: an image made from the input (size, stride padding,
 * pixels, encoder level and filters taken from it) is encoded and decoded
 * again, and every pixel comes back (the X byte is not stored). Odd first
 * byte: the rest is decoded as a PNG file, which either fails cleanly or
 * gives an image of sane size.
 */
#include <string.h>

#include "fuzz.h"
#include "os/os.h"

static const int filters[] = {
	-1, OS_PNG_FILTER_NONE, OS_PNG_FILTER_SUB, OS_PNG_FILTER_UP, OS_PNG_FILTER_AVG,
	OS_PNG_FILTER_PAETH, OS_PNG_FILTER_ALL, OS_PNG_FILTER_SUB | OS_PNG_FILTER_PAETH,
};

static void round_trip(const uint8_t *data, size_t size)
{
	if (size < 6)
		return;
	int w = 1 + data[1] % 300, h = 1 + data[2] % 200, pad = data[3] % 4;
	os_png_options opt = {.level = -1 + data[4] % 11, .filter = filters[data[5] % 8]};
	data += 6;
	size -= 6;
	os_image img = {.width = w, .height = h, .stride = w * 4 + pad * 4};
	size_t bytes = (size_t)img.stride * (size_t)h;
	img.pixels = malloc(bytes);
	if (img.pixels == NULL)
		return;
	/* The input's bytes repeated, so small inputs still fill big images. */
	for (size_t i = 0; i < bytes; i++)
		img.pixels[i] = size ? data[i % size] : (uint8_t)i;
	uint8_t *png = NULL;
	size_t len = 0;
	fuzz_check(os_png_encode(&img, &png, &len, &opt), "encode %dx%d: %s", w, h, os_error());
	os_image *back = os_png_decode(png, len);
	fuzz_check(back != NULL, "decode of our own %dx%d PNG: %s", w, h, os_error());
	fuzz_check(back->width == w && back->height == h, "size %dx%d became %dx%d", w, h,
	           back->width, back->height);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const uint8_t *a = img.pixels + (size_t)y * (size_t)img.stride + (size_t)x * 4;
			const uint8_t *b = back->pixels + (size_t)y * (size_t)back->stride + (size_t)x * 4;
			fuzz_check(memcmp(a, b, 3) == 0, "pixel %d,%d of %dx%d (level %d filter %d)",
			           x, y, w, h, opt.level, opt.filter);
		}
	os_image_destroy(back);
	free(png);
	free(img.pixels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0) {
		round_trip(data, size);
		return 0;
	}
	os_image *img = os_png_decode(data + 1, size - 1);
	if (img != NULL) {
		fuzz_check(img->width >= 1 && img->height >= 1 && img->width <= 16384 &&
		           img->height <= 16384 && img->stride >= img->width * 4, "decoded %dx%d",
		           img->width, img->height);
		os_image_destroy(img);
	} else {
		fuzz_check(os_error()[0] != '\0', "refused without a message");
	}
	return 0;
}
