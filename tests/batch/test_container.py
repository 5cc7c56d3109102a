"""deskhand's container image and its Kubernetes Job, under podman for real:
the image is built from this tree (deploy/Containerfile) on a Debian base
made here without a registry (deploy/make-base: debootstrap, podman import);
it runs as a non-root user with deskhand as its entrypoint and every library
deskhand links; `deskhand doctor` inside names the container and, for each of
the sandbox's needs the container refuses (a masked /proc, a seccomp profile
without user namespaces), the flag that grants it; one task of `deskhand
batch` runs inside with the scripted model and its checker passes; and the
pod template of deploy/k8s/job.yaml, wrapped as a Pod (podman 4.3 plays Pods,
not Jobs), plays with `podman kube play` and leaves its results.jsonl in the
volume.

podman runs with a containers.conf of the test's own (CONTAINERS_CONF):
runc, since crun refuses this machine's hybrid cgroup layout, and no default
ulimits, which root here may not raise. The base's tarball is cached in
/var/cache/deskhand-tests and the image's layers in podman's storage, so a
warm run rebuilds only what changed in the tree. The test removes only the
containers and pods it created, by the names it gave them; its image stays
as the cache.

Skips without podman, runc or root (debootstrap); DESKHAND_REQUIRE_CONTAINER=1
(.ci/run) makes that a failure."""
import json
import os
import re
import shutil
import subprocess
import unittest

import harness as h

SRC = h.SRCDIR
IMAGE = "localhost/deskhand-test:ci"
BASE = "localhost/deskhand-base:bookworm"
# Names this run gives what it creates, so that it removes only those.
TAG = "dh-test-%d" % os.getpid()
CONF = """[containers]
default_ulimits = []
[engine]
runtime = "runc"
"""
# What docker's and containerd's default seccomp profile does to a process
# without CAP_SYS_ADMIN, reduced to the part the sandbox meets: clone with
# CLONE_NEWUSER, unshare and mount are refused (clone3: ENOSYS, as there).
NO_USERNS_PROFILE = {
    "defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [
        {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
         "args": [{"index": 0, "value": 0x10000000, "valueTwo": 0x10000000,
                   "op": "SCMP_CMP_MASKED_EQ"}]},
        {"names": ["unshare", "setns", "mount", "umount2", "pivot_root"],
         "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
    ],
}
# The task: an xterm, the model clicks into it and types a command; the
# checker reads the file the command wrote. Computer actions only, so that
# it asks of the container exactly what a desktop task does.
TASK = {"id": "hello", "instruction": "Write container-ok into hello.txt in the terminal.",
        "screen": "1024x768", "apps": [["xterm", "-geometry", "80x20+0+0"]],
        "check": ["sh", "-c", "grep -qx container-ok hello.txt"],
        "timeout_s": 240, "max_steps": 10}
SCRIPT = {"turns": [
    {"text": "I'll look first.",
     "tool_calls": [{"name": "computer", "arguments": {"action": "screenshot"}}]},
    {"text": "Into the terminal.",
     "tool_calls": [{"name": "computer",
                     "arguments": {"action": "left_click", "coordinate": [120, 100]}}]},
    {"text": "Now the command.",
     "tool_calls": [{"name": "computer",
                     "arguments": {"action": "type",
                                   "text": "echo container-ok > hello.txt\n"}}]},
    {"text": "One more look.",
     "tool_calls": [{"name": "computer", "arguments": {"action": "screenshot"}}]},
    {"text": "Done: hello.txt holds container-ok."},
]}


def podman_missing():
    for prog in ("podman", "runc", "debootstrap"):
        if shutil.which(prog) is None and not os.path.exists("/usr/sbin/" + prog):
            return "%s is not installed (.ci/install-deps installs it)" % prog
    if os.geteuid() != 0:
        return "not root: debootstrap (deploy/make-base) needs root"
    return None


class Container(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = podman_missing()
        if why:
            if os.environ.get("DESKHAND_REQUIRE_CONTAINER"):
                raise RuntimeError(why + " and DESKHAND_REQUIRE_CONTAINER=1")
            raise unittest.SkipTest(why)
        cls.dir = h.tmpdir()
        conf = os.path.join(cls.dir, "containers.conf")
        with open(conf, "w") as f:
            f.write(CONF)
        cls.env = dict(os.environ, CONTAINERS_CONF=conf)
        r = cls.podman(["--version"])
        assert r.returncode == 0, r.stderr
        # The base, once per machine (a tarball in the cache), imported into
        # podman's storage when it is not there yet.
        r = h.run([os.path.join(SRC, "deploy", "make-base"), BASE], env=cls.env, timeout=900)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        # The image from this tree; cold (every package downloaded, deskhand
        # compiled) it takes minutes, warm only the layers after COPY.
        r = h.run(["podman", "build", "-f", os.path.join(SRC, "deploy", "Containerfile"),
                   "--build-arg", "BASE=" + BASE, "-t", IMAGE, SRC],
                  env=cls.env, timeout=1800)
        assert r.returncode == 0, (r.stdout.decode(errors="replace")[-3000:] +
                                   r.stderr.decode(errors="replace")[-3000:])
        size = json.loads(cls.podman(["image", "inspect", IMAGE]).stdout)[0]["Size"]
        print("# image %s: %.0f MB" % (IMAGE, size / 1e6))
        cls.created = []

    @classmethod
    def tearDownClass(cls):
        for kind, name in getattr(cls, "created", []):
            # A pod's infra container can hold its shm mount for a moment
            # after it exits (runc, user namespaces): a second rm succeeds.
            for _ in range(3):
                r = cls.podman([kind, "rm", "-f", name])
                if r.returncode == 0 or b"no such" in r.stderr.lower():
                    break
        if getattr(cls, "dir", None):
            shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def podman(cls, args, timeout=120):
        return h.run(["podman"] + args, env=cls.env, timeout=timeout)

    def run_in(self, args, opts=(), entrypoint=None, timeout=300):
        name = "%s-%d" % (TAG, len(self.created))
        self.created.append(("container", name))
        cmd = ["run", "--rm", "--name", name] + list(opts)
        if entrypoint:
            cmd += ["--entrypoint", entrypoint]
        return self.podman(cmd + [IMAGE] + args, timeout=timeout)

    def doctor(self, opts=()):
        r = self.run_in(["doctor"], opts)
        out = r.stdout.decode(errors="replace")
        rows = {}
        section = out[out.index("\ncontainer ") + 1:] if "\ncontainer " in out else ""
        for line in section.splitlines()[1:4]:
            name, _, rest = line.strip().partition("  ")
            rows[name] = rest.strip()
        return r, out, rows

    def tasks_dir(self, name):
        """A folder of the one task and its script, readable by the
        container's user (mapped to any uid), and an empty results folder
        it may write."""
        d = os.path.join(self.dir, name)
        os.makedirs(os.path.join(d, "tasks"))
        os.makedirs(os.path.join(d, "results"))
        with open(os.path.join(d, "tasks", "tasks.jsonl"), "w") as f:
            f.write(json.dumps(TASK) + "\n")
        with open(os.path.join(d, "tasks", "hello.json"), "w") as f:
            json.dump(SCRIPT, f)
        for p in (self.dir, d, os.path.join(d, "tasks")):
            os.chmod(p, 0o755)
        os.chmod(os.path.join(d, "results"), 0o777)
        return d

    def test_image_runs_deskhand_as_a_user(self):
        cfg = json.loads(self.podman(["image", "inspect", IMAGE]).stdout)[0]["Config"]
        self.assertEqual(cfg["Entrypoint"], ["deskhand"])
        self.assertEqual(cfg["User"], "1000:1000")
        r = self.run_in(["--version"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.decode().startswith("deskhand "), r.stdout)
        r = self.run_in(["-u"], entrypoint="id")
        self.assertEqual(r.stdout.decode().strip(), "1000")

    def test_every_library_is_there(self):
        r = self.run_in(["-c", "ldd /usr/local/bin/deskhand; "
                               "ls /usr/share/deskhand/examples/demo.json"], entrypoint="sh")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"not found", r.stdout)

    def test_containerfile_builds_with_what_install_deps_lists(self):
        # .ci/install-deps's build_pkgs is the build's list; the image's
        # build stage must hold every one of them.
        r = h.run(["bash", "-c", "eval \"$(sed -n '/^build_pkgs=(/,/^)/p' .ci/install-deps)\"; "
                                 "echo \"${build_pkgs[@]}\""], cwd=SRC)
        want = set(r.stdout.decode().split())
        self.assertIn("meson", want)
        text = open(os.path.join(SRC, "deploy", "Containerfile")).read()
        build = text[:text.index("COPY . /src")]
        have = set(re.findall(r"[a-z0-9][a-z0-9.+-]+", build))
        self.assertEqual(want - have, set())

    def test_doctor_names_the_masked_proc_and_its_flags(self):
        r, out, rows = self.doctor()
        self.assertIn("container                podman (/run/.containerenv)", out)
        self.assertRegex(out, r"\n  pid namespace +a new /proc .*: REFUSED; fix: ")
        pid = rows["pid namespace"]
        for flag in ("--security-opt unmask=ALL", "systempaths=unconfined",
                     "procMount: Unmasked", "hostUsers: false"):
            self.assertIn(flag, pid, out)
        self.assertIn("granted", rows["user namespace"], out)
        # The first part gives the same fix, and doctor fails: no sandbox.
        self.assertRegex(out, r"sandbox standard +no: pid namespace")
        self.assertIn("fix: paths of /proc are masked", out)
        self.assertEqual(r.returncode, 1, out)

    def test_doctor_names_the_seccomp_profile(self):
        prof = os.path.join(self.dir, "no-userns.json")
        with open(prof, "w") as f:
            json.dump(NO_USERNS_PROFILE, f)
        r, out, rows = self.doctor(["--security-opt", "unmask=ALL",
                                    "--security-opt", "seccomp=" + prof])
        self.assertIn("seccomp filter loaded", out)
        userns = rows["user namespace"]
        self.assertIn("REFUSED", userns, out)
        for flag in ("seccomp=unconfined", "seccompProfile.type: Unconfined"):
            self.assertIn(flag, userns, out)
        self.assertNotIn("fix:", rows["pid namespace"], out)  # it only needs the user namespace

    def test_doctor_ready_with_proc_unmasked(self):
        r, out, rows = self.doctor(["--security-opt", "unmask=ALL"])
        self.assertIn("/proc unmasked", out)
        for layer in ("user namespace", "pid namespace", "mount namespace"):
            self.assertTrue(rows[layer].endswith(": granted"), out)
        self.assertRegex(out, r"sandbox standard +ready")
        self.assertEqual(r.returncode, 0, out)

    def results(self, d, sub):
        path = os.path.join(d, "results", sub, "results.jsonl")
        self.assertTrue(os.path.exists(path), "no %s" % path)
        return [json.loads(line) for line in open(path) if line.strip()]

    def test_one_task_in_a_container(self):
        d = self.tasks_dir("run")
        r = self.run_in(["batch", "/tasks/tasks.jsonl", "--out", "/results/r",
                         "--provider", "script", "--script", "{tasks}/hello.json",
                         "--os-auto-approve", "-y"],
                        ["--security-opt", "unmask=ALL",
                         "-v", os.path.join(d, "tasks") + ":/tasks:ro",
                         "-v", os.path.join(d, "results") + ":/results"], timeout=400)
        res = self.results(d, "r")
        self.assertEqual([x["id"] for x in res], ["hello"], r.stderr)
        self.assertTrue(res[0]["success"], (res, r.stderr.decode(errors="replace")[-2000:]))
        self.assertEqual(r.returncode, 0)

    def test_the_jobs_pod_template_plays(self):
        import yaml   # python3-yaml: only this case reads YAML
        d = self.tasks_dir("kube")
        job = yaml.safe_load(open(os.path.join(SRC, "deploy", "k8s", "job.yaml")))
        self.assertEqual(job["kind"], "Job")
        self.assertEqual(job["spec"]["completionMode"], "Indexed")
        tpl = job["spec"]["template"]
        c = tpl["spec"]["containers"][0]
        sc = c["securityContext"]
        self.assertEqual(sc["procMount"], "Unmasked")
        self.assertTrue(tpl["spec"]["hostUsers"] is False)
        # What the Job controller and the kubelet do for pod 0 of a Job of
        # one: the index, the volumes (here folders of this test), and
        # $(VAR) in args expanded from the container's env, which podman's
        # kube play does not do. The model is the scripted one.
        env = {}
        for e in c["env"]:
            if e["name"] == "DESKHAND_INDEX":
                e.pop("valueFrom")
                e["value"] = "0"
            if e["name"] == "DESKHAND_COUNT":
                e["value"] = "1"
            env[e["name"]] = e.get("value")
        args = [re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1)) or m.group(0), str(a))
                for a in c["args"]]
        i = args.index("--provider")
        args[i + 1:i + 2] = ["script", "--script", "{tasks}/hello.json"]
        c["args"] = args
        c["image"] = IMAGE
        # podman 4.3's kube play ignores procMount (and has no other way to
        # unmask /proc), so the Pod asks for what unmasks it there:
        # privileged, which in this pod's own user namespace (hostUsers:
        # false) is root of nothing on the host, and runs deskhand as uid
        # 1000 with no capability. That procMount: Unmasked is what the
        # sandbox needs is test_doctor_ready_with_proc_unmasked's and
        # test_one_task_in_a_container's (--security-opt unmask=ALL).
        sc.pop("procMount")
        sc.pop("allowPrivilegeEscalation")
        sc["privileged"] = True
        tpl["spec"]["volumes"] = [
            {"name": "tasks", "hostPath": {"path": os.path.join(d, "tasks"), "type": "Directory"}},
            {"name": "results", "hostPath": {"path": os.path.join(d, "results"),
                                             "type": "Directory"}}]
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": TAG + "-pod", "labels": tpl["metadata"]["labels"]},
               "spec": tpl["spec"]}
        path = os.path.join(d, "pod.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(pod, f)
        self.created.append(("pod", TAG + "-pod"))
        r = self.podman(["kube", "play", path], timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        ctr = "%s-pod-%s" % (TAG, c["name"])
        r = self.podman(["wait", ctr], timeout=400)
        logs = self.podman(["logs", ctr]).stderr.decode(errors="replace")
        self.assertEqual(r.stdout.decode().strip(), "0", logs[-2000:])
        res = self.results(d, "0")
        self.assertEqual([x["id"] for x in res], ["hello"], logs[-2000:])
        self.assertTrue(res[0]["success"], res)


if __name__ == "__main__":
    h.main()
