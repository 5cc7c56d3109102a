import psutil

procs = []
for p in psutil.process_iter(["pid", "name", "memory_info", "cpu_percent"]):
    procs.append(p.info)
procs.sort(key=lambda i: i["memory_info"].rss if i["memory_info"] else 0, reverse=True)
print(f"{'PID':>7}  {'MEM (MB)':>9}  NAME")
for info in procs[:10]:
    mem = info["memory_info"].rss / 1e6 if info["memory_info"] else 0
    print(f"{info['pid']:>7}  {mem:9.1f}  {info['name']}")
