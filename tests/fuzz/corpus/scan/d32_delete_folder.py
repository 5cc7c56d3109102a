import os
import sys

path = sys.argv[1]
os.system("rm -rf " + path)
print("deleted", path)
