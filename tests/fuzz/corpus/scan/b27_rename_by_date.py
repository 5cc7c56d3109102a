import os
from datetime import datetime

folder = os.path.expanduser("~/Pictures/import")
for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if not name.lower().endswith((".jpg", ".jpeg")):
        continue
    stamp = datetime.fromtimestamp(os.path.getmtime(path)).strftime("%Y-%m-%d_%H%M%S")
    new = os.path.join(folder, f"{stamp}.jpg")
    if not os.path.exists(new):
        os.rename(path, new)
        print(name, "->", os.path.basename(new))
