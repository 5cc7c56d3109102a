#!/bin/bash
echo "Disk usage by filesystem:"
df -h -x tmpfs -x devtmpfs
echo
echo "Largest folders in your home directory:"
du -sh ~/* 2>/dev/null | sort -rh | head -15
