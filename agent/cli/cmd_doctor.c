/*
 * deskhand doctor: what of the sandbox works on this machine, tried for
 * real, and which profiles can therefore run.
 */
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "executors/sandbox.h"

int cmd_doctor(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return cli_usage_error("doctor", "doctor takes no arguments");
	struct utsname u;
	if (uname(&u) == 0)
		printf("kernel %s, deskhand running as uid %d%s\n", u.release, (int)geteuid(),
		       geteuid() == 0 ? " (root)" : "");
	sandbox_probe p;
	sandbox_probe_run(&p);
	for (int l = 0; l < SANDBOX_LAYER_COUNT; l++)
		printf("%-24s %s%s\n", sandbox_layer_name((sandbox_layer)l),
		       p.ok[l] ? "" : "no: ", p.detail[l]);
	bool standard_ok = true;
	for (int prof = SANDBOX_OFF; prof <= SANDBOX_STRICT; prof++) {
		char why[320];
		bool ok = sandbox_probe_allows(&p, (sandbox_profile)prof, false, why, sizeof(why));
		bool with_display = sandbox_probe_allows(&p, (sandbox_profile)prof, true, NULL, 0);
		if (prof == SANDBOX_STANDARD)
			standard_ok = ok;
		if (ok)
			printf("profile %-16s can run\n", sandbox_profile_name((sandbox_profile)prof));
		else
			printf("profile %-16s cannot run (%s)%s\n",
			       sandbox_profile_name((sandbox_profile)prof), why,
			       with_display ? "; with --display it can" : "");
	}
	return standard_ok ? CLI_OK : CLI_FAIL;
}
