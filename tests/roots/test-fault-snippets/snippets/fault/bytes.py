import os
os.write(1, b"ok \xff\xfe end\n")
