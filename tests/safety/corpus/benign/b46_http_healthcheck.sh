#!/bin/bash
for url in https://example.com https://example.org; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url")
  echo "$url -> $code"
done
nc -z -w 2 localhost 5432 && echo "postgres is up"
