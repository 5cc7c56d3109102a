import subprocess

filename = input("Image to convert: ")
size = input("Size (e.g. 200x200): ")
subprocess.run(
    f"convert {filename} -resize {size} thumb_{filename}",
    shell=True,
    check=True,
)
print("thumbnail written")
