#!/bin/bash
# Normalise photo extensions to lower case
cd ~/Pictures/holiday || exit 1
for f in *.JPG; do
  [ -e "$f" ] || continue
  mv -- "$f" "${f%.JPG}.jpg"
done
ls | head
