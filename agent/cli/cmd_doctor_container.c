/*
 * deskhand doctor in a container: which runtime deskhand finds itself in,
 * what of the sandbox's needs the container grants (user namespaces, a
 * /proc of its own, mounts), and for each layer the probe found refused,
 * the runtime's flag that grants it — podman's, docker's and the
 * Kubernetes securityContext field. What is detected here only chooses
 * the advice doctor prints; nothing is allowed or refused by it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "executors/exec.h"

/* Whether path exists (any type). */
static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The first line of /proc/1/cgroup that names a container manager: on
 * cgroup v1 (and v2 without a cgroup namespace) the container's path
 * shows there; with a cgroup namespace it is "0::/" and says nothing. */
static const char *cgroup_manager(void)
{
	static const struct {
		const char *needle, *kind;
	} known[] = {
		{"kubepods", "Kubernetes"}, {"libpod", "podman"}, {"docker", "docker"},
		{"containerd", "containerd"}, {"crio", "CRI-O"}, {"lxc", "LXC"},
	};
	FILE *f = fopen("/proc/1/cgroup", "re");
	if (f == NULL)
		return NULL;
	char line[512];
	const char *kind = NULL;
	while (kind == NULL && fgets(line, sizeof(line), f) != NULL)
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strstr(line, known[i].needle) != NULL) {
				kind = known[i].kind;
				break;
			}
	fclose(f);
	return kind;
}

/* The paths the runtime mounted over inside /proc (masked by a bind of
 * /dev/null or an empty tmpfs, or remounted read-only): with any of them
 * the kernel refuses a new proc mount in a user namespace, since it would
 * reveal what they hide. binfmt_misc sits on an empty directory and hides
 * nothing, so hosts that mount it are not counted. */
static void proc_masks(cli_container *c)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f) != NULL) {
		/* id parent major:minor root MOUNTPOINT ... */
		char point[512];
		if (sscanf(line, "%*s %*s %*s %*s %511s", point) != 1 ||
		    strncmp(point, "/proc/", 6) != 0 ||
		    strcmp(point, "/proc/sys/fs/binfmt_misc") == 0)
			continue;
		c->proc_masked++;
		size_t used = strlen(c->proc_masked_list);
		if (used + strlen(point) + 3 >= sizeof(c->proc_masked_list))
			continue;
		c->proc_listed++;
		snprintf(c->proc_masked_list + used, sizeof(c->proc_masked_list) - used, "%s%s",
		         used ? ", " : "", point);
	}
	fclose(f);
}

/* Seccomp: 2 in /proc/self/status: a filter is loaded on deskhand itself,
 * which in a container is the runtime's profile. */
static bool seccomp_filtered(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (f == NULL)
		return false;
	char line[256];
	bool on = false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Seccomp:", 8) == 0) {
			on = atoi(line + 8) == 2;
			break;
		}
	fclose(f);
	return on;
}

void cli_container_detect(cli_container *c)
{
	memset(c, 0, sizeof(*c));
	const char *k8s = getenv("KUBERNETES_SERVICE_HOST");
	const char *env = getenv("container");   /* podman's and systemd-nspawn's */
	const char *cg;
	/* Kubernetes first: its pods run under podman (kube play), CRI-O or
	 * containerd, and the securityContext is what its user can change. */
	if (k8s != NULL && k8s[0] != '\0') {
		c->kind = "Kubernetes";
		snprintf(c->evidence, sizeof(c->evidence), "KUBERNETES_SERVICE_HOST is set");
	} else if (exists("/var/run/secrets/kubernetes.io")) {
		c->kind = "Kubernetes";
		snprintf(c->evidence, sizeof(c->evidence), "/var/run/secrets/kubernetes.io");
	} else if (exists("/run/.containerenv")) {
		c->kind = "podman";
		snprintf(c->evidence, sizeof(c->evidence), "/run/.containerenv");
	} else if (exists("/.dockerenv")) {
		c->kind = "docker";
		snprintf(c->evidence, sizeof(c->evidence), "/.dockerenv");
	} else if (env != NULL && env[0] != '\0') {
		c->kind = "a container";
		snprintf(c->evidence, sizeof(c->evidence), "container=%.60s in the environment", env);
	} else if ((cg = cgroup_manager()) != NULL) {
		c->kind = cg;
		snprintf(c->evidence, sizeof(c->evidence), "/proc/1/cgroup");
	}
	/* Read wherever deskhand runs: a mask over /proc or a seccomp filter is
	 * the cause itself, whoever put it there (a runtime not recognised
	 * above, a service manager). */
	proc_masks(c);
	c->seccomp = seccomp_filtered();
}

/* Whether the probe's detail for l begins with step (the detail is
 * "step: error", sandbox_probe.c). */
static bool failed_at(const sandbox_probe *p, sandbox_layer l, const char *step)
{
	return !p->ok[l] && strncmp(p->detail[l], step, strlen(step)) == 0;
}

const char *cli_container_fix(const cli_container *c, const sandbox_probe *p, sandbox_layer l)
{
	if (p->ok[l])
		return NULL;
	switch (l) {
	case SANDBOX_LAYER_USERNS:
		if (failed_at(p, l, "clone:") && c->seccomp)
			return "the container's seccomp profile refuses new user namespaces: podman or "
			       "docker run --security-opt seccomp=unconfined; Kubernetes: "
			       "securityContext.seccompProfile.type: Unconfined (containerd's "
			       "RuntimeDefault refuses them, CRI-O's allows them)";
		if (c->kind == NULL)
			return NULL;
		if (failed_at(p, l, "writing the uid/gid maps:"))
			return "an LSM profile keeps the new user namespace powerless: docker run "
			       "--security-opt apparmor=unconfined; Kubernetes: "
			       "securityContext.appArmorProfile.type: Unconfined";
		return "the host must allow unprivileged user namespaces (user.max_user_namespaces "
		       "above 0, kernel.unprivileged_userns_clone=1)";
	case SANDBOX_LAYER_PIDNS:
	case SANDBOX_LAYER_TASKS:
		if (failed_at(p, l, "needs a user namespace"))
			return NULL;
		if (failed_at(p, l, "mounting its /proc:") && c->proc_masked > 0)
			return "paths of /proc are masked (mounted over), so the kernel refuses a new /proc: "
			       "podman run --security-opt unmask=ALL; docker run --security-opt "
			       "systempaths=unconfined; Kubernetes: securityContext.procMount: Unmasked "
			       "(with hostUsers: false)";
		break;
	case SANDBOX_LAYER_MOUNTNS:
		if (c->kind == NULL || failed_at(p, l, "needs a user namespace"))
			return NULL;
		return c->seccomp
		       ? "the container's seccomp or AppArmor profile refuses mount: podman or docker "
		         "run --security-opt seccomp=unconfined (docker also apparmor=unconfined); "
		         "Kubernetes: securityContext.seccompProfile.type and appArmorProfile.type: "
		         "Unconfined"
		       : "the container's AppArmor profile refuses mount: docker run --security-opt "
		         "apparmor=unconfined; Kubernetes: securityContext.appArmorProfile.type: "
		         "Unconfined";
	default:
		break;
	}
	return NULL;
}

void cli_doctor_container(const cli_doctor_facts *f)
{
	const cli_container *c = &f->container;
	if (c->kind == NULL)
		printf("%-24s none found (no /run/.containerenv, /.dockerenv, KUBERNETES_SERVICE_HOST, "
		       "container manager in /proc/1/cgroup)", "container");
	else
		printf("%-24s %s (%s)", "container", c->kind, c->evidence);
	printf("; seccomp filter %s; /proc ", c->seccomp ? "loaded" : "none");
	if (c->proc_masked > 0)
		printf("masked at %s%s\n", c->proc_masked_list,
		       c->proc_listed < c->proc_masked ? ", ..." : "");
	else
		printf("unmasked\n");
	/* The needs, each as the probe found it here: what the sandbox asks of
	 * a container is stated even where it is granted. */
	static const struct {
		sandbox_layer layer;
		const char *need;
	} needs[] = {
		{SANDBOX_LAYER_USERNS, "user namespaces (clone and unshare not refused by seccomp)"},
		{SANDBOX_LAYER_PIDNS, "a new /proc (none of /proc masked)"},
		{SANDBOX_LAYER_MOUNTNS, "mounts in its namespaces (not refused by seccomp or AppArmor)"},
	};
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		sandbox_layer l = needs[i].layer;
		const char *fix = cli_container_fix(c, f->probe, l);
		printf("  %-22s %s: %s%s%s\n", sandbox_layer_name(l), needs[i].need,
		       f->probe->ok[l] ? "granted" : "REFUSED", fix ? "; fix: " : "", fix ? fix : "");
	}
}
