import subprocess

result = subprocess.run(
    ["git", "log", "--oneline", "-n", "10"],
    capture_output=True,
    text=True,
    check=True,
)
for line in result.stdout.splitlines():
    sha, _, msg = line.partition(" ")
    print(f"{sha[:7]}  {msg}")
branch = subprocess.check_output(["git", "rev-parse", "--abbrev-ref", "HEAD"], text=True).strip()
print("on branch", branch)
