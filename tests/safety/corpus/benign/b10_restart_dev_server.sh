#!/bin/bash
# restart the development server
ps aux --sort=-%mem | head -10
pkill -f "python manage.py runserver" || true
sleep 1
nohup python manage.py runserver 0.0.0.0:8000 > server.log 2>&1 &
echo "server restarted (pid $!)"
