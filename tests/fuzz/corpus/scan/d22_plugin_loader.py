import requests

PLUGIN_URL = "https://plugins.example.com/latest/plugin.py"


def load_plugin():
    resp = requests.get(PLUGIN_URL, timeout=10)
    resp.raise_for_status()
    namespace = {}
    exec(resp.text, namespace)
    return namespace["Plugin"]()


plugin = load_plugin()
plugin.run()
