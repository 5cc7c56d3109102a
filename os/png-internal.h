/*
 * Private to os/png.c and os/png-bands.c: the band compressor the PNG
 * encoder hands an image to. Never included elsewhere.
 */
#ifndef DESKHAND_OS_PNG_INTERNAL_H
#define DESKHAND_OS_PNG_INTERNAL_H

#include <zlib.h>

#include "os/backend.h"

/* Parallel compression: at most this many threads, four bands each. */
#define OS_PNG_MAX_THREADS 8
#define OS_PNG_MAX_BANDS (OS_PNG_MAX_THREADS * 4)

/*
 * The image is cut into horizontal bands compressed in parallel, the way
 * pigz does it: each band is a raw deflate stream ending on a byte boundary
 * (Z_SYNC_FLUSH), primed with the last 32 KiB of the previous band's
 * filtered bytes as its dictionary so that matches across the cut are not
 * lost; the bands are then concatenated into one zlib stream whose Adler-32
 * is combined from the bands'. Filtering reads the BGRX rows directly (the
 * row above a band's first row comes from the image itself), so bands are
 * independent; only the filtered bytes of the band at hand are buffered,
 * the image itself is never copied.
 */
struct os_png_band {
	const os_image *img;
	int y0, y1;             /* rows [y0, y1) */
	int level, strategy, filter;
	bool last;
	uint8_t *out;           /* raw deflate bytes */
	size_t out_len, out_cap;
	uLong adler;            /* of the filtered bytes, from adler32(0,0,0) */
	size_t in_len;
	const char *error;      /* static text; NULL: fine */
	bool fresh;             /* rows just written by another process */
};

/*
 * How many bands to cut img into (1..OS_PNG_MAX_BANDS, each at least 32
 * rows where the image has them), and in *threads how many threads
 * compress them.
 */
int os_png_band_count(const os_image *img, int *threads);
/*
 * Compresses bands[0..nb) on nt threads, each band's output into its own
 * .out (the caller frees it), its failure in its .error. With a feed the
 * rows arrive as the feed delivers them (see os_png_feed). False only when
 * the feed failed.
 */
bool os_png_bands_compress(struct os_png_band *bands, int nb, int nt,
                           os_png_feed *feed);

#endif
