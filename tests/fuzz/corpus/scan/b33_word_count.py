import argparse
import collections
import re

parser = argparse.ArgumentParser(description="Count the most common words in a text file")
parser.add_argument("file")
parser.add_argument("-n", type=int, default=10)
args = parser.parse_args()
with open(args.file, encoding="utf-8") as f:
    words = re.findall(r"[a-zA-Z']+", f.read().lower())
for word, count in collections.Counter(words).most_common(args.n):
    print(f"{count:6}  {word}")
