grep -rn "ERROR" ./logs/ | tail -50
journalctl --user -u myapp --since "1 hour ago" --no-pager | tail -20
