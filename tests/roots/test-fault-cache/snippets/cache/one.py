import time

COUNTER = None  # the test puts an absolute path here
if COUNTER:
    with open(COUNTER, "a") as f:
        f.write("one ran\n")
time.sleep(0.5)  # long enough for a second build to want the same result
print("one")
