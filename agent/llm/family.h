/*
 * agent/llm/family — which family of open model a model name belongs to,
 * for what differs between them beyond the wire format: how the model
 * points at the screen (the session picks the screenshot size and the
 * coordinate grid from it, unless --grounding says otherwise), how it
 * calls the computer (Qwen's computer_use function, UI-TARS's text
 * actions) and what its prompt says.
 *
 * Names are matched case-insensitively on the part after the last '/'
 * (a Hugging Face id "Qwen/Qwen2.5-VL-7B-Instruct" or an Ollama tag
 * "qwen2.5vl:7b" alike), with or without the dash before "vl".
 */
#ifndef DESKHAND_AGENT_FAMILY_H
#define DESKHAND_AGENT_FAMILY_H

#include <stdbool.h>

enum model_family {
	MODEL_FAMILY_OTHER,     /* deskhand's own computer tool, image pixels */
	MODEL_FAMILY_QWEN,      /* qwen* (other than below): Qwen's computer_use */
	MODEL_FAMILY_QWEN25_VL, /* qwen2.5-vl*: computer_use, smart-resize pixels (min 3136) */
	MODEL_FAMILY_QWEN3_VL,  /* qwen3-vl*: computer_use, relative 0..999 */
	MODEL_FAMILY_UITARS,    /* ui-tars*: text actions, smart-resize pixels (min 78,400) */
};

enum model_family model_family_of(const char *model);
/* "other", "qwen", "qwen2.5-vl", "qwen3-vl", "ui-tars". */
const char *model_family_name(enum model_family f);
/* Whether the family calls Qwen's computer_use function. */
bool model_family_qwen(enum model_family f);

#endif
