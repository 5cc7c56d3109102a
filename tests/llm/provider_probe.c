/*
 * provider_probe — drives one model turn through the real provider code,
 * for the integration tests: loads (or starts) a conversation, appends the
 * user messages and tool results given on the command line, saves, performs
 * one turn against the configured endpoint (usually tests/fake_llm), prints
 * every event as one JSON line on stdout and saves the conversation again.
 *
 *   provider_probe --provider openai|anthropic|ollama|script
 *       [--base URL] [--api-key KEY] [--model NAME] [--script FILE]
 *       --conversation FILE
 *       [--user TEXT] [--result ID TEXT] [--error-result ID TEXT]
 *       [--image PNG WxH]       attach a screenshot to the last result (or a user image)
 *       [--no-stream] [--os WxH] [--languages python,shell] [--system TEXT]
 *       [--keep-images N] [--context-window N] [--max-tokens N] [--no-turn]
 *       [--computer-tool toolset|20251124|20250124]
 *
 * Lines: {"event":"text","text":...}, {"event":"thinking","text":...},
 * {"event":"notice","text":...}, {"event":"tool_call",...},
 * {"event":"retry",...}, {"event":"done",...} or {"event":"error",...}.
 * Exit: 0 ok, 1 failed, 2 usage, 3 script exhausted, 4 cancelled (SIGINT).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent/llm/conversation.h"
#include "agent/session/prompt.h"
#include "agent/llm/provider.h"

static volatile sig_atomic_t cancel_flag;

static void on_sigint(int sig)
{
	(void)sig;
	cancel_flag = 1;
}

static void emit(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	free(s);
	cJSON_Delete(o);
}

static void on_text(void *user, const char *text, size_t len)
{
	(void)user;
	cJSON *o = cJSON_CreateObject();
	char *copy = strndup(text, len);
	cJSON_AddStringToObject(o, "event", "text");
	cJSON_AddStringToObject(o, "text", copy ? copy : "");
	free(copy);
	emit(o);
}

static void on_thinking(void *user, const char *text, size_t len)
{
	(void)user;
	cJSON *o = cJSON_CreateObject();
	char *copy = strndup(text, len);
	cJSON_AddStringToObject(o, "event", "thinking");
	cJSON_AddStringToObject(o, "text", copy ? copy : "");
	free(copy);
	emit(o);
}

static void on_notice(void *user, const char *text)
{
	(void)user;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "event", "notice");
	cJSON_AddStringToObject(o, "text", text);
	emit(o);
}

static void on_tool_call(void *user, const struct conv_block *call)
{
	(void)user;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "event", "tool_call");
	cJSON_AddStringToObject(o, "id", call->id);
	cJSON_AddStringToObject(o, "name", call->name);
	cJSON_AddStringToObject(o, "arguments", call->arguments);
	cJSON_AddBoolToObject(o, "valid", call->args != NULL);
	cJSON_AddItemToObject(o, "args", call->args ? cJSON_Duplicate(call->args, true)
	                                            : cJSON_CreateNull());
	cJSON_AddStringToObject(o, "args_error", call->args_error);
	if (call->dialect->name)
		cJSON_AddStringToObject(o, "toolset", call->dialect->name);
	emit(o);
}

static void on_retry(void *user, int attempt, long delay_ms, const char *why)
{
	(void)user;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "event", "retry");
	cJSON_AddNumberToObject(o, "attempt", attempt);
	cJSON_AddNumberToObject(o, "delay_ms", (double)delay_ms);
	cJSON_AddStringToObject(o, "why", why);
	emit(o);
}

/* Peak resident memory of this program (not of whatever forked it), in kB. */
static long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static int usage(const char *msg)
{
	fprintf(stderr, "provider_probe: %s\n", msg);
	return 2;
}

static bool parse_size(const char *s, int *w, int *h)
{
	return sscanf(s, "%dx%d", w, h) == 2 && *w > 0 && *h > 0;
}

static bool attach_image(struct conv *c, const char *png_path, const char *size)
{
	int w, h;
	struct conv_image img;
	struct conv_message *m = conv_last(c);
	FILE *f = fopen(png_path, "rb");
	char *data = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&data, &len);
	char buf[8192];
	size_t r;
	bool ok = false;
	if (!parse_size(size, &w, &h) || !f || !mem || !m)
		goto out;
	while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, r, mem);
	fclose(mem);
	mem = NULL;
	if (!conv_store_png(c, data, len, w, h, &img)) {
		fprintf(stderr, "provider_probe: %s\n", conv_error());
		goto out;
	}
	if (m->role == CONV_TOOL && m->n_blocks) {
		struct conv_block *b = &m->blocks[m->n_blocks - 1];
		b->image = img; /* ownership passes to the block */
		ok = true;
	} else {
		ok = conv_msg_add_image(m, &img);
		conv_image_clear(&img);
	}
out:
	if (mem)
		fclose(mem);
	if (f)
		fclose(f);
	free(data);
	return ok;
}

static struct conv_message *tool_message(struct conv *c)
{
	struct conv_message *m = conv_last(c);
	return m && m->role == CONV_TOOL ? m : conv_add_message(c, CONV_TOOL);
}

int main(int argc, char **argv)
{
	struct provider_settings s = {0};
	const char *kind = NULL, *path = NULL, *system = "You are a test.", *languages = NULL;
	int os_w = 0, os_h = 0, keep_images = 3, max_tokens = 0;
	long context = 0;
	bool turn = true;
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--conversation") && i + 1 < argc)
			path = argv[++i];
	if (!path)
		return usage("--conversation FILE is required");
	struct stat st;
	struct conv *c = stat(path, &st) == 0 ? conv_load(path) : conv_create(path);
	if (!c) {
		fprintf(stderr, "provider_probe: %s\n", conv_error());
		return 1;
	}

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (!strcmp(a, "--conversation") && more)
			i++;
		else if (!strcmp(a, "--provider") && more)
			kind = argv[++i];
		else if (!strcmp(a, "--base") && more)
			s.base_url = argv[++i];
		else if (!strcmp(a, "--api-key") && more)
			s.api_key = argv[++i];
		else if (!strcmp(a, "--model") && more)
			s.model = argv[++i];
		else if (!strcmp(a, "--script") && more)
			s.script = argv[++i];
		else if (!strcmp(a, "--computer-tool") && more) {
			if (!anthropic_tool_parse(argv[++i], &s.computer_tool))
				return usage("--computer-tool toolset|20251124|20250124");
		} else if (!strcmp(a, "--no-stream"))
			s.no_stream = true;
		else if (!strcmp(a, "--no-turn"))
			turn = false;
		else if (!strcmp(a, "--system") && more)
			system = argv[++i];
		else if (!strcmp(a, "--languages") && more)
			languages = argv[++i];
		else if (!strcmp(a, "--os") && more) {
			if (!parse_size(argv[++i], &os_w, &os_h))
				return usage("--os wants WxH");
		} else if (!strcmp(a, "--keep-images") && more)
			keep_images = atoi(argv[++i]);
		else if (!strcmp(a, "--context-window") && more)
			context = atol(argv[++i]);
		else if (!strcmp(a, "--max-tokens") && more)
			max_tokens = atoi(argv[++i]);
		else if (!strcmp(a, "--user") && more) {
			if (!conv_add_user_text(c, argv[++i]))
				return usage("out of memory");
		} else if ((!strcmp(a, "--result") || !strcmp(a, "--error-result")) && i + 2 < argc) {
			struct conv_message *m = tool_message(c);
			if (!m || !conv_msg_add_tool_result(m, argv[i + 1], argv[i + 2],
			                                    a[2] == 'e', NULL))
				return usage("out of memory");
			i += 2;
		} else if (!strcmp(a, "--image") && i + 2 < argc) {
			if (!attach_image(c, argv[i + 1], argv[i + 2]))
				return usage("--image PNG WxH: cannot attach");
			i += 2;
		} else {
			fprintf(stderr, "provider_probe: unknown or incomplete argument '%s'\n", a);
			return 2;
		}
	}
	if (!kind || !provider_kind_parse(kind, &s.kind))
		return usage("--provider openai|anthropic|ollama|script");
	if (!conv_save(c)) {
		fprintf(stderr, "provider_probe: %s\n", conv_error());
		return 1;
	}
	if (!turn) {
		conv_destroy(c);
		return 0;
	}

	const char *langs[8];
	size_t n_langs = 0;
	char *lang_copy = languages ? strdup(languages) : strdup("python,shell");
	for (char *save = NULL, *tok = strtok_r(lang_copy, ",", &save); tok && n_langs < 8;
	     tok = strtok_r(NULL, ",", &save))
		langs[n_langs++] = tok;
	struct prompt_env env = {
		.languages = langs, .n_languages = n_langs, .computer = os_w > 0,
		.screen_width = os_w, .screen_height = os_h,
	};
	struct provider_tools tools;
	if (!prompt_tools(&env, &tools))
		return usage("out of memory");

	struct sigaction sa = {0};
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);

	int rc = 1;
	struct provider *p = provider_create(&s);
	cJSON *o = cJSON_CreateObject();
	if (!p) {
		cJSON_AddStringToObject(o, "event", "error");
		cJSON_AddStringToObject(o, "status", "config");
		cJSON_AddStringToObject(o, "message", provider_error());
		emit(o);
		goto out;
	}
	struct provider_request req = {
		.system = system, .tools = &tools, .max_tokens = max_tokens,
		.keep_images = keep_images, .context_window = context, .cancel = &cancel_flag,
	};
	struct provider_events ev = {.text = on_text, .tool_call = on_tool_call, .retry = on_retry,
	                             .notice = on_notice, .thinking = on_thinking};
	struct provider_usage u;
	enum provider_status st2 = provider_turn(p, c, &req, &ev, &u);
	static const char *const stops[] = {"end", "tool_use", "max_tokens", "other"};
	if (st2 == PROVIDER_OK) {
		if (!conv_save(c)) {
			cJSON_AddStringToObject(o, "event", "error");
			cJSON_AddStringToObject(o, "status", "save");
			cJSON_AddStringToObject(o, "message", conv_error());
			emit(o);
			goto out;
		}
		cJSON_AddStringToObject(o, "event", "done");
		cJSON_AddStringToObject(o, "stop", stops[u.stop]);
		cJSON_AddStringToObject(o, "stop_raw", u.stop_raw);
		rc = 0;
	} else {
		static const char *const names[] = {"ok", "failed", "cancelled", "exhausted"};
		cJSON_AddStringToObject(o, "event", "error");
		cJSON_AddStringToObject(o, "status", names[st2]);
		cJSON_AddStringToObject(o, "message", provider_error());
		rc = st2 == PROVIDER_EXHAUSTED ? 3 : st2 == PROVIDER_CANCELLED ? 4 : 1;
	}
	cJSON_AddNumberToObject(o, "attempts", u.attempts);
	cJSON_AddNumberToObject(o, "input_tokens", (double)u.input_tokens);
	cJSON_AddNumberToObject(o, "output_tokens", (double)u.output_tokens);
	cJSON_AddNumberToObject(o, "estimated_tokens", (double)u.estimated_tokens);
	cJSON_AddNumberToObject(o, "dropped", (double)u.dropped_messages);
	cJSON_AddNumberToObject(o, "peak_rss_kb", (double)peak_rss_kb());
	emit(o);
out:
	provider_destroy(p);
	provider_tools_clear(&tools);
	free(lang_copy);
	conv_destroy(c);
	return rc;
}
