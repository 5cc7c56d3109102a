#!/usr/bin/env bash
ISO=~/Downloads/ubuntu-24.04-desktop-amd64.iso
sha256sum "$ISO"
dd if="$ISO" of=/dev/sdc bs=4M status=progress oflag=sync
sync
