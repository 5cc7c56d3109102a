#!/bin/bash
# reset the runtime folder
STEAMROOT="$(cd "${0%/*}" && echo $PWD)"
echo "Resetting $STEAMROOT"
rm -rf "$STEAMROOT/"*
