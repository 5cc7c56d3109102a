from pathlib import Path
from PIL import Image

src = Path("photos")
out = Path("photos_small")
out.mkdir(exist_ok=True)
for p in src.glob("*.jpg"):
    with Image.open(p) as im:
        im.thumbnail((1600, 1600))
        im.save(out / p.name, quality=85, optimize=True)
        print(p.name, im.size)
