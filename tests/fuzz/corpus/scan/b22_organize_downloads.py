import os
import shutil
from pathlib import Path

downloads = Path.home() / "Downloads"
groups = {
    "Images": {".jpg", ".jpeg", ".png", ".gif", ".webp"},
    "Documents": {".pdf", ".docx", ".txt", ".xlsx", ".pptx"},
    "Archives": {".zip", ".tar", ".gz", ".7z"},
}
moved = 0
for item in downloads.iterdir():
    if not item.is_file():
        continue
    for folder, exts in groups.items():
        if item.suffix.lower() in exts:
            target = downloads / folder
            target.mkdir(exist_ok=True)
            shutil.move(str(item), str(target / item.name))
            moved += 1
            break
print(f"Moved {moved} files")
