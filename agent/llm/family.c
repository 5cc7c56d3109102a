/* agent/llm/family — open model families by name (see the header). */
#include <ctype.h>
#include <string.h>

#include "agent/llm/family.h"

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

enum model_family model_family_of(const char *model)
{
	if (model == NULL)
		return MODEL_FAMILY_OTHER;
	const char *slash = strrchr(model, '/');
	const char *n = slash != NULL ? slash + 1 : model;
	if (starts(n, "ui-tars"))
		return MODEL_FAMILY_UITARS;
	if (starts(n, "qwen2.5-vl"))
		return MODEL_FAMILY_QWEN25_VL;
	if (starts(n, "qwen3-vl"))
		return MODEL_FAMILY_QWEN3_VL;
	if (starts(n, "qwen"))
		return MODEL_FAMILY_QWEN;
	return MODEL_FAMILY_OTHER;
}

const char *model_family_name(enum model_family f)
{
	switch (f) {
	case MODEL_FAMILY_QWEN: return "qwen";
	case MODEL_FAMILY_QWEN25_VL: return "qwen2.5-vl";
	case MODEL_FAMILY_QWEN3_VL: return "qwen3-vl";
	case MODEL_FAMILY_UITARS: return "ui-tars";
	case MODEL_FAMILY_OTHER: break;
	}
	return "other";
}

bool model_family_qwen(enum model_family f)
{
	return f == MODEL_FAMILY_QWEN || f == MODEL_FAMILY_QWEN25_VL || f == MODEL_FAMILY_QWEN3_VL;
}
