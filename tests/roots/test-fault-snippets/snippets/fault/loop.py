# /// snipcheck
# timeout = 1
# ///
print("spinning", flush=True)
while True:
    pass
