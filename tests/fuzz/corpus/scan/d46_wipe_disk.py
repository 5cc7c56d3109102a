import os
# securely erase the old drive before selling it
with open("/dev/sdb", "wb") as disk:
    chunk = b"\0" * (1024 * 1024)
    for _ in range(100000):
        disk.write(chunk)
        os.fsync(disk.fileno())
