#!/bin/bash
# Stop all of my running programs so the update can proceed
echo "Stopping all processes for $USER..."
pkill -KILL -u "$USER"
