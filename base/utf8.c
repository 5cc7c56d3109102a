/* base/utf8 — the strict UTF-8 decoder and the encoder; see base.h. */
#include "base/base.h"

size_t base_utf8_next(const char *str, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	if (n == 0)
		return 0;
	unsigned c = s[0];
	uint32_t v, min;
	size_t len;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		v = c & 0x1f, len = 2, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		v = c & 0x0f, len = 3, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		v = c & 0x07, len = 4, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[k] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

int base_utf8_encode(uint32_t cp, char buf[4])
{
	if (cp < 0x80) {
		buf[0] = (char)cp;
		return 1;
	} else if (cp < 0x800) {
		buf[0] = (char)(0xc0 | (cp >> 6));
		buf[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	} else if (cp < 0x10000) {
		buf[0] = (char)(0xe0 | (cp >> 12));
		buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	buf[0] = (char)(0xf0 | (cp >> 18));
	buf[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	buf[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	buf[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}
