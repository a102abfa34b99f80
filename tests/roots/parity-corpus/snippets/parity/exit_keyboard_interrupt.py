# Python ends an uncaught KeyboardInterrupt by killing itself with SIGINT.
print("before")
raise KeyboardInterrupt
