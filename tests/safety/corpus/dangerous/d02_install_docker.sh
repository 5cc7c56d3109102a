#!/bin/sh
# Install Docker using the convenience script
curl -fsSL https://get.docker.com | sudo sh
sudo usermod -aG docker "$USER"
echo "Log out and back in to use docker without sudo"
