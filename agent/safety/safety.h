/*
 * agent/safety — the safety layer, the door of the room.
 *
 * Does: decides, records and enforces what runs. The policy (policy.h) is
 * a pure function from settings, scan findings and the kill switch to RUN,
 * ASK or BLOCK; the scanner (scan.h) flags dangerous code with PCRE2 rules;
 * the audit log (audit.h) records every proposal and decision, fsync'ed
 * before anything runs; the gate (gate.h) is the one path from a tool call
 * to the machine.
 * Owns: the scanner's rules (rules/), the audit log file, the code
 * sessions (inside the gate's private state).
 * May call: agent/tools (the proposals, and the runner's side door),
 * agent/ui (to ask), agent/util, base/, executors/ (code runs), os/ (the
 * pointer, for the kill switch while code runs).
 */
#ifndef DESKHAND_AGENT_SAFETY_H
#define DESKHAND_AGENT_SAFETY_H

#include "agent/safety/audit.h"
#include "agent/safety/gate.h"
#include "agent/safety/policy.h"
#include "agent/safety/scan.h"

#endif
