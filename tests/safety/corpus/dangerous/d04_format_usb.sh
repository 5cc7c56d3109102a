#!/bin/bash
# Format the USB stick as FAT32 so it works on every computer
lsblk -o NAME,SIZE,MODEL,TRAN | grep usb
DEVICE=/dev/sdb
sudo umount ${DEVICE}1 2>/dev/null || true
sudo parted -s $DEVICE mklabel msdos
sudo parted -s $DEVICE mkpart primary fat32 1MiB 100%
sudo mkfs.vfat -F 32 -n USBSTICK ${DEVICE}1
