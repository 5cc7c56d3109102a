/* agent/tools/actions — names of the actions in the one table (actions.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "agent/tools/actions.h"

#define ACTION_NAME_(id, name, cls, desc) [AGENT_ACTION_##id] = name,
static const char *const names[AGENT_ACTION_COUNT] = {AGENT_ACTIONS(ACTION_NAME_)};

#define ACTION_LIST_(id, name, cls, desc) ", " name
static const char list[] = AGENT_ACTIONS(ACTION_LIST_);

bool agent_action_lookup(const char *name, agent_action *out)
{
	for (unsigned i = 0; name != NULL && i < AGENT_ACTION_COUNT; i++)
		if (strcmp(name, names[i]) == 0) {
			if (out != NULL)
				*out = (agent_action)i;
			return true;
		}
	return false;
}

const char *agent_action_name(agent_action a)
{
	return (unsigned)a < AGENT_ACTION_COUNT ? names[a] : "unknown";
}

const char *agent_action_list(void)
{
	return list + 2; /* past the first ", " */
}

bool agent_action_refuse(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return false;
}

cJSON *agent_action_drop(char *err, size_t len, cJSON *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	cJSON_Delete(o);
	return NULL;
}

bool agent_action_int(const cJSON *v, long min, long max, long *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return false;
	double d = v->valuedouble;
	if (d != floor(d) || d < (double)min || d > (double)max)
		return false;
	*out = (long)d;
	return true;
}

long agent_action_wheel_clicks(double px)
{
	long n = lround(fabs(px) / AGENT_ACTION_SCROLL_PX);
	return n < 1 ? 1 : n > 100 ? 100 : n;
}

const char *const agent_element_click_actions[] = {
	"left_click", "right_click", "middle_click", "double_click", "triple_click", "mouse_move",
	NULL,
};
