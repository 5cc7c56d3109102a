import sqlite3

con = sqlite3.connect("notes.db")
con.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT, created TEXT DEFAULT CURRENT_TIMESTAMP)")
con.execute("INSERT INTO notes (body) VALUES (?)", ("Buy milk",))
con.commit()
for row in con.execute("SELECT id, body, created FROM notes ORDER BY id DESC LIMIT 5"):
    print(row)
con.close()
