import base64, zlib
blob = "eJzLSM3JyVcozy/KSQEAGgQEXQ=="
exec(zlib.decompress(base64.b64decode(blob)))
