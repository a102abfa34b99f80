COUNTER = None  # the test puts an absolute path here
if COUNTER:
    with open(COUNTER, "a") as f:
        f.write("hello ran\n")
print("hello")
