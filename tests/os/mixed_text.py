"""The mixed text the typing test and bench/typing type: ASCII, Latin-1,
Greek, Cyrillic, CJK, emoji beyond the BMP, tabs, newlines and shell
metacharacters. Deterministic, so failures can be replayed."""

PIECES = [
    "The quick brown fox jumps over the lazy dog 0123456789.",
    "$(rm -rf /) `id` 'single' \"double\" ;|&<>*?~ #!{}[]^%=+\\",
    "Café déjà vu, naïve façade, Straße, Ærø, Ñandú, ¿qué? ¡sí! «»°±²³µ¶·",
    "Ελληνικά: Γειά σου Κόσμε, αβγδεζηθικλμνξοπρστυφχψω ΑΒΓΔ",
    "Русский: Съешь же ещё этих мягких французских булок, да выпей чаю. ЁЖЩ",
    "中文：你好，世界！日本語：こんにちは、カタカナ。한국어: 안녕하세요",
    "Emoji: 😀🎉🚀💡🔥👍🏽🧪🐍 and ✓ ✗ → ← ∞ ≠ ≤ ≥ € £ ¥",
    "\ttabbed\tcolumns\there",
    "Mixed: aΩб中😀 x²+y²=z² — “quotes” ‘single’ … •",
]


def mixed_text(length=1000):
    """About `length` characters, ending with a newline."""
    out = []
    n = 0
    i = 0
    while n < length:
        line = PIECES[i % len(PIECES)]
        if i >= len(PIECES):
            line = "%d: %s" % (i, line)
        out.append(line + "\n")
        n += len(line) + 1
        i += 1
    return "".join(out)


if __name__ == "__main__":
    import sys
    t = mixed_text(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
    sys.stdout.write(t)
