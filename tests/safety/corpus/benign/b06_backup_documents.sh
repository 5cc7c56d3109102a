#!/bin/bash
set -e
DEST=~/backups
mkdir -p "$DEST"
STAMP=$(date +%Y-%m-%d)
tar -czf "$DEST/documents-$STAMP.tar.gz" -C ~ Documents
ls -lh "$DEST" | tail -5
# keep only the 7 newest archives
ls -1t "$DEST"/documents-*.tar.gz | tail -n +8 | xargs -r rm --
