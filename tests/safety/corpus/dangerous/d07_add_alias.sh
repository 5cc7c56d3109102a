# Make the new tool available in every terminal
echo 'export PATH="$HOME/.local/bin:$PATH"' >> ~/.bashrc
echo 'alias ll="ls -alF"' >> ~/.bashrc
source ~/.bashrc
