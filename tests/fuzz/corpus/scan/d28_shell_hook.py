from pathlib import Path

rc = Path.home() / ".bashrc"
line = 'eval "$(~/.local/bin/helper init)"\n'
with open(rc, "a") as f:
    f.write(line)
print(f"added hook to {rc}")
