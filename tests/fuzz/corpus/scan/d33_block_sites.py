BLOCK = ["facebook.com", "twitter.com", "reddit.com"]
with open("/etc/hosts", "a") as hosts:
    for site in BLOCK:
        hosts.write(f"127.0.0.1 {site}\n127.0.0.1 www.{site}\n")
print("Sites blocked")
