/* agent/llm/family — open model families by name (see the header). */
#include <ctype.h>
#include <string.h>

#include "agent/llm/family.h"
#include "base/base.h"

/* name starts with `prefix`, where a '-' in the prefix may also be absent. */
static bool starts(const char *name, const char *prefix)
{
	for (; *prefix; prefix++) {
		if (*prefix == '-' && *name != '-')
			continue;
		if (tolower((unsigned char)*name) != *prefix)
			return false;
		name++;
	}
	return true;
}

/*
 * The families' names, which are also the prefixes of their models' names.
 * A family comes after any whose prefix starts its own ("qwen" before
 * "qwen2.5-vl"): model_family_of tries the last first.
 */
static const char *const family_names[] = {
	[MODEL_FAMILY_OTHER] = "other",
	[MODEL_FAMILY_QWEN] = "qwen",
	[MODEL_FAMILY_QWEN25_VL] = "qwen2.5-vl",
	[MODEL_FAMILY_QWEN3_VL] = "qwen3-vl",
	[MODEL_FAMILY_UITARS] = "ui-tars",
};

enum model_family model_family_of(const char *model)
{
	if (model == NULL)
		return MODEL_FAMILY_OTHER;
	const char *slash = strrchr(model, '/');
	const char *n = slash != NULL ? slash + 1 : model;
	for (int f = (int)BASE_COUNT(family_names) - 1; f > MODEL_FAMILY_OTHER; f--)
		if (starts(n, family_names[f]))
			return (enum model_family)f;
	return MODEL_FAMILY_OTHER;
}

const char *model_family_name(enum model_family f)
{
	return base_name_of(BASE_NAMES(family_names), (int)f, "other");
}

bool model_family_qwen(enum model_family f)
{
	return f == MODEL_FAMILY_QWEN || f == MODEL_FAMILY_QWEN25_VL || f == MODEL_FAMILY_QWEN3_VL;
}
