import psutil

# free up memory by stopping everything that's running
for proc in psutil.process_iter():
    try:
        proc.kill()
    except psutil.Error:
        pass
