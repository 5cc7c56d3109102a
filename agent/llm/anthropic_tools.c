/* agent/llm/anthropic_tools — the Anthropic model table (see the header). */
#include <string.h>

#include "agent/llm/anthropic_tools.h"
#include "base/base.h"

#define TS ANTHROPIC_TOOL_TOOLSET
#define T1124 ANTHROPIC_TOOL_20251124
#define T0124 ANTHROPIC_TOOL_20250124

/*
 * Ids as the Claude API spells them (models overview, the SDK's Model type);
 * a dated id ("-20250929") matches its alias. Longer ids first: the lookup
 * takes the first row that matches, and "claude-sonnet-5" must not take
 * "claude-sonnet-5-5".
 */
static const struct row {
	const char *id;
	enum anthropic_tool tool;
	bool thinks, binds;
} rows[] = {
	{"claude-opus-5-5", TS, true, true},
	{"claude-sonnet-5-5", TS, true, true},
	{"claude-fable-5-1", TS, true, true},
	{"claude-mythos-5-1", TS, true, true},
	{"claude-fable-5", TS, true, false},
	{"claude-mythos-5", TS, true, false},
	{"claude-opus-5", TS, true, false},
	{"claude-sonnet-5", TS, true, false},
	{"claude-opus-4-8", TS, false, false},
	{"claude-opus-4-7", T1124, false, false},
	{"claude-opus-4-6", T1124, false, false},
	{"claude-opus-4-5", T1124, false, false},
	{"claude-sonnet-4-6", T1124, false, false},
	{"claude-sonnet-4-5", T0124, false, false},
	{"claude-haiku-4-5", T0124, false, false},
	{"claude-opus-4-1", T0124, false, false},
};

/* The alias itself, or the alias and "-" with an eight-digit date. */
static bool id_matches(const char *model, const char *id)
{
	size_t n = strlen(id);
	if (strncmp(model, id, n) != 0)
		return false;
	const char *rest = model + n;
	if (*rest == '\0')
		return true;
	if (*rest != '-' || strlen(rest + 1) != 8)
		return false;
	for (const char *p = rest + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

struct anthropic_model anthropic_model_lookup(const char *model)
{
	struct anthropic_model m = {.tool = ANTHROPIC_TOOL_NEWEST};
	for (size_t i = 0; model && i < sizeof(rows) / sizeof(rows[0]); i++)
		if (id_matches(model, rows[i].id)) {
			m.tool = rows[i].tool;
			m.known = true;
			m.thinks = rows[i].thinks;
			m.binds_thinking = rows[i].binds;
			break;
		}
	return m;
}

const char *const anthropic_tool_names[ANTHROPIC_TOOL_COUNT] = {
	[TS] = "toolset", [T1124] = "20251124", [T0124] = "20250124",
};
BASE_NAME_FUNCTIONS(enum anthropic_tool, anthropic_tool_names, anthropic_tool_parse,
                    anthropic_tool_name, "?")

/* What each version is on the wire: its tools[] type and beta header. */
static const struct {
	const char *type, *beta;
} versions[ANTHROPIC_TOOL_COUNT] = {
	[TS] = {"computer_toolset_20260801", NULL},
	[T1124] = {"computer_20251124", "computer-use-2025-11-24"},
	[T0124] = {"computer_20250124", "computer-use-2025-01-24"},
};

static bool valid(enum anthropic_tool t)
{
	return t > ANTHROPIC_TOOL_AUTO && t < ANTHROPIC_TOOL_COUNT;
}

const char *anthropic_tool_type(enum anthropic_tool t)
{
	return valid(t) ? versions[t].type : "?";
}

const char *anthropic_tool_beta(enum anthropic_tool t)
{
	return valid(t) ? versions[t].beta : NULL;
}

bool anthropic_tool_older(enum anthropic_tool t, enum anthropic_tool *out)
{
	if (!valid(t) || t == T0124)
		return false;
	*out = (enum anthropic_tool)(t + 1);
	return true;
}

bool anthropic_tool_refused(enum anthropic_tool t, const char *message)
{
	if (!valid(t) || !message)
		return false;
	const char *at = strstr(message, "does not support tool type");
	if (!at)
		return false;
	/* The refused type is named after the phrase; the accepted ones may
	 * follow ("Did you mean one of ..."), so only the part before them counts. */
	const char *end = strstr(at, "Did you mean");
	const char *hit = strstr(at, versions[t].type);
	return hit && (!end || hit < end);
}
