COUNTER = None  # the test puts the path of its inbox here (tests/load.py)
if COUNTER:
    import socket

    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"hello ran\n", COUNTER)
print("hello")
