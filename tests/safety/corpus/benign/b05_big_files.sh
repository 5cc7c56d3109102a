#!/bin/bash
# List files bigger than 500 MB in the home directory
find ~ -type f -size +500M -exec ls -lh {} \; 2>/dev/null | awk '{ print $5, $9 }' | sort -rh
