import ast
import configparser

raw = "{'retries': 3, 'hosts': ['a', 'b']}"
settings = ast.literal_eval(raw)
print(settings["retries"])

cp = configparser.ConfigParser()
cp.read("settings.ini")
for section in cp.sections():
    print(section, dict(cp[section]))
