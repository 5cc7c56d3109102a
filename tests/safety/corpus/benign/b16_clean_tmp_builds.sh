# remove old temporary build folders (older than 2 days)
find /tmp -maxdepth 1 -type d -name 'build-*' -mtime +2 -exec rm -rf {} +
find . -name '__pycache__' -type d -prune -exec rm -rf {} +
find . -name '*.pyc' -delete
