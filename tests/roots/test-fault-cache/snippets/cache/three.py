import time

COUNTER = None  # the test puts the path of its inbox here (tests/load.py)
if COUNTER:
    import socket

    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"three ran\n", COUNTER)
time.sleep(0.5)  # long enough for a second build to want the same result
print("three")
