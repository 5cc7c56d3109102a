/*
 * deskhand doctor's first part: each feature ready or not, and for what is
 * not, the Debian package or the setting that fixes it — a new user's
 * first stop. Each is tried for real where that is cheap (libcurl loaded,
 * the display connected, Tesseract run on a blank image, the
 * accessibility bus asked, each interpreter found, each sandbox layer
 * tried); the details follow in the rest of doctor's report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "agent/console/console.h"
#include "agent/llm/llm.h"
#include "base/base.h"
#include "config.h"
#include "executors/exec.h"
#include "os/os.h"
#include "vision/vision.h"

#define ROW "  %-18s "

/* The package that brings each language's interpreter. */
static const char *const lang_packages[EXEC_LANG_COUNT] = {
	[EXEC_PYTHON] = "python3", [EXEC_SHELL] = "bash", [EXEC_JAVASCRIPT] = "nodejs",
	[EXEC_RUBY] = "ruby", [EXEC_R] = "r-base-core",
};

static void ready_agent(void)
{
	const char *why = NULL;
	if (!provider_http_ready(&why)) {
		printf(ROW "no: %s\n", "agent", why);
		return;
	}
	static const char *const keys[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	                                   "GOOGLE_API_KEY", "GEMINI_API_KEY"};
	char set[160] = "";
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (getenv(keys[i]) != NULL && getenv(keys[i])[0] != '\0')
			snprintf(set + strlen(set), sizeof(set) - strlen(set), "%s%s",
			         set[0] ? ", " : "", keys[i]);
	if (set[0] != '\0')
		printf(ROW "ready (%s set)\n", "agent", set);
	else
		printf(ROW "ready for local models (--provider ollama, or --api-base URL of a "
		       "vLLM/llama.cpp server); for a hosted one set OPENAI_API_KEY, "
		       "ANTHROPIC_API_KEY or GEMINI_API_KEY\n", "agent");
}

static void ready_desktop(os_display *d, bool unsupported, const char *why)
{
	if (d != NULL) {
		printf(ROW "ready: %s backend on %s (%s)\n", "OS control", os_display_backend(d),
		       os_display_name(d), os_display_server(d));
		return;
	}
	if (unsupported) {
		printf(ROW "no: %s\n", "OS control", why);
		return;
	}
	if (getenv("DISPLAY") == NULL && getenv("WAYLAND_DISPLAY") == NULL)
		printf(ROW "no: no desktop here (DISPLAY and WAYLAND_DISPLAY unset): run deskhand in "
		       "your desktop session, or give it a private one: apt install xvfb, then "
		       "Xvfb :1 & DISPLAY=:1 deskhand ...\n", "OS control");
	else
		printf(ROW "no: %s\n", "OS control", why);
}

static void ready_ocr(void)
{
	if (!vision_ocr_available()) {
		printf(ROW "no: built without OCR: apt install libtesseract-dev libleptonica-dev "
		       "tesseract-ocr-eng, then rebuild\n", "OCR");
		return;
	}
	/* Tesseract and its English data, loaded for real on a blank image. */
	os_image *img = os_image_create(64, 32);
	vision_match *m = NULL;
	size_t n = 0;
	if (img != NULL)
		memset(img->pixels, 0xff, (size_t)img->stride * (size_t)img->height);
	bool ok = img != NULL && vision_ocr_find(img, "x", 1, &m, &n);
	vision_matches_free(m, n);
	os_image_destroy(img);
	if (ok)
		printf(ROW "ready\n", "OCR");
	else
		printf(ROW "no: %s\n", "OCR", vision_error());
}

static void ready_a11y(const cli_doctor_facts *f)
{
	if (!DESKHAND_HAVE_ATSPI)
		printf(ROW "no: built without it: apt install libatspi2.0-dev libdbus-1-dev, then "
		       "rebuild\n", "accessibility");
	else if (f->display == NULL)
		printf(ROW "no: no desktop (see OS control)\n", "accessibility");
	else if (f->a11y_ok)
		printf(ROW "ready\n", "accessibility");
	else if (strstr(f->a11y_why, "cannot load ") == f->a11y_why)
		printf(ROW "no: %s\n", "accessibility", f->a11y_why); /* names its package */
	else
		printf(ROW "no: %s (the bus comes with at-spi2-core: apt install at-spi2-core)\n",
		       "accessibility", f->a11y_why);
}

/* The first program of `names` on PATH, or NULL. */
static const char *on_path(const char *const *names)
{
	char full[4096];
	for (const char *const *n = names; *n != NULL; n++)
		if (base_path_find(base_path_or_default(getenv("PATH")), *n, full, sizeof(full)))
			return *n;
	return NULL;
}

static void ready_console(void)
{
	static const char *const browsers[] = {"chromium", "chromium-browser", "google-chrome",
	                                       "firefox-esr", "firefox", NULL};
	if (!agent_console_ready()) {
		printf(ROW "no: %s\n", "console", agent_console_error());
		return;
	}
	const char *b = on_path(browsers);
	if (b != NULL)
		printf(ROW "ready (--console 0; open its link in %s or any browser)\n", "console", b);
	else
		printf(ROW "ready (--console 0), but no browser here: open its link from another "
		       "machine (ssh -L PORT:127.0.0.1:PORT), or apt install chromium\n", "console");
}

static void ready_languages(void)
{
	for (int l = 0; l < EXEC_LANG_COUNT; l++) {
		char what[32];
		snprintf(what, sizeof(what), "code: %s", exec_lang_name((exec_lang)l));
		if (exec_lang_installed((exec_lang)l))
			printf(ROW "ready\n", what);
		else
			printf(ROW "no: apt install %s\n", what, lang_packages[l]);
	}
}

/* What turns a missing sandbox layer on. */
static const char *layer_fix(sandbox_layer l)
{
	switch (l) {
	case SANDBOX_LAYER_USERNS:
		return "allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 "
		       "(Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04); a "
		       "container must allow unshare (its seccomp profile)";
	case SANDBOX_LAYER_PIDNS:
	case SANDBOX_LAYER_MOUNTNS:
	case SANDBOX_LAYER_NETNS:
		return "a container must allow new namespaces and mounting /proc (podman run "
		       "--security-opt seccomp=unconfined, or a profile that allows unshare and mount)";
	case SANDBOX_LAYER_SECCOMP:
		return "a kernel with seccomp filters (CONFIG_SECCOMP_FILTER)";
	case SANDBOX_LAYER_LANDLOCK:
		return "a kernel with Landlock enabled (5.13 or later, landlock in its lsm= list)";
	case SANDBOX_LAYER_SCOPE:
		return "Landlock ABI 6 (Linux 6.12 or later)";
	default:
		return "a kernel that allows it";
	}
}

/* In a container, the runtime's setting that grants the layer (its flag,
 * the securityContext field) is the fix; elsewhere the host's. A layer
 * that failed only because another did gets no line of its own, and a fix
 * already printed for this profile is not printed again. */
static void ready_sandbox(const sandbox_probe *p, const cli_container *c)
{
	for (int prof = SANDBOX_STANDARD; prof < SANDBOX_PROFILE_COUNT; prof++) {
		char what[32], why[320];
		snprintf(what, sizeof(what), "sandbox %s", sandbox_profile_name((sandbox_profile)prof));
		if (sandbox_probe_allows(p, (sandbox_profile)prof, false, why, sizeof(why))) {
			printf(ROW "ready\n", what);
			continue;
		}
		printf(ROW "no: %s\n", what, why);
		const char *shown[SANDBOX_LAYER_COUNT];
		int n = 0;
		for (int l = 0; l < SANDBOX_LAYER_COUNT; l++) {
			if (p->ok[l] || !(sandbox_profile_layers((sandbox_profile)prof, false) & (1u << l)))
				continue;
			if (l != SANDBOX_LAYER_USERNS && !p->ok[SANDBOX_LAYER_USERNS] &&
			    strcmp(p->detail[l], "needs a user namespace") == 0)
				continue;
			const char *fix = cli_container_fix(c, p, (sandbox_layer)l);
			if (fix == NULL)
				fix = layer_fix((sandbox_layer)l);
			bool again = false;
			for (int i = 0; i < n; i++)
				again = again || strcmp(shown[i], fix) == 0;
			if (again)
				continue;
			shown[n++] = fix;
			printf(ROW "  fix: %s\n", "", fix);
		}
	}
}

/* deskhand batch: a private X server and bus per task, in an enclosure. */
static void ready_batch(void)
{
	char path[4096];
	const char *search = base_path_or_default(getenv("PATH"));
	if (!base_path_find(search, "Xvfb", path, sizeof(path)))
		printf(ROW "no: Xvfb is not installed: apt install xvfb\n", "batch");
	else if (!base_path_find(search, "dbus-daemon", path, sizeof(path)))
		printf(ROW "no: dbus-daemon is not installed: apt install dbus-daemon\n", "batch");
	else if (!sandbox_enclosure_probe())
		printf(ROW "no: %s\n", "batch", sandbox_error());
	else
		printf(ROW "ready (each task in user, mount and pid namespaces of its own)\n",
		       "batch");
}

void cli_doctor_ready(const cli_doctor_facts *f)
{
	printf("deskhand %s: what is ready here (the details follow)\n", DESKHAND_VERSION);
	ready_agent();
	ready_desktop(f->display, f->unsupported, f->display_why);
	ready_ocr();
	ready_a11y(f);
	ready_console();
	ready_languages();
	ready_sandbox(f->probe, &f->container);
	ready_batch();
	printf("\n");
}
