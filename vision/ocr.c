/*
 * vision/ocr — finding text on the screen with Tesseract, locally.
 *
 * The image is turned to grey, enlarged (screen fonts are small for
 * Tesseract) and recognised in sparse-text mode; when nothing matches,
 * again with every text made dark on white whatever the theme (ocr-prep.c).
 * The result is read back symbol by symbol so that a match inside a longer
 * word ("Save" in "Save...") gets the box of its own letters. Matching is
 * done here, not by Tesseract: case-folded code points within one line, a
 * space in the query matching the gap between two words.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "config.h"
#include "vision/vision-internal.h"

void vision_matches_free(vision_match *m, size_t count)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < count; i++)
		free(m[i].text);
	free(m);
}

static bool find_on_capture(os_display *d, const os_rect *r, const char *text,
                            vision_match **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	if (!vision_ocr_available())  /* the reason, before touching the display */
		return vision_ocr_find(NULL, text, 0, out, count);
	os_image *img = os_capture(d, r);
	if (img == NULL)
		return vision_fail_os("OCR: capture failed");
	bool ok = vision_ocr_find(img, text, 0, out, count);
	os_image_destroy(img);
	return ok;
}

bool vision_ocr_find_screen(os_display *d, const os_rect *region,
                            const char *text, vision_match **out, size_t *count)
{
	if (!find_on_capture(d, region, text, out, count))
		return false;
	int ox = region ? region->x : 0, oy = region ? region->y : 0;
	for (size_t i = 0; i < *count; i++) {
		(*out)[i].x += ox;
		(*out)[i].y += oy;
	}
	return true;
}

bool vision_ocr_find_view(os_display *d, const vision_view *view,
                          const char *text, vision_match **out, size_t *count)
{
	if (view == NULL || view->model_w <= 0 || view->screen_w <= 0)
		return vision_fail("find_text: no screenshot was taken yet");
	os_rect r = {view->screen_x, view->screen_y, view->screen_w, view->screen_h};
	if (!find_on_capture(d, &r, text, out, count))
		return false;
	for (size_t i = 0; i < *count; i++) {
		vision_match *m = &(*out)[i];
		/* corners: first and last screen pixel of the box -> model pixels */
		int x0, y0, x1, y1;
		vision_screen_to_model(view, r.x + m->x, r.y + m->y, &x0, &y0);
		vision_screen_to_model(view, r.x + m->x + m->width - 1,
		                       r.y + m->y + m->height - 1, &x1, &y1);
		m->x = x0;
		m->y = y0;
		m->width = x1 - x0 + 1;
		m->height = y1 - y0 + 1;
	}
	return true;
}

#if DESKHAND_HAVE_OCR

#include <locale.h>
#include <tesseract/capi.h>
#include <wctype.h>

/*
 * Tesseract is loaded when OCR is first used, not at start-up: with its
 * dependencies (Leptonica, libstdc++, OpenMP, ICU, image codecs) it is most
 * of the shared libraries deskhand would otherwise map for every command,
 * and `deskhand --version` or a click should not pay for them. The header
 * gives the types; each function is looked up once.
 */
#define OCR_FUNCS(X, p) \
	X(p, TessBaseAPICreate) X(p, TessBaseAPIDelete) X(p, TessBaseAPIEnd) \
	X(p, TessBaseAPIGetIterator) X(p, TessBaseAPIInit3) X(p, TessBaseAPIRecognize) \
	X(p, TessBaseAPISetImage) X(p, TessBaseAPISetPageSegMode) \
	X(p, TessBaseAPISetSourceResolution) X(p, TessBaseAPISetVariable) X(p, TessDeleteText) \
	X(p, TessPageIteratorBoundingBox) X(p, TessPageIteratorIsAtBeginningOf) \
	X(p, TessResultIteratorConfidence) X(p, TessResultIteratorDelete) \
	X(p, TessResultIteratorGetPageIteratorConst) X(p, TessResultIteratorGetUTF8Text) \
	X(p, TessResultIteratorNext)

OCR_FUNCS(BASE_DLIB_STATIC, p_)
static const base_dlib_sym ocr_syms[] = { OCR_FUNCS(BASE_DLIB_SYM, p_) };
static void *ocr_handle;
static const base_dlib ocr_lib = BASE_DLIB(DESKHAND_TESSERACT_SONAME, "tesseract-ocr",
                                           &ocr_handle, ocr_syms);

/*
 * Debian's Tesseract runs its LSTM on four OpenMP threads that spin while
 * waiting. On a small, busy machine that costs ten times the single-thread
 * time (measured: 12.5 s instead of 1.2 s for a 1920x1080 screen on two
 * shared cores). Making every parallel region inactive (max active levels
 * 0) keeps it on one thread; found through the library's own dependencies
 * so that a Tesseract built without OpenMP needs nothing. A user who sets
 * OMP_THREAD_LIMIT or OMP_NUM_THREADS keeps their choice.
 */
static void ocr_single_thread(void)
{
	if (getenv("OMP_THREAD_LIMIT") != NULL || getenv("OMP_NUM_THREADS") != NULL)
		return;
	void (*set_levels)(int) = (void (*)(int))base_dlib_symbol(&ocr_lib, "omp_set_max_active_levels");
	if (set_levels != NULL)
		set_levels(0);
}

/* Loads Tesseract once; false with vision_error() when it is missing. */
static bool ocr_load(void)
{
	if (!base_dlib_load(&ocr_lib))
		return vision_fail("OCR: %s", base_error());
	return true;
}

#define TessBaseAPICreate (*p_TessBaseAPICreate)
#define TessBaseAPIDelete (*p_TessBaseAPIDelete)
#define TessBaseAPIEnd (*p_TessBaseAPIEnd)
#define TessBaseAPIGetIterator (*p_TessBaseAPIGetIterator)
#define TessBaseAPIInit3 (*p_TessBaseAPIInit3)
#define TessBaseAPIRecognize (*p_TessBaseAPIRecognize)
#define TessBaseAPISetImage (*p_TessBaseAPISetImage)
#define TessBaseAPISetPageSegMode (*p_TessBaseAPISetPageSegMode)
#define TessBaseAPISetSourceResolution (*p_TessBaseAPISetSourceResolution)
#define TessBaseAPISetVariable (*p_TessBaseAPISetVariable)
#define TessDeleteText (*p_TessDeleteText)
#define TessPageIteratorBoundingBox (*p_TessPageIteratorBoundingBox)
#define TessPageIteratorIsAtBeginningOf (*p_TessPageIteratorIsAtBeginningOf)
#define TessResultIteratorConfidence (*p_TessResultIteratorConfidence)
#define TessResultIteratorDelete (*p_TessResultIteratorDelete)
#define TessResultIteratorGetPageIteratorConst (*p_TessResultIteratorGetPageIteratorConst)
#define TessResultIteratorGetUTF8Text (*p_TessResultIteratorGetUTF8Text)
#define TessResultIteratorNext (*p_TessResultIteratorNext)

bool vision_ocr_available(void)
{
	return ocr_load();
}

/* ---- UTF-8 and case folding ------------------------------------------- */

/* Simple case folding through the C.UTF-8 locale (ASCII when unavailable). */
static uint32_t fold(uint32_t c, locale_t loc)
{
	if (c < 0x80)
		return (c >= 'A' && c <= 'Z') ? c + 32 : c;
	if (loc == (locale_t)0)
		return c;
	return (uint32_t)towlower_l((wint_t)c, loc);
}

static bool is_space(uint32_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f' || c == 0xa0;
}

static bool is_word_char(uint32_t c, locale_t loc)
{
	if (c < 0x80)
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		       (c >= 'A' && c <= 'Z') || c == '_';
	return loc == (locale_t)0 || iswalnum_l((wint_t)c, loc);
}

/* ---- recognised lines ------------------------------------------------- */

typedef struct ocr_char {
	uint32_t cp, folded;
	int x0, y0, x1, y1;    /* box; x1 < 0 for the gap between words */
	int word;              /* index into the word confidences */
} ocr_char;

typedef struct ocr_text {
	ocr_char *chars;
	size_t n, cap;
	size_t *line_start;    /* index of each line's first char */
	size_t lines, lines_cap;
	float *conf;           /* per word */
	size_t words, words_cap;
} ocr_text;

static void text_free(ocr_text *t)
{
	free(t->chars);
	free(t->line_start);
	free(t->conf);
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (q == NULL)
		return vision_fail("out of memory");
	*p = q;
	*cap = n;
	return true;
}

static bool push_char(ocr_text *t, ocr_char c)
{
	if (!grow((void **)&t->chars, &t->cap, t->n + 1, sizeof(ocr_char)))
		return false;
	t->chars[t->n++] = c;
	return true;
}

/* Reads the recognition result symbol by symbol into lines of chars. */
static bool text_read(TessBaseAPI *api, ocr_text *t, locale_t loc)
{
	TessResultIterator *it = TessBaseAPIGetIterator(api);
	if (it == NULL)
		return true;  /* nothing recognised */
	const TessPageIterator *pit = TessResultIteratorGetPageIteratorConst(it);
	bool ok = true;
	do {
		char *sym = TessResultIteratorGetUTF8Text(it, RIL_SYMBOL);
		if (sym == NULL)
			continue;
		int x0, y0, x1, y1;
		if (!TessPageIteratorBoundingBox(pit, RIL_SYMBOL, &x0, &y0, &x1, &y1)) {
			TessDeleteText(sym);
			continue;
		}
		bool new_line = t->lines == 0 ||
		                TessPageIteratorIsAtBeginningOf(pit, RIL_TEXTLINE);
		bool new_word = new_line || t->words == 0 ||
		                TessPageIteratorIsAtBeginningOf(pit, RIL_WORD);
		if (new_line) {
			ok = grow((void **)&t->line_start, &t->lines_cap, t->lines + 1,
			          sizeof(size_t));
			if (ok)
				t->line_start[t->lines++] = t->n;
		} else if (new_word) {
			ok = push_char(t, (ocr_char){' ', ' ', 0, 0, -1, -1, -1});
		}
		if (ok && new_word) {
			ok = grow((void **)&t->conf, &t->words_cap, t->words + 1,
			          sizeof(float));
			if (ok)
				t->conf[t->words++] = TessResultIteratorConfidence(it, RIL_WORD);
		}
		const unsigned char *s = (const unsigned char *)sym;
		size_t n = strlen(sym);
		while (ok && n > 0) {
			uint32_t cp;
			size_t len = base_utf8_next((const char *)s, n, &cp);
			if (len == 0) {
				cp = 0xfffd;
				len = 1;
			}
			ok = push_char(t, (ocr_char){cp, fold(cp, loc), x0, y0, x1, y1,
			                             (int)t->words - 1});
			s += len;
			n -= len;
		}
		TessDeleteText(sym);
	} while (ok && TessResultIteratorNext(it, RIL_SYMBOL));
	TessResultIteratorDelete(it);
	return ok;
}

/* ---- matching --------------------------------------------------------- */

/* The query as folded code points, white space runs collapsed to ' '. */
static uint32_t *query_fold(const char *text, size_t *qn, locale_t loc)
{
	size_t n = strlen(text);
	uint32_t *q = malloc(sizeof(uint32_t) * (n + 1));
	if (q == NULL) {
		vision_fail("out of memory");
		return NULL;
	}
	const unsigned char *s = (const unsigned char *)text;
	size_t k = 0;
	while (n > 0) {
		uint32_t cp;
		size_t len = base_utf8_next((const char *)s, n, &cp);
		if (len == 0) {
			free(q);
			vision_fail("the text to find is not valid UTF-8");
			return NULL;
		}
		s += len;
		n -= len;
		if (is_space(cp)) {
			if (k > 0 && q[k - 1] != ' ')
				q[k++] = ' ';
			continue;
		}
		q[k++] = fold(cp, loc);
	}
	while (k > 0 && q[k - 1] == ' ')
		k--;
	if (k == 0) {
		free(q);
		vision_fail("the text to find is empty");
		return NULL;
	}
	*qn = k;
	return q;
}

typedef struct match_list {
	vision_match *m;
	size_t n, cap;
} match_list;

static bool add_match(match_list *l, const ocr_text *t, size_t s, size_t e,
                      int upscale, bool whole_words)
{
	int x0 = 0, y0 = 0, x1 = -1, y1 = -1;
	double conf = 0;
	int words = 0, last_word = -1;
	char *txt = malloc((e - s) * 4 + 1);
	if (txt == NULL)
		return vision_fail("out of memory");
	size_t tl = 0;
	for (size_t i = s; i < e; i++) {
		const ocr_char *c = &t->chars[i];
		tl += (size_t)base_utf8_encode(c->cp, txt + tl);
		if (c->x1 < 0)
			continue;
		if (x1 < 0) {
			x0 = c->x0, y0 = c->y0, x1 = c->x1, y1 = c->y1;
		} else {
			if (c->x0 < x0) x0 = c->x0;
			if (c->y0 < y0) y0 = c->y0;
			if (c->x1 > x1) x1 = c->x1;
			if (c->y1 > y1) y1 = c->y1;
		}
		if (c->word != last_word) {
			conf += t->conf[c->word];
			words++;
			last_word = c->word;
		}
	}
	txt[tl] = '\0';
	if (!grow((void **)&l->m, &l->cap, l->n + 1, sizeof(vision_match))) {
		free(txt);
		return false;
	}
	vision_match *m = &l->m[l->n++];
	m->x = x0 / upscale;
	m->y = y0 / upscale;
	m->width = (x1 + upscale - 1) / upscale - m->x;
	m->height = (y1 + upscale - 1) / upscale - m->y;
	m->confidence = words ? (float)(conf / words) : 0.0f;
	m->whole_words = whole_words;
	m->text = txt;
	return true;
}

static int match_cmp(const void *a, const void *b)
{
	const vision_match *x = a, *y = b;
	if (x->whole_words != y->whole_words)
		return x->whole_words ? -1 : 1;
	/* confidences differing by less than a point count as equal, so that
	 * reading order decides between two clean matches */
	float d = x->confidence - y->confidence;
	if (d >= 1.0f || d <= -1.0f)
		return d > 0 ? -1 : 1;
	if (x->y != y->y)
		return x->y < y->y ? -1 : 1;
	return (x->x > y->x) - (x->x < y->x);
}

static bool find_all(const ocr_text *t, const uint32_t *q, size_t qn,
                     int upscale, locale_t loc, match_list *out)
{
	for (size_t li = 0; li < t->lines; li++) {
		size_t ls = t->line_start[li];
		size_t le = li + 1 < t->lines ? t->line_start[li + 1] : t->n;
		for (size_t s = ls; s + qn <= le;) {
			size_t k = 0;
			while (k < qn && t->chars[s + k].folded == q[k])
				k++;
			if (k < qn) {
				s++;
				continue;
			}
			bool starts = s == ls || !is_word_char(t->chars[s - 1].cp, loc);
			bool ends = s + qn == le || !is_word_char(t->chars[s + qn].cp, loc);
			if (!add_match(out, t, s, s + qn, upscale, starts && ends))
				return false;
			s += qn;
		}
	}
	return true;
}

/* ---- the engine ------------------------------------------------------- */

/* Recognises grey (gw x gh, enlarged upscale times) and adds the matches
 * of q to *l; false with vision_error() set. */
static bool recognise(TessBaseAPI *api, const uint8_t *grey, int gw, int gh,
                      int upscale, const uint32_t *q, size_t qn, locale_t loc,
                      match_list *l)
{
	TessBaseAPISetImage(api, grey, gw, gh, 1, gw);
	TessBaseAPISetSourceResolution(api, 96 * upscale);
	if (TessBaseAPIRecognize(api, NULL) != 0)
		return vision_fail("OCR: Tesseract failed to recognise the image");
	ocr_text t = {0};
	bool ok = text_read(api, &t, loc) && find_all(&t, q, qn, upscale, loc, l);
	text_free(&t);
	return ok;
}

bool vision_ocr_find(const os_image *img, const char *text, int upscale,
                     vision_match **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	if (upscale <= 0)  /* HiDPI screens already draw text large */
		upscale = img->height > 1600 ? 1 : 2;
	if (upscale > 4)
		return vision_fail("OCR: enlargement %d is too large (1..4)", upscale);
	if (img->width <= 0 || img->height <= 0)
		return vision_fail("OCR: empty image");
	bool ok = false;
	locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	size_t qn = 0;
	uint32_t *q = query_fold(text, &qn, loc);
	if (q == NULL)
		goto out_locale;
	int gw, gh;
	uint8_t *grey = vision_ocr_grey(img, upscale, &gw, &gh);
	if (grey == NULL)
		goto out_query;
	if (!ocr_load())
		goto out_grey;
	ocr_single_thread();
	TessBaseAPI *api = TessBaseAPICreate();
	if (api == NULL) {
		vision_fail("OCR: cannot create a Tesseract instance");
		goto out_grey;
	}
	/* Tesseract reports on stderr by default; library code must not print. */
	TessBaseAPISetVariable(api, "debug_file", "/dev/null");
	if (TessBaseAPIInit3(api, NULL, "eng") != 0) {
		vision_fail("OCR: Tesseract could not load its English data (install "
		            "tesseract-ocr-eng, or set TESSDATA_PREFIX to the folder "
		            "holding eng.traineddata)");
		goto out_api;
	}
	TessBaseAPISetVariable(api, "debug_file", "/dev/null");
	TessBaseAPISetPageSegMode(api, PSM_SPARSE_TEXT);
	match_list l = {0};
	bool read = recognise(api, grey, gw, gh, upscale, q, qn, loc, &l);
	if (read && l.n == 0) {
		/* Nothing on the plain grey image: the one where every text is
		 * dark on white (dark themes, coloured buttons). Not first: on a
		 * light screen the plain image still reads a few layouts better
		 * (a glyph touching a window's edge), and costs one pass. */
		free(grey);
		grey = vision_ocr_prepare(img, upscale, &gw, &gh);
		read = grey != NULL && recognise(api, grey, gw, gh, upscale, q, qn, loc, &l);
	}
	if (!read) {
		vision_matches_free(l.m, l.n);
		goto out_end;
	}
	if (l.n > 1)
		qsort(l.m, l.n, sizeof(vision_match), match_cmp);
	*out = l.m;
	*count = l.n;
	ok = true;
out_end:
	TessBaseAPIEnd(api);
out_api:
	TessBaseAPIDelete(api);
out_grey:
	free(grey);
out_query:
	free(q);
out_locale:
	if (loc != (locale_t)0)
		freelocale(loc);
	return ok;
}

#else /* !DESKHAND_HAVE_OCR */

bool vision_ocr_available(void)
{
	return false;
}

bool vision_ocr_find(const os_image *img, const char *text, int upscale,
                     vision_match **out, size_t *count)
{
	(void)img;
	(void)text;
	(void)upscale;
	*out = NULL;
	*count = 0;
	return vision_fail("OCR is not built in: install libtesseract-dev, "
	                   "libleptonica-dev and tesseract-ocr-eng, then run "
	                   "meson setup --reconfigure -Docr=enabled build");
}

#endif
