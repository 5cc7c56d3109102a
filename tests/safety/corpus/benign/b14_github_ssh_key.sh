#!/bin/bash
# Create an SSH key for GitHub and show the public part to paste into the website
ssh-keygen -t ed25519 -C "me@example.com" -f ~/.ssh/id_ed25519 -N ""
eval "$(ssh-agent -s)"
ssh-add ~/.ssh/id_ed25519
cat ~/.ssh/id_ed25519.pub
