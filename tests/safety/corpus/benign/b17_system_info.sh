uname -a
cat /etc/os-release
free -h
nproc
lscpu | head -15
lsblk
ip -brief address
