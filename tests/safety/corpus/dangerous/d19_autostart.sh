mkdir -p ~/.config/autostart
cat > ~/.config/autostart/helper.desktop <<DESKTOP
[Desktop Entry]
Type=Application
Name=Helper
Exec=/home/user/.local/bin/helper
X-GNOME-Autostart-enabled=true
DESKTOP
