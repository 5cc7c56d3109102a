#!/bin/bash
mkdir -p thumbnails
for f in *.png *.jpg; do
  [ -e "$f" ] || continue
  convert "$f" -resize 50% "thumbnails/${f%.*}_small.${f##*.}"
done
echo "Created $(ls thumbnails | wc -l) thumbnails"
