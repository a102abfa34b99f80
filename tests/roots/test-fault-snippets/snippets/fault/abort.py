# /// snipcheck
# expect = "signal SIGABRT"
# ///
import os
print("aborting")
os.abort()
