#!/usr/bin/env python3
"""Each of the console's defences has a test that fails without it: this
takes each defence out of the source in turn (a one-line mutation), builds,
runs the test that holds it and expects it to FAIL, then puts the source
back. Not registered in meson (it rebuilds the tree); run by hand:

    tests/console/mutate.py [NAME...]
"""
import subprocess, sys, os
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.chdir(TOP)
H = "agent/console/http.c"; C = "agent/console/console.c"; J = "agent/console/page/console.js"; T = "agent/ui/terminal_input.c"
M = [
 ("host allowlist", H, "\tif (host == NULL)\n\t\treturn false;\n\tchar want[128];", "\tif (host != NULL || host == NULL)\n\t\treturn true;\n\tchar want[128];", "test_console_http.Auth.test_forged_host_is_403"),
 ("exact Origin", H, "if (origin == NULL || strcmp(origin, own) != 0)", "if (0)", "test_console_http.StateChanges.test_forged_origin_is_403"),
 ("Origin null", H, "if (origin == NULL || strcmp(origin, own) != 0)", "if (origin != NULL && strcmp(origin, \"null\") != 0 && strcmp(origin, own) != 0)", "test_console_http.StateChanges.test_forged_origin_is_403"),
 ("CSRF header", H, "if (csrf == NULL || !same_secret(csrf, s->csrf))", "if (0)", "test_console_http.StateChanges.test_csrf_header_is_bound_to_the_session"),
 ("role", H, "if (s->role != ROLE_APPROVER)", "if (0)", "test_console_http.StateChanges.test_observer_cannot_answer_or_control"),
 ("JSON only", H, "if (type == NULL || strncmp(type, \"application/json\", 16) != 0 ||", "if (0 && (type == NULL) &&", "test_console_http.StateChanges.test_only_json_bodies"),
 ("413", H, "\t\tif (rq->body.len + *upload_data_size > CONSOLE_MAX_BODY)\n\t\t\trq->too_big = true;\n\t\telse\n\t\t\tagent_buf_append", "\t\tagent_buf_append", "test_console_http.StateChanges.test_oversized_body_is_413"),
 ("405", H, "if (strcmp(method, \"POST\") != 0)\n\t\treturn *why = \"state changes are POST only\", 405;", "", "test_console_http.StateChanges.test_get_on_a_state_changing_path_is_405"),
 ("token once", H, "same_secret(token, c->token[r]) && !c->token_used[r]", "same_secret(token, c->token[r])", "test_console_http.Auth.test_token_once_then_cookie_and_redirect"),
 ("rate limit", H, "\tif (!bad_budget_left(c)) {\n\t\tstatus = 429;\n\t} else {", "\tif (0) {\n\t} else {", "test_console_http.Auth.test_bad_tokens_are_rate_limited"),
 ("HttpOnly", H, "dh_s=%s; HttpOnly; SameSite=Strict; Path=/", "dh_s=%s; Path=/", "test_console_http.Auth.test_token_once_then_cookie_and_redirect"),
 ("security headers", H, "\tMHD_add_response_header(r, \"Content-Security-Policy\", CSP);", "", "test_console_http.Headers.test_every_response_has_the_security_headers"),
 ("nosniff/no-store", H, "\tMHD_add_response_header(r, \"X-Content-Type-Options\", \"nosniff\");\n\tMHD_add_response_header(r, \"Cache-Control\", \"no-store\");", "", "test_console_http.Headers.test_every_response_has_the_security_headers"),
 ("header count", H, "> CONSOLE_MAX_HEADERS)", "> 100000)", "test_console_http.StateChanges.test_too_many_headers"),
 ("loopback default", C, "snprintf(addr, addrlen, \"127.0.0.1\");", "snprintf(addr, addrlen, \"0.0.0.0\");", "test_console_http.Binding.test_loopback_by_default"),
 ("allow-remote", C, "if (remote && !cfg->allow_remote) {", "if (0) {", "test_console_http.Binding.test_non_loopback_needs_allow_remote"),
 ("stalled streams", H, "MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONSOLE_IDLE_SECONDS,", "MHD_OPTION_CONNECTION_TIMEOUT, 0u,", "test_console_http.Limits.test_a_stream_that_stops_reading_is_dropped_and_memory_stays_bounded"),
 ("constant time", H, "if (same_secret(cookie, c->sessions[i].id)) {", "if (strcmp(cookie, c->sessions[i].id) == 0) {", "test_console_http.Auth.test_comparisons_are_constant_time"),
 ("wrong token", H, "for (size_t i = 0; i < CONSOLE_TOKEN_HEX; i++)\n\t\tdiff", "for (size_t i = 0; i < 8; i++)\n\t\tdiff", "test_console_http.Auth.test_wrong_token_is_401"),
 ("no token", H, "\tif (role == ROLE_NONE)\n\t\treturn send_error(conn, 401, \"open the link deskhand printed\");", "\tif (role == ROLE_NONE) {\n\t\trole = ROLE_OBSERVER; s.role = ROLE_OBSERVER; s.csrf[0] = 0;\n\t}", "test_console_http.Auth.test_no_token_is_401"),
 ("tokens never logged", H, "\texplicit_bzero(cookie, sizeof(cookie));\n\treturn ret;", "\tfprintf(stderr, \"console: %s\\n\", cookie);\n\texplicit_bzero(cookie, sizeof(cookie));\n\treturn ret;", "test_console_http.Auth.test_tokens_and_cookies_never_logged"),
 ("first answer wins (console)", C, "if (!c->q_open || c->q_answered || qid != c->qid) {", "if (qid != c->qid) {", "test_console_http.Answers.test_terminal_first_then_the_console_is_told_and_refused"),
 ("end of input waits", T, "if (line == NULL && t->have_remote) {", "if (line == NULL && t->have_remote && 0) {", "test_console_http.Answers.test_end_of_input_waits_for_the_console"),
 ("textContent", J, "  if (text !== undefined) e.textContent = String(text);", "  if (text !== undefined) e.innerHTML = String(text);", "test_console_browser.Supervise.test_hostile_text_stays_text"),
 ("SameSite", H, "dh_s=%s; HttpOnly; SameSite=Strict; Path=/", "dh_s=%s; HttpOnly; Path=/", "test_console_http.Auth.test_token_once_then_cookie_and_redirect"),
 ("console answer wins", C, "\tconsole_won = c->q_answered;", "\tconsole_won = false;", "test_console_http.Answers.test_console_first_then_the_terminal_line_is_not_the_answer"),
 ("audit from", "agent/safety/gate.c", "\tagent_audit_answer_from(g->audit, agent_term_answered_from(g->term));\n\tswitch (a) {", "\tswitch (a) {", "test_console_http.Answers.test_console_first_then_the_terminal_line_is_not_the_answer"),
 ("Ctrl-C at a question", C, ".cancel = cfg->cancel,", ".cancel = NULL,", "test_console_tty.Tty.test_ctrl_c_at_a_question_is_a_no"),
]
only = sys.argv[1:]
env = dict(os.environ, PYTHONPATH=":".join(os.path.join(TOP, "tests", d) for d in ("lib", "console")), DESKHAND_BUILD=os.path.join(TOP, "build"))
for name, f, old, new, test in M:
    if only and name not in only: continue
    src = open(f).read()
    if old not in src:
        print("MISSING", name); continue
    open(f, "w").write(src.replace(old, new, 1))
    try:
        b = subprocess.run(["ninja", "-C", "build"], capture_output=True, text=True)
        if b.returncode != 0:
            print("BUILD FAIL", name, b.stdout[-500:]); continue
        r = subprocess.run([sys.executable, "-W", "ignore", "-m", "unittest", test], cwd="tests/console", env=env, capture_output=True, text=True, timeout=300)
        print(("FAILS-AS-IT-SHOULD" if r.returncode != 0 else "STILL-PASSES"), name, "::", test, flush=True)
    finally:
        open(f, "w").write(src)
subprocess.run(["ninja", "-C", "build"], capture_output=True)
