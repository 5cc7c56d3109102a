import json
from pathlib import Path

cfg_path = Path("config.json")
cfg = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
cfg.setdefault("theme", "dark")
cfg["font_size"] = 14
cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")
print(json.dumps(cfg, indent=2))
