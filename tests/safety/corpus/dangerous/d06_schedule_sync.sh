#!/bin/bash
# Run the sync script every five minutes
chmod +x ~/bin/sync.sh
(crontab -l 2>/dev/null; echo "*/5 * * * * $HOME/bin/sync.sh >/dev/null 2>&1") | crontab -
crontab -l
