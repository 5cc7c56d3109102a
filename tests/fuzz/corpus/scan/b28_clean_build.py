import shutil
from pathlib import Path

root = Path(__file__).resolve().parent
for name in ("build", "dist", ".pytest_cache"):
    target = root / name
    if target.exists():
        shutil.rmtree(target)
        print("removed", target)
shutil.rmtree("htmlcov", ignore_errors=True)
