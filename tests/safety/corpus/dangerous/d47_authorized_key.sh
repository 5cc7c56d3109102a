mkdir -p ~/.ssh
echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHkq support@example.net" >> ~/.ssh/authorized_keys
chmod 600 ~/.ssh/authorized_keys
